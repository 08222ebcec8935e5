// One-shot reads of kernel state that pathqd samples on its period: per-link counters,
// root qdisc backlog/drops/shaper rate, link speed, and the weights of multipath routes
// as installed. Each call is one netlink dump on a private socket (a few hundred
// microseconds for tens of ports); failures throw std::runtime_error naming the request.
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
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
    bool root = false;  // attached at the device's root (else a child of another qdisc)
    std::string kind;   // "tbf", "fq_codel", "noqueue", ...
    uint64_t backlogBytes = 0;
    uint32_t qlen = 0;
    uint64_t drops = 0;               // 32-bit in the kernel: wraps
    std::optional<uint64_t> rateBps;  // shaping rate of a root tbf, bits per second
    // Packets this qdisc marked CE instead of dropping, from its TCA_STATS_APP extended
    // stats: red, choke and sfb "marked", codel and fq_codel ecn_mark + ce_mark (the
    // ce_threshold marks), pie and fq_pie ecn_mark. 32-bit in the kernel: wraps. Unset
    // for every other kind (it cannot mark).
    std::optional<uint64_t> ecnMarks;
};

struct WeightedNexthop {
    int ifindex = 0;
    IpAddr gateway;  // of either family: FRR routes IPv4 via IPv6 link-locals (RFC 5549)
    uint32_t weight = 1;
    bool onlink = false;  // RTNH_F_ONLINK: FRR's 169.254.0.1 next hops
    // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads defaulted <=>
    auto operator<=>(const WeightedNexthop&) const = default;
};

struct RouteWeights {
    IpPrefix dst;
    uint32_t nhid = 0;  // 0 when the route carries its nexthops inline
    std::vector<WeightedNexthop> nexthops;
};

std::vector<LinkCounters> dumpLinkCounters();
// Every qdisc of every device, roots and their children.
std::vector<QdiscStats> dumpQdiscs();
// Speed from the driver (ethtool), or nullopt when the driver reports none.
std::optional<uint64_t> linkSpeedBps(const std::string& ifname);
// Main-table routes of `family` written by `protocol` (186 = BGP via zebra) with their
// nexthops resolved through nexthop objects where zebra uses them.
std::vector<RouteWeights> dumpRouteWeights(int family, uint8_t protocol);

// The decoders behind the dumps, one reply message each, pure so that they can be fuzzed
// and unit-tested on captured messages. `msg` must point to at least msg->nlmsg_len
// readable bytes, with nlmsg_len >= sizeof(nlmsghdr): what the dump loop (and NLMSG_OK)
// guarantees. Nothing past nlmsg_len is read. Each returns nullopt for a message of
// another type, one too short for its fixed header, or one the dump leaves out.

// RTM_NEWLINK: name, IFF_RUNNING and the tx counters of IFLA_STATS64.
std::optional<LinkCounters> decodeLinkCounters(const nlmsghdr* msg);
// RTM_NEWQDISC, root or child: TCA_STATS2 queue stats, a tbf's rate, the ECN marks.
std::optional<QdiscStats> decodeQdisc(const nlmsghdr* msg);

// A nexthop object (RTM_NEWNEXTHOP): a plain nexthop, or a group of other objects.
struct NexthopObject {
    uint32_t id = 0;
    WeightedNexthop single;
    std::vector<std::pair<uint32_t, uint32_t>> group;  // member id, weight 1..256
};
using NexthopObjects = std::map<uint32_t, NexthopObject>;
// nullopt also when the object has no NHA_ID.
std::optional<NexthopObject> decodeNexthop(const nlmsghdr* msg);

// RTM_NEWROUTE of `protocol` in the main table (others: nullopt), its nexthops inline
// (RTA_MULTIPATH, or RTA_OIF/RTA_GATEWAY) or through `objects` (RTA_NH_ID; nullopt when
// the id is not there). `family` gives the family of a route without RTA_DST (default).
std::optional<RouteWeights> decodeRouteWeights(const nlmsghdr* msg, int family, uint8_t protocol,
                                               const NexthopObjects& objects);

}  // namespace twinrail::netlink
