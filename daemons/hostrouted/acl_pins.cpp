#include "acl_pins.h"

#include <linux/neighbour.h>

#include <algorithm>
#include <set>

namespace twinrail::hostrouted {
namespace {

// Destinations never pinned, beside the leaf's own: link-local and multicast (ND, BGP's
// link-local sessions' neighbours, IGMP) go where routing and the CPU trap send them.
const std::vector<IpPrefix>& alwaysLocal() {
    static const std::vector<IpPrefix> kAlways = {
        *IpPrefix::parse("fe80::/10"), *IpPrefix::parse("ff00::/8"),
        *IpPrefix::parse("224.0.0.0/4"), *IpPrefix::parse("169.254.0.0/16")};
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

bool inside(const IpPrefix& outer, const IpPrefix& inner) {
    return outer.addr.family() == inner.addr.family() && outer.length <= inner.length &&
           outer.contains(inner.addr);
}

bool isLocal(const IpPrefix& p, const std::set<IpPrefix>& networks) {
    return std::any_of(networks.begin(), networks.end(),
                       [&p](const IpPrefix& n) { return inside(n, p); });
}

// aclorch takes no ':' in a rule name, and '/' would read as a path elsewhere.
std::string prefixRuleName(const std::string& uplink, const IpPrefix& p) {
    std::string text = p.str();
    for (auto& c : text) c = c == ':' ? '-' : c == '/' ? '_' : c;
    return "P_" + uplink + "_" + text;
}

// Per uplink of `pinned`, the prefixes whose answer (through it or not) differs from the
// answer of the prefix enclosing them (none enclosing: through it, the PIN rule's). One
// walk of main in order, where a prefix comes before every prefix inside it.
std::map<std::string, std::vector<std::pair<IpPrefix, bool>>> prefixAnswers(
    const AclRoutes& routes, const std::set<std::string>& pinned,
    const std::set<IpPrefix>& networks) {
    std::map<std::string, std::vector<std::pair<IpPrefix, bool>>> out;
    std::vector<AclRoutes::const_iterator> enclosing;
    auto all = [&pinned](const std::set<std::string>& through) {
        return std::includes(through.begin(), through.end(), pinned.begin(), pinned.end());
    };
    for (auto it = routes.begin(); it != routes.end(); ++it) {
        if (isLocal(it->first, networks)) continue;
        while (!enclosing.empty() && !inside(enclosing.back()->first, it->first))
            enclosing.pop_back();
        const std::set<std::string>* above =
            enclosing.empty() ? nullptr : &enclosing.back()->second;
        enclosing.push_back(it);
        if (all(it->second) && (above == nullptr || all(*above))) continue;  // a healthy fabric
        for (const auto& u : pinned) {
            const bool through = it->second.count(u) > 0;
            if (through != (above == nullptr || above->count(u) > 0))
                out[u].emplace_back(it->first, through);
        }
    }
    return out;
}

// The rules of one pinned uplink: its downlinks' PIN rules and its prefix rules, or why
// it cannot be pinned.
std::optional<std::string> uplinkRules(const std::string& uplink, const AclPinView& view,
                                       const std::vector<std::string>& downlinks,
                                       const std::vector<std::pair<IpPrefix, bool>>& answers,
                                       std::map<std::string, redis::Fields>& rules) {
    if (answers.size() > kMaxPrefixRulesPerUplink) {
        return std::to_string(answers.size()) + " prefixes of main would need their own ACL rule " +
               "on uplink " + uplink + " (more than " + std::to_string(kMaxPrefixRulesPerUplink) +
               "): multipath until fewer do";
    }
    std::string inPorts;
    for (const auto& d : downlinks) inPorts += (inPorts.empty() ? "" : ",") + d;
    for (const auto& d : downlinks) {
        rules["PIN_" + d] = {{"PRIORITY", std::to_string(kPinRulePriority)},
                             {"IN_PORTS", d},
                             {"IP_TYPE", "IP"},
                             {"REDIRECT_ACTION", view.redirect}};
    }
    for (const auto& [prefix, through] : answers) {
        redis::Fields f{{"PRIORITY", std::to_string(kPinRulePriority + 1 + prefix.length)},
                        {"IN_PORTS", inPorts},
                        {prefix.addr.isV4() ? "DST_IP" : "DST_IPV6", prefix.str()}};
        if (through) {
            f.emplace_back("REDIRECT_ACTION", view.redirect);
        } else {
            f.emplace_back("PACKET_ACTION", "FORWARD");
        }
        rules[prefixRuleName(uplink, prefix)] = std::move(f);
    }
    return std::nullopt;
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
                      const std::vector<IpPrefix>& local, const AclRoutes& routes) {
    AclPinPlan plan;
    std::set<IpPrefix> networks;
    for (const auto& p : local) networks.insert(networkOf(p));
    for (const auto& p : alwaysLocal()) networks.insert(p);
    int n = 0;
    for (const auto& p : networks) {
        ++n;
        plan.rules["LOCAL_" + std::to_string(n)] = localRule(p, kLocalRulePriority - n);
    }
    std::map<std::string, std::vector<std::string>> downlinksOf;  // pinned uplinks only
    std::map<std::string, AclPinView> views;
    for (const auto& [downlink, uplink] : pins) {
        AclPinView view = pinOf(uplink, uplinks);
        if (view.state == PinState::Pinned) downlinksOf[uplink].push_back(downlink);
        views[uplink] = view;
        plan.pins[downlink] = std::move(view);
    }
    std::set<std::string> pinned;
    for (const auto& [uplink, downlinks] : downlinksOf) pinned.insert(uplink);
    auto answers = prefixAnswers(routes, pinned, networks);
    for (const auto& [uplink, downlinks] : downlinksOf) {
        auto why = uplinkRules(uplink, views[uplink], downlinks, answers[uplink], plan.rules);
        if (!why) continue;
        for (const auto& d : downlinks) plan.pins[d] = {PinState::Fallback, *why, ""};
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
