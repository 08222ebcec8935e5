// A bounded set of peers, least recently seen first out. planesteer keeps two: on-link
// peers (the bond's neighbor table) and peers on other rails (sampled from the NIC's own
// traffic). Either can be flooded by others (a host spraying spoofed sources makes us
// answer, and so sample, thousands of addresses), so each has its own cap: a flood of one
// kind never pushes out the other kind, and within a kind it pushes out the peers seen
// longest ago, which are the least likely to carry traffic. Pure: time comes in.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <vector>

#include "steer_policy.h"
#include "twinrail/common/ip.h"

namespace twinrail::planesteer {

class PeerBudget {
  public:
    explicit PeerBudget(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

    struct Touched {
        bool added = false;             // new in the set
        std::optional<IpAddr> evicted;  // pushed out to make room
    };
    // `peer` was seen at `now`: refreshed, or added (evicting the least recently seen).
    Touched touch(const IpAddr& peer, Clock::time_point now);
    bool remove(const IpAddr& peer);
    // A smaller cap evicts at once; returns who went.
    std::vector<IpAddr> setCapacity(size_t capacity);

    bool contains(const IpAddr& peer) const { return where_.count(peer) > 0; }
    std::vector<IpAddr> seenBefore(Clock::time_point cutoff) const;  // oldest first
    size_t size() const { return where_.size(); }
    size_t capacity() const { return capacity_; }
    uint64_t evictions() const { return evictions_; }

  private:
    struct Entry {
        IpAddr peer;
        Clock::time_point seen;
    };
    IpAddr evictOldest();
    size_t capacity_;
    std::list<Entry> byAge_;  // least recently seen first
    std::map<IpAddr, std::list<Entry>::iterator> where_;
    uint64_t evictions_ = 0;
};

}  // namespace twinrail::planesteer
