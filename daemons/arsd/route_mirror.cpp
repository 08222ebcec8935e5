#include "route_mirror.h"

namespace twinrail::arsd {

namespace {

constexpr uint8_t kUnicast = 1;  // RTN_UNICAST

// The routes of `table` to exactly `dst`, lowest metric first (the key order).
std::vector<const netlink::KernelRoute*> routesTo(const netlink::RouteFeed::Routes& routes,
                                                  uint32_t table, const IpPrefix& dst) {
    std::vector<const netlink::KernelRoute*> out;
    netlink::RouteKey from{table, dst, 0, 0};
    for (auto it = routes.lower_bound(from);
         it != routes.end() && it->first.table == table && it->first.dst == dst; ++it)
        out.push_back(&it->second);
    return out;
}

bool listed(const std::vector<IpPrefix>& list, const IpAddr& gateway) {
    for (const auto& p : list)
        if (p.addr.family() == gateway.family() && p.contains(gateway)) return true;
    return false;
}

// Whether ARS may steer over this next hop, by the selector (config.h NhgSelector).
bool eligible(const MirrorPolicy& policy, const netlink::WeightedNexthop& nh) {
    if (policy.selector == ars::NhgSelector::Global) return true;
    if (policy.eligible.count(nh.ifindex) == 0) return false;
    return policy.selector != ars::NhgSelector::Nexthop || listed(policy.nexthops, nh.gateway);
}

}  // namespace

std::optional<std::vector<ars::PathNexthop>> mirrorFor(const netlink::RouteFeed::Routes& routes,
                                                       const IpPrefix& dst,
                                                       const MirrorPolicy& policy) {
    auto local = routesTo(routes, kLocalTable, dst);
    auto main = routesTo(routes, kMainTable, dst);
    if (local.empty() && main.empty()) return std::nullopt;
    std::vector<ars::PathNexthop> none;
    // The kernel looks in the local table first: the switch's own addresses stay its own.
    if (!local.empty()) return none;
    const auto& best = *main.front();
    // Two routes at the best metric differ by device (connected routes): the kernel's.
    if (main.size() > 1 && main[1]->metric == best.metric) return none;
    if (best.type != kUnicast || best.nexthops.empty()) return none;
    if (dst.addr.isV4() ? !policy.ipv4 : !policy.ipv6) return none;
    std::vector<ars::PathNexthop> out;
    for (const auto& nh : best.nexthops) {
        // No gateway: a connected route; else the selector decides (a port outside
        // ARS_INTERFACES, an address outside ARS_NEXTHOPS: the kernel's).
        if (nh.gateway.family() == 0 || !eligible(policy, nh)) return none;
        ars::PathNexthop p;
        p.ifindex = nh.ifindex;
        p.gateway = nh.gateway;
        p.weight = nh.weight;
        out.push_back(p);
    }
    return out;
}

}  // namespace twinrail::arsd
