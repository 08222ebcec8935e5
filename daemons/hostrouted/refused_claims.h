// Claims hostrouted refused: a neighbor heard on one port for an address that is bound to
// another, held alive by a host on another port, frozen after too many moves, or heard
// on a port whose bindings do not include it. Each (address, port) is one entry, so a
// flood of claims costs one entry per pair and one log line per new pair; the table is
// capped, and an entry goes when the claiming neighbor or its port does. STATE_DB shows it
// (HOST_CLAIM_TABLE|<ip>|<port>), and twinrail verify reports it as a claim, not a cabling
// fault. Pure: time comes in as an argument.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "twinrail/common/ip.h"

namespace twinrail::hostrouted {

struct RefusedClaim {
    std::optional<MacAddr> mac;
    std::string reason;  // bound-elsewhere, not-bound-here, duplicate, frozen, over-cap
    uint64_t count = 0;
    std::chrono::steady_clock::time_point first{}, last{};
};

class RefusedClaims {
  public:
    using Key = std::pair<IpAddr, int>;  // address, ifindex of the claiming port
    explicit RefusedClaims(size_t cap = 4096) : cap_(cap) {}

    // Returns true when the entry is new (the caller logs it once) or its MAC or reason
    // changed (the caller republishes it).
    bool refused(const IpAddr& ip, int ifindex, const std::optional<MacAddr>& mac,
                 std::string reason, std::chrono::steady_clock::time_point now);
    bool gone(const IpAddr& ip, int ifindex);
    std::vector<Key> portGone(int ifindex);
    std::vector<Key> expire(std::chrono::steady_clock::time_point lastBefore);  // the removed
    const RefusedClaim* find(const Key& key) const;
    std::vector<Key> keys() const;
    size_t size() const { return claims_.size(); }
    uint64_t total() const { return total_; }      // refusals counted, all entries
    uint64_t dropped() const { return dropped_; }  // new pairs over the cap, not recorded

  private:
    size_t cap_;
    std::map<Key, RefusedClaim> claims_;
    uint64_t total_ = 0;
    uint64_t dropped_ = 0;
};

}  // namespace twinrail::hostrouted
