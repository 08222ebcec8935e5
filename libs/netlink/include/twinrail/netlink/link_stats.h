// One-shot reads of kernel state that pathqd samples on its period: per-link counters,
// root qdisc backlog/drops/shaper rate, link speed, and the weights of multipath routes
// as installed. Each call is one netlink dump on a private socket (a few hundred
// microseconds for tens of ports); failures throw std::runtime_error naming the request.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "twinrail/common/ip.h"

namespace twinrail::netlink {

struct LinkCounters {
    int ifindex = 0;
    std::string name;
    bool operUp = false;
    uint64_t txBytes = 0;
    uint64_t txPackets = 0;
    uint64_t txDropped = 0;
};

struct QdiscStats {
    int ifindex = 0;
    std::string kind;  // "tbf", "fq_codel", "noqueue", ...
    uint64_t backlogBytes = 0;
    uint32_t qlen = 0;
    uint64_t drops = 0;               // 32-bit in the kernel: wraps
    std::optional<uint64_t> rateBps;  // shaping rate of a root tbf, bits per second
};

struct WeightedNexthop {
    int ifindex = 0;
    IpAddr gateway;
    uint32_t weight = 1;
};

struct RouteWeights {
    IpPrefix dst;
    uint32_t nhid = 0;  // 0 when the route carries its nexthops inline
    std::vector<WeightedNexthop> nexthops;
};

std::vector<LinkCounters> dumpLinkCounters();
std::vector<QdiscStats> dumpRootQdiscs();
// Speed from the driver (ethtool), or nullopt when the driver reports none.
std::optional<uint64_t> linkSpeedBps(const std::string& ifname);
// Main-table routes of `family` written by `protocol` (186 = BGP via zebra) with their
// nexthops resolved through nexthop objects where zebra uses them.
std::vector<RouteWeights> dumpRouteWeights(int family, uint8_t protocol);

}  // namespace twinrail::netlink
