#include "peer_budget.h"

namespace twinrail::planesteer {

PeerBudget::Touched PeerBudget::touch(const IpAddr& peer, Clock::time_point now) {
    Touched t;
    if (auto it = where_.find(peer); it != where_.end()) {
        it->second->seen = now;
        byAge_.splice(byAge_.end(), byAge_, it->second);
        return t;
    }
    if (where_.size() >= capacity_) t.evicted = evictOldest();
    byAge_.push_back({peer, now});
    where_[peer] = std::prev(byAge_.end());
    t.added = true;
    return t;
}

bool PeerBudget::remove(const IpAddr& peer) {
    auto it = where_.find(peer);
    if (it == where_.end()) return false;
    byAge_.erase(it->second);
    where_.erase(it);
    return true;
}

std::vector<IpAddr> PeerBudget::setCapacity(size_t capacity) {
    capacity_ = capacity < 1 ? 1 : capacity;
    std::vector<IpAddr> gone;
    while (where_.size() > capacity_) gone.push_back(evictOldest());
    return gone;
}

std::vector<IpAddr> PeerBudget::seenBefore(Clock::time_point cutoff) const {
    std::vector<IpAddr> out;
    for (const auto& e : byAge_) {
        if (e.seen >= cutoff) break;  // in order of last seen
        out.push_back(e.peer);
    }
    return out;
}

IpAddr PeerBudget::evictOldest() {
    IpAddr oldest = byAge_.front().peer;
    where_.erase(oldest);
    byAge_.pop_front();
    ++evictions_;
    return oldest;
}

}  // namespace twinrail::planesteer
