// Hosts a leaf hears on one of its host ports but does not route, because their address
// is outside that port's subnets: what a NIC cabled to another rail's leaf (or into a
// port of the wrong group) looks like from the switch. twinrail verify reads them from
// STATE_DB to say where a NIC's cable really ends. Bounded; an entry goes when its
// neighbor does, or the port goes away. Pure.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "twinrail/common/ip.h"

namespace twinrail::hostrouted {

struct ForeignHost {
    int ifindex = 0;
    std::optional<MacAddr> mac;
    std::chrono::steady_clock::time_point since{};
};

class ForeignHosts {
  public:
    explicit ForeignHosts(size_t cap = 1024) : cap_(cap) {}
    // Returns whether the entry changed (new, other port or MAC).
    bool seen(const IpAddr& ip, int ifindex, const std::optional<MacAddr>& mac,
              std::chrono::steady_clock::time_point now);
    bool gone(const IpAddr& ip);
    std::vector<IpAddr> portGone(int ifindex);  // the entries that went
    const ForeignHost* find(const IpAddr& ip) const;
    std::vector<IpAddr> keys() const;
    size_t size() const { return hosts_.size(); }
    uint64_t dropped() const { return dropped_; }  // over the cap, not recorded

  private:
    size_t cap_;
    std::map<IpAddr, ForeignHost> hosts_;
    uint64_t dropped_ = 0;
};

}  // namespace twinrail::hostrouted
