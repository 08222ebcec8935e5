#include "refused_claims.h"

namespace twinrail::hostrouted {

bool RefusedClaims::refused(const IpAddr& ip, int ifindex, const std::optional<MacAddr>& mac,
                            std::string reason, std::chrono::steady_clock::time_point now) {
    ++total_;
    Key key{ip, ifindex};
    auto it = claims_.find(key);
    if (it == claims_.end()) {
        if (claims_.size() >= cap_) {
            ++dropped_;
            return false;
        }
        claims_.emplace(key, RefusedClaim{mac, std::move(reason), 1, now, now});
        return true;
    }
    RefusedClaim& c = it->second;
    ++c.count;
    c.last = now;
    bool changed = c.mac != mac || c.reason != reason;
    c.mac = mac;
    c.reason = std::move(reason);
    return changed;
}

bool RefusedClaims::gone(const IpAddr& ip, int ifindex) {
    return claims_.erase(Key{ip, ifindex}) > 0;
}

std::vector<RefusedClaims::Key> RefusedClaims::portGone(int ifindex) {
    std::vector<Key> out;
    for (auto it = claims_.begin(); it != claims_.end();) {
        if (it->first.second == ifindex) {
            out.push_back(it->first);
            it = claims_.erase(it);
        } else {
            ++it;
        }
    }
    return out;
}

std::vector<RefusedClaims::Key> RefusedClaims::expire(
    std::chrono::steady_clock::time_point lastBefore) {
    std::vector<Key> out;
    for (auto it = claims_.begin(); it != claims_.end();) {
        if (it->second.last < lastBefore) {
            out.push_back(it->first);
            it = claims_.erase(it);
        } else {
            ++it;
        }
    }
    return out;
}

const RefusedClaim* RefusedClaims::find(const Key& key) const {
    auto it = claims_.find(key);
    return it == claims_.end() ? nullptr : &it->second;
}

std::vector<RefusedClaims::Key> RefusedClaims::keys() const {
    std::vector<Key> out;
    out.reserve(claims_.size());
    for (const auto& [k, c] : claims_) out.push_back(k);
    return out;
}

}  // namespace twinrail::hostrouted
