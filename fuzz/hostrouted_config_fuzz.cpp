// hostrouted's config parser on any JSON document (the config_db.json file or CONFIG_DB).
// Checks: nothing throws, a rejection names where and why, every name an accepted config
// holds passes the one name grammar (twinrail/common/names.h: it reaches the kernel, FRR
// and logs), and an accepted config written back as CONFIG_DB strings parses to the same
// config (no field is read lossily, and the checks accept what they produced).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include "fuzz_util.h"
#include "hostrouted/config.h"
#include "twinrail/common/names.h"

using nlohmann::json;
using twinrail::fuzz::check;
namespace hr = twinrail::hostrouted;
namespace names = twinrail::names;

namespace {

std::string secondsText(std::chrono::milliseconds ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ms.count() / 1000),
                  static_cast<long long>(ms.count() % 1000));
    return buf;
}

// CONFIG_DB holds every field as a string; so does this.
json render(const hr::Config& c) {
    auto flag = [](bool b) { return b ? "true" : "false"; };
    json global = {{"route_table", std::to_string(c.routeTable)},
                   {"route_protocol", std::to_string(c.routeProtocol)},
                   {"ipv4", flag(c.ipv4)},
                   {"ipv6", flag(c.ipv6)},
                   {"accept_evpn", flag(c.acceptEvpn)},
                   {"manage_frr", flag(c.manageFrr)},
                   {"proxy_arp", flag(c.proxyArp)},
                   {"proxy_nd", flag(c.proxyNd)},
                   {"keepalive", secondsText(c.keepalive)},
                   {"holdtime", secondsText(c.holdtime)},
                   {"max_routes", std::to_string(c.maxRoutes)},
                   {"max_routes_per_port", std::to_string(c.maxRoutesPerPort)},
                   {"route_rate", std::to_string(static_cast<long long>(c.routeRate))},
                   {"route_burst", std::to_string(c.routeBurst)},
                   {"audit_interval", std::to_string(c.auditInterval.count())},
                   {"frr_audit_interval", std::to_string(c.frrAuditInterval.count())},
                   {"pin_table_base", std::to_string(c.pinTableBase)},
                   {"pin_rule_priority", std::to_string(c.pinRulePriority)},
                   {"pin_min_weight_ratio", json(c.pinMinWeightRatio).dump()},
                   {"evpn_mh", flag(c.evpnMh)},
                   {"evpn_poll_interval", std::to_string(c.evpnPollInterval.count())},
                   {"evpn_detour_table", std::to_string(c.evpnDetourTable)},
                   {"evpn_detour_priority", std::to_string(c.evpnDetourPriority)},
                   {"move_limit", std::to_string(c.moveLimit)},
                   {"move_window", std::to_string(c.moveWindow.count())},
                   {"hold_max_s", std::to_string(c.holdMax.count())}};
    std::string prefixes;
    for (const auto& p : c.fabricPrefixes) prefixes += (prefixes.empty() ? "" : ",") + p.str();
    if (!prefixes.empty()) global["fabric_prefixes"] = prefixes;
    if (!c.evpnVty.empty()) global["evpn_vty"] = c.evpnVty;
    if (!c.evpnPeer.empty()) {
        global["evpn_peer"] = c.evpnPeer;
        global["evpn_peer_interface"] = c.evpnPeerInterface;
    }
    json doc = {{"HOSTROUTED", {{"global", global}}}};
    for (const auto& [down, up] : c.uplinkPins) doc["UPLINK_PIN"][down] = {{"uplink", up}};
    json ifs = json::object();
    for (const auto& name : c.interfaces) ifs[name] = json::object();
    if (!c.interfaces.empty()) doc["HOSTROUTED_INTERFACE"] = ifs;
    for (const auto& [ip, b] : c.bindings) {
        json row = {{"ifname", b.ifname}};
        if (!b.port.empty()) row["port"] = b.port;
        doc["HOSTROUTED_BINDING"][ip.str()] = row;
    }
    for (const auto& [ip, t] : c.unfreeze)
        doc["HOSTROUTED_UNFREEZE"][ip.str()] = {{"requested", std::to_string(t)}};
    const auto& n = c.notices;
    if (n != hr::NoticeConfig{}) {
        json row = {{"port", std::to_string(n.port)}};
        if (n.plane != 0) row["plane"] = std::to_string(n.plane);
        if (n.key) row["key"] = twinrail::fnn::keyHex(*n.key);
        if (n.source) row["source"] = n.source->str();
        std::string leaves;
        for (const auto& l : n.leaves) leaves += (leaves.empty() ? "" : ",") + l.str();
        if (!leaves.empty()) row["leaves"] = leaves;
        doc["HOSTROUTED_NOTICE"]["global"] = row;
    }
    return doc;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    json doc = json::parse(data, data + size, nullptr, false);
    if (doc.is_discarded()) return 0;
    auto parsed = hr::parseConfig(doc);
    if (const auto* err = std::get_if<hr::ConfigError>(&parsed)) {
        check(!err->where.empty() && !err->what.empty(), "an error that names nothing");
        return 0;
    }
    const auto& cfg = std::get<hr::Config>(parsed);
    check(cfg.keepalive.count() == 0 || cfg.holdtime >= 2 * cfg.keepalive,
          "holdtime below twice keepalive was accepted");
    for (const auto& pattern : cfg.interfaces)
        check(names::valid(pattern, names::Kind::InterfacePattern),
              "an interface pattern outside the name grammar was accepted");
    for (const auto& [down, up] : cfg.uplinkPins) {
        check(
            names::valid(down, names::Kind::Interface) && names::valid(up, names::Kind::Interface),
            "an uplink pin port outside the name grammar was accepted");
    }
    check(cfg.evpnPeerInterface.empty() ||
              names::valid(cfg.evpnPeerInterface, names::Kind::Interface),
          "an evpn_peer_interface outside the name grammar was accepted");
    for (const auto& [ip, b] : cfg.bindings) {
        check(names::valid(b.ifname, names::Kind::Interface) &&
                  (b.port.empty() || names::valid(b.port, names::Kind::Interface)),
              "a binding's interface outside the name grammar was accepted");
        check(!ip.isLinkLocal() && !ip.isMulticast() && !ip.isUnspecified(),
              "a binding for an address no host holds was accepted");
    }
    auto again = hr::parseConfig(render(cfg));
    const auto* cfg2 = std::get_if<hr::Config>(&again);
    check(cfg2 != nullptr, "a config written back from an accepted one is rejected");
    check(*cfg2 == cfg, "a config written back parses differently");
    check(std::holds_alternative<std::monostate>(hr::checkRuntimeChange(cfg, *cfg2)),
          "a config cannot replace itself at runtime");
    // The patterns go to fnmatch(); each must at least be safe to match against.
    for (const auto& pattern : cfg.interfaces) (void)cfg.managesInterface(pattern);
    return 0;
}
