// EVPN-MH leaves on SONiC: the Linux layout of evpn_mh.h in SONiC's tables. Per host port a
// one-member PortChannel that is an Ethernet segment (EVPN_ETHERNET_SEGMENT, Type 0 ESI
// set by the planner so both leaves agree without a derivation rule, and one LACP system
// MAC on both, so the host's bond sees one partner); per rail a VLAN with the gateway on
// its SVI (the one gateway MAC on both leaves) mapped to a VNI on one VXLAN tunnel whose
// source is the AUX address, the pair's only meeting point; the AUX port a router
// interface with the pair's /31.
#include "sonic_evpn.h"
#include "sonic_rows.h"

#include <cstdio>
#include <map>
#include <vector>

#include "twinrail/plan/sonic_target.h"

namespace twinrail::plan {
namespace {

using json = nlohmann::json;

std::string vlanOf(int rail) {
    return "Vlan" + std::to_string(kSonicVlanBase + rail);
}

std::string withoutLength(const std::string& prefix) {
    return prefix.substr(0, prefix.find('/'));
}

}  // namespace

std::optional<std::string> sonicAuxPort(const Sku& sku, const PortMap& ports) {
    std::map<std::string, bool> used;
    for (const auto& [planPort, eth] : ports.names) used[eth] = true;
    const std::vector<PhysicalPort> cages = physicalPorts(sku);
    const PhysicalPort* best = nullptr;
    for (const auto& cage : cages) {
        if (ports.breakouts.count(cage.base().name) != 0) continue;
        bool free = true;
        for (const auto* row : cage.rows) free = free && used.count(row->name) == 0;
        if (free && (best == nullptr || cage.speedMbps() > best->speedMbps())) best = &cage;
    }
    if (best == nullptr) return std::nullopt;
    return best->base().name;
}

EvpnMhLeaf sonicEvpnMhLeaf(const Plan& plan, const Switch& leaf, const PortMap* ports,
                           const std::string& aux) {
    EvpnMhLeaf mh = evpnMhLeaf(plan, leaf);
    mh.auxPort = aux;
    std::map<std::string, std::string> bondNames;
    for (auto& s : mh.segments) {
        const std::string name = "PortChannel" + std::to_string(s.esId);
        bondNames[s.bond] = name;
        s.bond = name;
        if (ports != nullptr) s.port = ports->names.at(s.port);
    }
    for (auto& b : mh.bridges) {
        b.bridge = vlanOf(b.rail);
        b.vxlan = std::string(kSonicVtep) + "-" + std::to_string(kSonicVlanBase + b.rail);
        for (auto& m : b.members) m = bondNames.at(m);
    }
    return mh;
}

std::string sonicEsi(const EvpnMhLeaf& leaf, const EvpnSegment& segment) {
    char tail[16];
    std::snprintf(tail, sizeof tail, ":00:%02x:%02x", (segment.esId >> 8) & 255,
                  segment.esId & 255);
    return "00:" + leaf.esSysMac + tail;
}

std::optional<std::string> sonicEvpnReleaseRefusal(const Plan& plan, const SonicOptions& options) {
    if (plan.request.attach != Attach::EvpnMh || sonicFeatures(options.release).evpnMultihoming)
        return std::nullopt;
    return "--attach evpn-mh on SONiC " + sonicReleaseName(options.release) +
           ": EVPN_ETHERNET_SEGMENT has a YANG model (sonic-evpn.yang) only on master (from "
           "2026-06-22, sonic-buildimage #27543), and `config reload` aborts on a table "
           "without one; use --sonic-release master";
}

std::optional<std::string> sonicEvpnAuxRefusal(const Plan& plan, const Switch& sw, const Sku& sku,
                                               const PortMap& ports) {
    if (plan.request.attach != Attach::EvpnMh || sw.spine || sonicAuxPort(sku, ports))
        return std::nullopt;
    return sw.name + ": HWSKU " + sku.name +
           " has no front-panel port left for the EVPN-MH AUX link to its pair (the plan "
           "uses every cage); use a SKU with a spare port, or --attach bond";
}

std::optional<std::string> sonicEvpnRows(const Plan& plan, const Switch& sw, const Sku& sku,
                                         const PortMap& ports, const SonicOptions& options,
                                         json& db) {
    if (auto why = sonicEvpnReleaseRefusal(plan, options)) return why;
    if (auto why = sonicEvpnAuxRefusal(plan, sw, sku, ports)) return why;
    const std::string aux = *sonicAuxPort(sku, ports);
    const EvpnMhLeaf mh = sonicEvpnMhLeaf(plan, sw, &ports, aux);
    db["INTERFACE"][aux] = json::object();
    db["INTERFACE"][aux + "|" + mh.auxAddress] = json::object();
    const std::string source = withoutLength(mh.auxAddress);
    db["VXLAN_TUNNEL"][kSonicVtep] = {{"src_ip", source}};
    db["VXLAN_EVPN_NVO"]["nvo"] = {{"source_vtep", kSonicVtep}};
    for (const auto& s : mh.segments) {
        db["PORTCHANNEL"][s.bond] = {{"admin_status", "up"},
                                     {"min_links", "1"},
                                     {"mtu", "9100"},
                                     {"fast_rate", "true"},
                                     {"system_mac", mh.esSysMac}};
        db["PORTCHANNEL_MEMBER"][s.bond + "|" + s.port] = json::object();
        db["EVPN_ETHERNET_SEGMENT"][s.bond] = {{"esi", sonicEsi(mh, s)},
                                               {"type", "TYPE_0_OPERATOR_CONFIGURED"}};
    }
    for (const auto& b : mh.bridges) {
        const std::string id = std::to_string(kSonicVlanBase + b.rail);
        db["VLAN"][b.bridge] = {{"vlanid", id}};
        for (const auto& m : b.members)
            db["VLAN_MEMBER"][b.bridge + "|" + m] = {{"tagging_mode", "untagged"}};
        // Both leaves answer to the one gateway MAC (SAG on master, which also installs
        // its FDB entry); no proxy ARP: a rail's hosts share the VLAN, so ARP between
        // them is bridged.
        sonicGatewayRows(plan, options, b.bridge, b.gateway, false, db);
        db["VXLAN_TUNNEL_MAP"][std::string(kSonicVtep) + "|map_" + std::to_string(b.vni) + "_" +
                               b.bridge] = {{"vlan", b.bridge}, {"vni", std::to_string(b.vni)}};
        db["HOSTROUTED_INTERFACE"][b.bridge] = json::object();
    }
    json& g = db["HOSTROUTED"]["global"];
    g["proxy_arp"] = "false";
    g["evpn_mh"] = "true";
    g["evpn_peer"] = mh.peerAuxAddress;
    g["evpn_peer_interface"] = aux;
    // Each NIC address bound to its rail's VLAN, behind the ES of the port it is cabled to.
    for (const auto& srv : plan.servers) {
        for (const auto& nic : srv.nics) {
            for (const auto& np : nic.ports) {
                if (np.leaf != sw.name) continue;
                const std::string eth = ports.names.at(np.leafPort);
                for (const auto& s : mh.segments) {
                    if (s.port != eth) continue;
                    db["HOSTROUTED_BINDING"][nic.address] = {{"ifname", vlanOf(nic.rail)},
                                                             {"port", s.bond}};
                }
            }
        }
    }
    return std::nullopt;
}

std::string sonicEvpnZebraConfig(const EvpnMhLeaf& leaf) {
    std::string c;
    for (const auto& s : leaf.segments)
        c += "interface " + s.bond + "\n evpn mh es-id " + sonicEsi(leaf, s) + "\nexit\n!\n";
    return c;
}

}  // namespace twinrail::plan
