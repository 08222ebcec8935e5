#include "acl_pins.h"

#include <linux/neighbour.h>

#include <algorithm>
#include <set>

namespace twinrail::hostrouted {
namespace {

// Destinations never pinned, beside the leaf's own: link-local and multicast (ND, BGP's
// link-local sessions' neighbours, IGMP) go where routing and the CPU trap send them.
const std::vector<IpPrefix>& alwaysLocal() {
    static const std::vector<IpPrefix> kAlways = {*IpPrefix::parse("fe80::/10"),
                                                  *IpPrefix::parse("ff00::/8"),
                                                  *IpPrefix::parse("224.0.0.0/4"),
                                                  *IpPrefix::parse("169.254.0.0/16")};
    return kAlways;
}

redis::Fields localRule(const IpPrefix& p, int priority) {
    return {{"PRIORITY", std::to_string(priority)},
            {p.addr.isV4() ? "DST_IP" : "DST_IPV6", p.str()},
            {"PACKET_ACTION", "FORWARD"}};
}

AclPinView pinOf(const std::string& uplink, const std::map<std::string, AclUplink>& uplinks) {
    auto u = uplinks.find(uplink);
    if (u == uplinks.end()) return {PinState::Fallback, "uplink " + uplink + " not present", ""};
    if (!u->second.operUp) return {PinState::Fallback, "uplink " + uplink + " down", ""};
    if (!u->second.nextHop) {
        return {PinState::Fallback, "no next hop known on uplink " + uplink + " yet", ""};
    }
    return {PinState::Pinned, "", u->second.nextHop->str() + "@" + uplink};
}

}  // namespace

IpPrefix networkOf(const IpPrefix& prefix) {
    std::array<uint8_t, 16> bytes{};
    std::copy_n(prefix.addr.data(), prefix.addr.size(), bytes.begin());
    const int len = std::clamp(prefix.length, 0, prefix.addr.maxPrefixLen());
    for (size_t i = 0; i < prefix.addr.size(); ++i) {
        const int bitsHere = std::clamp(len - static_cast<int>(i) * 8, 0, 8);
        bytes[i] &= static_cast<uint8_t>(0xff00 >> bitsHere);
    }
    IpPrefix out;
    out.addr = prefix.addr.isV4() ? IpAddr::v4(bytes.data()) : IpAddr::v6(bytes.data());
    out.length = len;
    return out;
}

AclPinPlan aclPinPlan(const std::map<std::string, std::string>& pins,
                      const std::map<std::string, AclUplink>& uplinks,
                      const std::vector<IpPrefix>& local) {
    AclPinPlan plan;
    std::set<IpPrefix> networks;
    for (const auto& p : local) networks.insert(networkOf(p));
    for (const auto& p : alwaysLocal()) networks.insert(p);
    int n = 0;
    for (const auto& p : networks) {
        ++n;
        plan.rules["LOCAL_" + std::to_string(n)] = localRule(p, kLocalRulePriority - n);
    }
    for (const auto& [downlink, uplink] : pins) {
        AclPinView view = pinOf(uplink, uplinks);
        if (view.state == PinState::Pinned) {
            plan.rules["PIN_" + downlink] = {{"PRIORITY", std::to_string(kPinRulePriority)},
                                             {"IN_PORTS", downlink},
                                             {"IP_TYPE", "IP"},
                                             {"REDIRECT_ACTION", view.redirect}};
        }
        plan.pins[downlink] = std::move(view);
    }
    return plan;
}

std::optional<IpAddr> aclNextHop(const std::vector<UplinkNeighbor>& neighbors) {
    std::optional<IpAddr> best;
    for (const auto& n : neighbors) {
        if (!n.ip.isV6() || !n.ip.isLinkLocal()) continue;
        if ((n.state & (NUD_FAILED | NUD_INCOMPLETE)) != 0 || n.state == 0) continue;
        if (!best || n.ip < *best) best = n.ip;
    }
    return best;
}

}  // namespace twinrail::hostrouted
