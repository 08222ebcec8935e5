#include "steer_policy.h"

#include <algorithm>

namespace twinrail::planesteer {

void SteerPolicy::addPeer(const IpAddr& peer, Clock::time_point now) {
    // A new peer gets the benefit of the doubt for `misses` intervals on every port.
    peers_.emplace(peer, Peer{std::vector<Clock::time_point>(ports_, now),
                              std::vector<Clock::time_point>(ports_), false, now});
}

void SteerPolicy::removePeer(const IpAddr& peer) {
    peers_.erase(peer);
}

void SteerPolicy::answered(const IpAddr& peer, size_t port, Clock::time_point now) {
    auto it = peers_.find(peer);
    if (it != peers_.end() && port < ports_) it->second.lastAnswer[port] = now;
}

size_t SteerPolicy::notified(const IpPrefix& subject, size_t port, Clock::time_point now) {
    if (port >= ports_) return 0;
    size_t named = 0;
    // Peers are ordered by family, then address: a prefix's (host bits clear, as the wire
    // has them) are one run from its own address on.
    for (auto it = peers_.lower_bound(subject.addr);
         it != peers_.end() && subject.contains(it->first); ++it) {
        it->second.notifiedAt[port] = now;
        ++named;
    }
    return named;
}

void SteerPolicy::setActive(const IpAddr& peer, bool active, Clock::time_point now) {
    auto it = peers_.find(peer);
    if (it == peers_.end() || it->second.active == active) return;
    it->second.active = active;
    it->second.speedSince = now;
}

void SteerPolicy::setPortUp(size_t port, bool up, Clock::time_point now) {
    if (up && !portUp(port)) upSince_[port] = now;
    up_[port] = up;
}

bool SteerPolicy::silent(const Peer& peer, size_t port, Clock::time_point now) const {
    const auto& last = peer.lastAnswer;
    // A port that came back is silent until its plane answers: its carrier is up before
    // its leaf has routes (a restarted leaf's BGP takes seconds), and the bond would hash
    // flows into it at once.
    if (auto u = upSince_.find(port); u != upSince_.end() && u->second > last[port]) return true;
    // Notified lost there: an answer counts once it is newer than one that was already
    // on its way when the notice came (an active peer's probe interval).
    if (peer.notifiedAt[port] != Clock::time_point{} &&
        last[port] < peer.notifiedAt[port] + p_.activeInterval)
        return true;
    auto interval = peer.active ? p_.activeInterval : p_.interval;
    return now - std::max(last[port], peer.speedSince) > p_.misses * interval;
}

std::optional<size_t> SteerPolicy::pinFor(const IpAddr& peer, Clock::time_point now) const {
    auto it = peers_.find(peer);
    if (it == peers_.end()) return std::nullopt;
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
    for (const auto& [ip, v] : peers_) out.push_back(ip);
    return out;
}

bool remotePeer(const IpAddr& dst, const IpPrefix& bondSubnet, const IpPrefix& fabric,
                const IpAddr& gateway) {
    return fabric.contains(dst) && !bondSubnet.contains(dst) && dst != gateway;
}

}  // namespace twinrail::planesteer
