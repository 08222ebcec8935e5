// A switch's config_db overlay in SONiC's shapes: VLAN per rail with its SVI (T0 pattern),
// IPv6 link-local fabric ports, Loopback0, DEVICE_METADATA for split-unified, and
// hostrouted's and pathqd's tables keyed by the HWSKU's EthernetN names.
#include <cstdlib>

#include "ars_rows.h"
#include "sonic_evpn.h"
#include "sonic_qos.h"
#include "sonic_rows.h"
#include "twinrail/plan/sonic_target.h"

namespace twinrail::plan {
namespace {

using json = nlohmann::json;

std::string n(long v) {
    return std::to_string(v);
}

// The peer of a leaf host port is <server>/nic<rail>.
int railOf(const SwitchPort& p) {
    auto at = p.peer.rfind("/nic");
    return at == std::string::npos ? 0 : std::atoi(p.peer.c_str() + at + 4);
}

std::string vlanName(int rail) {
    return "Vlan" + std::to_string(kSonicVlanBase + rail);
}

// DEVICE_METADATA|localhost: SONiC's templates read `type` (buffers_config.j2: a
// *LeafRouter gets the t1 buffers) and, for a back-end leaf with resource_type ComputeAI,
// qos_config.j2 takes the AI fabric's TC-to-PG branch.
nlohmann::json deviceMetadata(const Switch& sw, const SonicOptions& options) {
    json d = {{"hostname", sw.name},
              {"bgp_asn", n(sw.asn)},
              {"docker_routing_config_mode", "split-unified"}};
    if (!sw.spine) {
        d["type"] = "BackEndLeafRouter";
        d["resource_type"] = "ComputeAI";
    } else {
        d["type"] = sonicFeatures(options.release).backEndSpineRouter ? "BackEndSpineRouter"
                                                                      : "SpineRouter";
    }
    return d;
}

void fabricAndDevice(const Plan& plan, const Switch& sw, const PortMap& ports,
                     const SonicOptions& options, json& db) {
    db["DEVICE_METADATA"]["localhost"] = deviceMetadata(sw, options);
    db["LOOPBACK_INTERFACE"]["Loopback0"] = json::object();
    db["LOOPBACK_INTERFACE"]["Loopback0|" + sw.loopback + "/32"] = json::object();
    const double refMbps = plan.sizing.uplinkSpeedGbps * 1000.0;
    db["PATHQD"]["global"] = {{"reference_mbps", n(static_cast<long>(refMbps))},
                              {"source", "sonic"},
                              {"weight_audit_source", "sonic"},
                              {"sonic_release", sonicReleaseName(options.release)}};
    for (const auto& p : sw.ports) {
        if (p.role == PortRole::Host) continue;
        const std::string& eth = ports.names.at(p.name);
        // BGP unnumbered: the router interface exists with its IPv6 link-local address only.
        db["INTERFACE"][eth] = {{"ipv6_use_link_local_only", "enable"}};
        db["PATHQD_PORT"][eth] = {{"role", p.role == PortRole::Uplink ? "uplink" : "downlink"},
                                  {"capacity_mbps", n(static_cast<long>(p.speedGbps) * 1000)},
                                  {"neighbor", p.peer}};
    }
}

// Where each NIC address of this leaf is cabled: address -> (plan port, rail).
std::map<std::string, std::pair<std::string, int>> bindings(const Plan& plan, const Switch& sw) {
    std::map<std::string, std::pair<std::string, int>> out;
    for (const auto& srv : plan.servers) {
        for (const auto& nic : srv.nics) {
            for (const auto& np : nic.ports)
                if (np.leaf == sw.name) out[nic.address] = {np.leafPort, nic.rail};
        }
    }
    return out;
}

// Hosts as SONiC's T0 has them: one VLAN per rail, untagged members. Bonded hosts send to
// the rail's gateway, on the SVI with the one gateway MAC and proxy ARP; routed hosts to
// their BGP peer, this plane's address on the SVI (sonicRoutedPeer, sonic_routed.cpp).
std::optional<std::string> railVlanHosts(const Plan& plan, const Switch& sw, const PortMap& ports,
                                         const SonicOptions& options, json& db) {
    const bool bond = plan.request.attach == Attach::Bond;
    for (const auto& p : sw.ports) {
        if (p.role != PortRole::Host) continue;
        const int rail = railOf(p);
        const RailSubnet* rs = plan.subnetFor(sw.group, rail);
        if (rs == nullptr) return sw.name + " port " + p.name + ": no rail subnet for " + p.peer;
        if (kSonicVlanBase + rail > 4094)
            return sw.name + ": rail " + std::to_string(rail) + " is beyond VLAN 4094";
        const std::string vlan = vlanName(rail);
        const std::string len = rs->prefix.substr(rs->prefix.find('/'));
        db["VLAN"][vlan] = {{"vlanid", std::to_string(kSonicVlanBase + rail)}};
        db["VLAN_MEMBER"][vlan + "|" + ports.names.at(p.name)] = {{"tagging_mode", "untagged"}};
        db["HOSTROUTED_INTERFACE"][vlan] = json::object();
        if (bond) {
            // A bonded NIC sends to one gateway MAC over either plane: both leaves answer
            // to it, and intfmgrd sets proxy ARP.
            sonicGatewayRows(plan, options, vlan, rs->gateway + len, true, db);
            continue;
        }
        const std::string peer = sonicRoutedPeer(*rs, sw.plane);
        if (peer.empty()) return sw.name + ": rail subnet " + rs->prefix + " has no plane address";
        db["VLAN_INTERFACE"][vlan] = json::object();
        db["VLAN_INTERFACE"][vlan + "|" + peer + len] = json::object();
    }
    for (const auto& [address, where] : bindings(plan, sw)) {
        db["HOSTROUTED_BINDING"][address] = {{"ifname", vlanName(where.second)},
                                             {"port", ports.names.at(where.first)}};
    }
    return std::nullopt;
}

// Static smart routing (--lb static) as SONiC can do it: ACL-based PBR. The overlay holds
// what YANG models: a table type matching the ingress port and the destination, with a
// redirect action, and one table bound to the leaf's host ports. The redirect rules
// themselves carry REDIRECT_ACTION, which no release's sonic-acl.yang models, and name
// the uplink's current next hop: hostrouted writes them into APPL_DB ACL_RULE_TABLE, where
// aclorch reads them as it reads CONFIG_DB's (docs/static-routing.md, on SONiC).
std::optional<std::string> pinRows(const Switch& sw, const PortMap& ports, json& db) {
    json hostPorts = json::array();
    for (const auto& p : sw.ports) {
        if (p.role != PortRole::Host || p.pinnedUplink.empty()) continue;
        auto up = ports.names.find(p.pinnedUplink);
        if (up == ports.names.end()) {
            return sw.name + " port " + p.name + ": pinned to " + p.pinnedUplink +
                   ", which is not one of its ports";
        }
        const std::string& eth = ports.names.at(p.name);
        db["UPLINK_PIN"][eth] = {{"uplink", up->second}};
        hostPorts.push_back(eth);
    }
    if (hostPorts.empty()) return std::nullopt;
    db["ACL_TABLE_TYPE"][kSonicPinAcl] = {
        {"MATCHES", {"IN_PORTS", "IP_TYPE", "DST_IP", "DST_IPV6"}},
        {"ACTIONS", {"PACKET_ACTION", "REDIRECT_ACTION"}},
        {"BIND_POINTS", {"PORT"}}};
    db["ACL_TABLE"][kSonicPinAcl] = {
        {"policy_desc", "twinrail static smart routing: each host port to its pinned uplink"},
        {"type", kSonicPinAcl},
        {"stage", "ingress"},
        {"ports", hostPorts}};
    return std::nullopt;
}

}  // namespace

void sonicGatewayRows(const Plan& plan, const SonicOptions& options, const std::string& vlan,
                      const std::string& gatewayPrefix, bool proxyArp, json& db) {
    json svi = json::object();
    if (proxyArp) svi["proxy_arp"] = "enabled";
    if (sonicFeatures(options.release).staticAnycastGateway) {
        db["SAG"]["GLOBAL"] = {{"gateway_mac", plan.request.gatewayMac}};
        svi["static_anycast_gateway"] = "true";
    } else {
        svi["mac_addr"] = plan.request.gatewayMac;
    }
    db["VLAN_INTERFACE"][vlan] = svi;
    db["VLAN_INTERFACE"][vlan + "|" + gatewayPrefix] = json::object();
}

std::variant<SonicSwitchConfig, std::string> sonicSwitchConfig(const Plan& plan, const Switch& sw,
                                                               const Sku& sku,
                                                               const SonicOptions& options) {
    if (auto why = sonicFeatureRefusal(plan, options)) return *why;
    // Per switch, only its own NICs: the whole plan is checked once, by sonicRefusal.
    if (auto why = sonicRoutedRefusal(plan, &sw)) return *why;
    auto mapped = mapPorts(sku, sw);
    if (auto* why = std::get_if<std::string>(&mapped)) return *why;
    const PortMap& ports = std::get<PortMap>(mapped);
    SonicSwitchConfig out;
    out.breakouts = ports.breakouts;
    json& db = out.overlay;
    fabricAndDevice(plan, sw, ports, options, db);
    addLbRows(
        plan, sw, [&ports](const std::string& name) { return ports.names.at(name); }, false, db);
    if (auto why = sonicQosRows(plan, sw, ports, sku, options, db)) return *why;
    if (!sw.spine) {
        const bool bond = plan.request.attach == Attach::Bond;
        const bool tableDirect = sonicFeatures(options.release).tableDirect;
        // platform sonic: intfmgrd owns proxy_arp and the MAC, ndppd proxy ND; hostrouted
        // checks them and writes none of them.
        db["HOSTROUTED"]["global"] = {
            {"ipv6", "false"},
            {"proxy_arp", bond ? "true" : "false"},
            {"platform", "sonic"},
            {"advertise", tableDirect ? "table-direct" : "network-table"}};
        if (plan.request.attach == Attach::EvpnMh) {
            if (auto why = sonicEvpnRows(plan, sw, sku, ports, options, db)) return *why;
        } else if (auto why = railVlanHosts(plan, sw, ports, options, db)) {
            return *why;
        }
        if (plan.request.lb == Request::Lb::Static && plan.request.attach != Attach::EvpnMh) {
            if (auto why = pinRows(sw, ports, db)) return *why;
        }
    }
    out.frrConf = sonicFrrConfig(plan, sw, ports, options);
    return out;
}

}  // namespace twinrail::plan
