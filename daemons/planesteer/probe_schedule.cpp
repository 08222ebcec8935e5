#include "probe_schedule.h"

#include <algorithm>

namespace twinrail::planesteer {

void ProbeSchedule::traffic(const IpAddr& peer, Clock::time_point now) {
    lastTraffic_[peer] = now;
}

void ProbeSchedule::remove(const IpAddr& peer) {
    lastTraffic_.erase(peer);
    lastProbe_.erase(peer);
    active_.erase(peer);
}

std::set<IpAddr> ProbeSchedule::chooseActive(const std::vector<IpAddr>& peers,
                                             Clock::time_point now) const {
    std::vector<std::pair<Clock::time_point, IpAddr>> recent;
    for (const auto& peer : peers) {
        auto t = lastTraffic_.find(peer);
        if (t != lastTraffic_.end() && now - t->second <= p_.activeWindow)
            recent.emplace_back(t->second, peer);
    }
    if (recent.size() > p_.maxActive) {  // the most recently seen keep the fast probes
        auto cut = recent.begin() + static_cast<std::ptrdiff_t>(p_.maxActive);
        std::nth_element(recent.begin(), cut, recent.end(),
                         [](const auto& a, const auto& b) { return a.first > b.first; });
        recent.erase(cut, recent.end());
    }
    std::set<IpAddr> out;
    for (const auto& [t, peer] : recent) out.insert(peer);
    return out;
}

ProbeSchedule::Round ProbeSchedule::round(const std::vector<IpAddr>& peers, Clock::time_point now,
                                          bool fast) {
    Round r;
    std::set<IpAddr> next = fast ? chooseActive(peers, now) : std::set<IpAddr>{};
    for (const auto& peer : next)
        if (active_.count(peer) == 0) r.nowActive.push_back(peer);
    for (const auto& peer : active_)
        if (next.count(peer) == 0) r.nowIdle.push_back(peer);
    active_ = std::move(next);
    // A probe is due once its interval has passed, less half a fast tick: rounds run on a
    // timer, and a peer due a moment after this round must not wait a whole tick more.
    for (const auto& peer : peers) {
        auto interval = active_.count(peer) != 0 ? p_.activeInterval : p_.idleInterval;
        auto last = lastProbe_.find(peer);
        if (last != lastProbe_.end() && now - last->second < interval - p_.activeInterval / 2)
            continue;
        lastProbe_[peer] = now;
        r.probe.push_back(peer);
    }
    // Forget what belongs to peers no longer known (the policy removed them).
    if (lastProbe_.size() > peers.size() || lastTraffic_.size() > 2 * peers.size() + 64) {
        std::set<IpAddr> known(peers.begin(), peers.end());
        std::erase_if(lastProbe_, [&known](const auto& e) { return known.count(e.first) == 0; });
        std::erase_if(lastTraffic_, [&known, now, this](const auto& e) {
            return known.count(e.first) == 0 && now - e.second > p_.activeWindow;
        });
    }
    return r;
}

}  // namespace twinrail::planesteer
