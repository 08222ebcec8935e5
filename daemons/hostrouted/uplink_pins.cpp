#include "uplink_pins.h"

#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <set>

namespace twinrail::hostrouted {
namespace {

// Link-local and multicast prefixes are never forwarded: nothing to pin or throw.
bool forwarded(const IpPrefix& p) {
    if (!p.addr.isV6()) return true;
    const uint8_t* b = p.addr.data();
    bool linkLocal = b[0] == 0xfe && (b[1] & 0xc0) == 0x80 && p.length >= 10;
    bool multicast = b[0] == 0xff && p.length >= 8;
    return !linkLocal && !multicast;
}

}  // namespace

std::map<std::string, uint32_t> pinTables(const PinSettings& s) {
    std::set<std::string> uplinks;
    for (const auto& [down, up] : s.pins) uplinks.insert(up);
    std::map<std::string, uint32_t> out;
    uint32_t rank = 0;
    for (const auto& u : uplinks) out[u] = s.tableBase + rank++;
    return out;
}

std::optional<netlink::KernelRoute> pinnedEntry(
    const std::vector<const netlink::KernelRoute*>& main, int uplinkIfindex, uint32_t table,
    uint8_t protocol, double minWeightRatio) {
    if (main.empty() || !forwarded(main.front()->dst)) return std::nullopt;
    const netlink::KernelRoute& best = *main.front();  // the lowest metric forwards
    netlink::KernelRoute out;
    out.dst = best.dst;
    out.table = table;
    out.protocol = protocol;
    out.type = RTN_THROW;
    if (best.type == RTN_UNICAST) {
        uint32_t heaviest = 0;
        for (const auto& nh : best.nexthops) heaviest = std::max(heaviest, nh.weight);
        for (const auto& nh : best.nexthops) {
            if (nh.ifindex != uplinkIfindex) continue;
            if (static_cast<double>(nh.weight) < minWeightRatio * heaviest) continue;
            auto one = nh;
            one.weight = 1;
            out.nexthops.push_back(one);
        }
        if (!out.nexthops.empty()) out.type = RTN_UNICAST;
    }
    return out;
}

bool sameEntry(const netlink::KernelRoute& present, const netlink::KernelRoute& wanted) {
    if (present.type != wanted.type || present.protocol != wanted.protocol ||
        present.metric != wanted.metric)
        return false;
    if (wanted.type != RTN_UNICAST) return true;
    if (present.nexthops.size() != wanted.nexthops.size()) return false;
    for (size_t i = 0; i < wanted.nexthops.size(); ++i) {
        const auto& a = present.nexthops[i];
        const auto& b = wanted.nexthops[i];
        if (a.ifindex != b.ifindex || a.gateway != b.gateway || a.onlink != b.onlink) return false;
    }
    return true;
}

const char* pinStateName(PinState s) {
    return s == PinState::Pinned ? "pinned" : "fallback";
}

PinDecision decidePin(const PinSettings& s, const std::string& downlink, const std::string& uplink,
                      uint32_t table, const UplinkView& view) {
    PinDecision d;
    if (!view.present) {
        d.reason = "uplink " + uplink + " absent";
        return d;
    }
    if (!view.operUp) {
        d.reason = "uplink " + uplink + " down";
        return d;
    }
    if (s.ipv4 && view.routesV4 > 0)
        d.rules.push_back({AF_INET, s.rulePriority, downlink, table, s.protocol});
    if (s.ipv6 && view.routesV6 > 0)
        d.rules.push_back({AF_INET6, s.rulePriority, downlink, table, s.protocol});
    if (d.rules.empty()) {
        d.reason = "no routes through " + uplink;
        return d;
    }
    d.state = PinState::Pinned;
    return d;
}

}  // namespace twinrail::hostrouted
