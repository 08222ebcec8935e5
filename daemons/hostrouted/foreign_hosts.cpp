#include "foreign_hosts.h"

namespace twinrail::hostrouted {

bool ForeignHosts::seen(const IpAddr& ip, int ifindex, const std::optional<MacAddr>& mac,
                        std::chrono::steady_clock::time_point now) {
    auto it = hosts_.find(ip);
    if (it != hosts_.end()) {
        if (it->second.ifindex == ifindex && it->second.mac == mac) return false;
        it->second = ForeignHost{ifindex, mac, now};
        return true;
    }
    if (hosts_.size() >= cap_) {
        ++dropped_;
        return false;
    }
    hosts_.emplace(ip, ForeignHost{ifindex, mac, now});
    return true;
}

bool ForeignHosts::gone(const IpAddr& ip) {
    return hosts_.erase(ip) > 0;
}

std::vector<IpAddr> ForeignHosts::portGone(int ifindex) {
    std::vector<IpAddr> out;
    for (auto it = hosts_.begin(); it != hosts_.end();) {
        if (it->second.ifindex == ifindex) {
            out.push_back(it->first);
            it = hosts_.erase(it);
        } else {
            ++it;
        }
    }
    return out;
}

const ForeignHost* ForeignHosts::find(const IpAddr& ip) const {
    auto it = hosts_.find(ip);
    return it == hosts_.end() ? nullptr : &it->second;
}

std::vector<IpAddr> ForeignHosts::keys() const {
    std::vector<IpAddr> out;
    out.reserve(hosts_.size());
    for (const auto& [ip, h] : hosts_) out.push_back(ip);
    return out;
}

}  // namespace twinrail::hostrouted
