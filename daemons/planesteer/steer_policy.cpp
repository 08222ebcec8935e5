#include "steer_policy.h"

namespace twinrail::planesteer {

void SteerPolicy::addPeer(const IpAddr& peer, Clock::time_point now) {
    // A new peer gets the benefit of the doubt for `misses` intervals on every port.
    lastAnswer_.emplace(peer, std::vector<Clock::time_point>(ports_, now));
}

void SteerPolicy::removePeer(const IpAddr& peer) {
    lastAnswer_.erase(peer);
}

void SteerPolicy::answered(const IpAddr& peer, size_t port, Clock::time_point now) {
    auto it = lastAnswer_.find(peer);
    if (it != lastAnswer_.end() && port < ports_) it->second[port] = now;
}

void SteerPolicy::setPortUp(size_t port, bool up, Clock::time_point now) {
    if (up && !portUp(port)) upSince_[port] = now;  // judge it afresh once it is back
    up_[port] = up;
}

bool SteerPolicy::silent(const std::vector<Clock::time_point>& last, size_t port,
                         Clock::time_point now) const {
    Clock::time_point since = last[port];
    if (auto u = upSince_.find(port); u != upSince_.end() && u->second > since) since = u->second;
    return now - since > p_.misses * p_.interval;
}

std::optional<size_t> SteerPolicy::pinFor(const IpAddr& peer, Clock::time_point now) const {
    auto it = lastAnswer_.find(peer);
    if (it == lastAnswer_.end()) return std::nullopt;
    std::vector<size_t> answering;
    size_t upCount = 0;
    for (size_t p = 0; p < ports_; ++p) {
        if (!portUp(p)) continue;  // the bond already keeps off a port without carrier
        ++upCount;
        if (!silent(it->second, p, now)) answering.push_back(p);
    }
    if (upCount < 2 || answering.empty() || answering.size() == upCount) return std::nullopt;
    return answering.front();
}

std::vector<IpAddr> SteerPolicy::peers() const {
    std::vector<IpAddr> out;
    for (const auto& [ip, v] : lastAnswer_) out.push_back(ip);
    return out;
}

}  // namespace twinrail::planesteer
