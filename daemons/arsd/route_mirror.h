// What the datapath should hold for one destination prefix, from the kernel routes arsd
// follows (main and local tables). Pure: no I/O. The datapath matches a packet's
// destination by longest prefix, so a prefix the kernel must keep handling (an address of
// the switch, a connected subnet, a blackhole, a route over a port ARS may not use) is
// mirrored as an entry with no next hops, which the program leaves to the kernel; only a
// prefix the kernel no longer has is removed. Otherwise a shorter ARS route (a default,
// say) would match packets the kernel sends elsewhere.
#pragma once

#include <optional>
#include <set>
#include <vector>

#include "twinrail/ars/config.h"
#include "twinrail/ars/datapath.h"
#include "twinrail/netlink/route_watch.h"

namespace twinrail::arsd {

inline constexpr uint32_t kMainTable = 254;   // RT_TABLE_MAIN
inline constexpr uint32_t kLocalTable = 255;  // RT_TABLE_LOCAL

// Which multipath routes ARS takes (ARS_PROFILE ars_nhg_path_selector_mode, config.h).
struct MirrorPolicy {
    ars::NhgSelector selector = ars::NhgSelector::Interface;
    std::set<int> eligible;          // Interface, Nexthop: the ARS_INTERFACES ports' ifindexes
    std::vector<IpPrefix> nexthops;  // Nexthop: ARS_NEXTHOPS, host prefixes
    bool ipv4 = true, ipv6 = true;   // ARS_PROFILE ipv4_enable, ipv6_enable
    bool operator==(const MirrorPolicy&) const = default;
};

// nullopt: the kernel has no route to `dst` in those tables (remove it). Else the next
// hops to mirror, empty when the kernel must forward it itself.
std::optional<std::vector<ars::PathNexthop>> mirrorFor(const netlink::RouteFeed::Routes& routes,
                                                       const IpPrefix& dst,
                                                       const MirrorPolicy& policy);

}  // namespace twinrail::arsd
