// EVPN-MH leaves on SONiC (sonic_evpn.cpp): the pair must agree on what the host's bond and
// BGP see (one ESI and one LACP system MAC per segment on both leaves, the AUX /31, the
// route targets), every host port must be a segment in its rail's VLAN, and what SONiC
// cannot take is refused with the reason.
#include <gtest/gtest.h>

#include <set>

#include "plan_sonic_helpers.h"
#include "twinrail/plan/sonic_sku.h"
#include "twinrail/plan/sonic_target.h"

namespace plan = twinrail::plan;
using nlohmann::json;
using twinrail::plansonic_test::build;
using twinrail::plansonic_test::catalogSku;

namespace {

plan::SonicSwitchConfig leaf(const plan::Plan& p, const std::string& name, const plan::Sku& sku) {
    auto c = plan::sonicSwitchConfig(p, *p.findSwitch(name), sku, {plan::SonicRelease::Master});
    if (auto* why = std::get_if<std::string>(&c)) {
        ADD_FAILURE() << name << ": " << *why;
        return {};
    }
    return std::get<plan::SonicSwitchConfig>(c);
}

bool has(const std::string& text, const std::string& line) {
    return text.find(line) != std::string::npos;
}

}  // namespace

TEST(PlanSonicEvpn, ThePairAgreesOnEverySegment) {
    for (const std::string model : {"CX864E-N", "CX732Q-N"}) {
        SCOPED_TRACE(model);
        const plan::Sku sku = catalogSku(model);
        auto p = build(model, model == "CX864E-N" ? 1024 : 256, plan::Attach::EvpnMh);
        const auto one = leaf(p, "p1-leaf2", sku);
        const auto two = leaf(p, "p2-leaf2", sku);
        const json& a = one.overlay;
        const json& b = two.overlay;
        // The AUX link: the first 10G SFP+ port, a /31 whose other end is the peer's.
        const std::string aux = model == "CX864E-N" ? "Ethernet512" : "Ethernet256";
        EXPECT_EQ(a["HOSTROUTED"]["global"]["evpn_peer_interface"], aux);
        EXPECT_TRUE(a["INTERFACE"].contains(aux + "|10.253.0.2/31")) << a["INTERFACE"].dump();
        EXPECT_TRUE(b["INTERFACE"].contains(aux + "|10.253.0.3/31"));
        EXPECT_EQ(a["HOSTROUTED"]["global"]["evpn_peer"], "10.253.0.3");
        EXPECT_EQ(a["VXLAN_TUNNEL"]["vtep"]["src_ip"], "10.253.0.2");
        EXPECT_EQ(a["VXLAN_EVPN_NVO"]["nvo"]["source_vtep"], "vtep");
        // One ES per host port, the same ESI and LACP system on both leaves, distinct ones
        // on a leaf; each member is a host port of this leaf, once.
        const auto* sw = p.findSwitch("p1-leaf2");
        size_t hostPorts = 0;
        for (const auto& port : sw->ports) hostPorts += port.role == plan::PortRole::Host;
        ASSERT_EQ(a["EVPN_ETHERNET_SEGMENT"].size(), hostPorts);
        EXPECT_EQ(a["EVPN_ETHERNET_SEGMENT"], b["EVPN_ETHERNET_SEGMENT"]);
        std::set<std::string> esis;
        for (const auto& [pc, row] : a["EVPN_ETHERNET_SEGMENT"].items()) {
            esis.insert(row["esi"].get<std::string>());
            EXPECT_EQ(row["type"], "TYPE_0_OPERATOR_CONFIGURED");
            EXPECT_EQ(row["esi"].get<std::string>().substr(0, 3), "00:");
            EXPECT_EQ(a["PORTCHANNEL"][pc]["system_mac"], b["PORTCHANNEL"][pc]["system_mac"]);
            EXPECT_TRUE(has(one.frrConf, "interface " + pc + "\n evpn mh es-id " +
                                             row["esi"].get<std::string>() + "\n"))
                << pc;
        }
        EXPECT_EQ(esis.size(), hostPorts);
        std::set<std::string> members;
        for (const auto& [key, row] : a["PORTCHANNEL_MEMBER"].items())
            members.insert(key.substr(key.find('|') + 1));
        EXPECT_EQ(members.size(), hostPorts);
        EXPECT_FALSE(members.count(aux));
        // Each NIC behind its segment in its rail's VLAN, the VLAN mapped to the rail's VNI,
        // the gateway with the one gateway MAC on both leaves.
        for (const auto& [address, bind] : a["HOSTROUTED_BINDING"].items()) {
            const std::string vlan = bind["ifname"];
            EXPECT_TRUE(a["VLAN_MEMBER"].contains(vlan + "|" + bind["port"].get<std::string>()))
                << address;
        }
        EXPECT_EQ(a["SAG"]["GLOBAL"]["gateway_mac"], p.request.gatewayMac);
        EXPECT_EQ(b["SAG"]["GLOBAL"]["gateway_mac"], p.request.gatewayMac);
        for (const auto& [vlan, row] : a["VLAN"].items()) {
            const std::string id = row["vlanid"];
            const std::string vni = std::to_string(10000 + std::stoi(id) - plan::kSonicVlanBase);
            EXPECT_EQ(a["VXLAN_TUNNEL_MAP"]["vtep|map_" + vni + "_" + vlan]["vni"], vni);
            // SAG (master has it): the one gateway MAC, and intfmgrd's FDB entry for it.
            EXPECT_EQ(a["VLAN_INTERFACE"][vlan]["static_anycast_gateway"], "true");
            EXPECT_EQ(b["VLAN_INTERFACE"][vlan]["static_anycast_gateway"], "true");
            EXPECT_FALSE(a["VLAN_INTERFACE"][vlan].contains("mac_addr"));
            EXPECT_FALSE(a["VLAN_INTERFACE"][vlan].contains("proxy_arp"));
            // Route targets set by hand, the same on both (their ASNs differ).
            const std::string rt =
                "   route-target import " + std::to_string(sw->asn) + ":" + vni + "\n";
            EXPECT_TRUE(has(one.frrConf, rt)) << rt;
            EXPECT_TRUE(has(two.frrConf, rt)) << rt;
        }
        // The AUX session carries l2vpn evpn only, never the planes' unicast routes.
        EXPECT_TRUE(has(one.frrConf, " neighbor 10.253.0.3 remote-as "));
        EXPECT_TRUE(has(one.frrConf, "  no neighbor 10.253.0.3 activate\n"));
        EXPECT_TRUE(has(one.frrConf,
                        " address-family l2vpn evpn\n  neighbor 10.253.0.3 activate\n"
                        "  advertise-all-vni\n"));
        EXPECT_FALSE(a.contains("UPLINK_PIN"));
        EXPECT_EQ(plan::overlappingRouterInterfaces(a), std::vector<std::string>{});
    }
}

TEST(PlanSonicEvpn, RefusedWhereSonicCannotTakeIt) {
    const plan::Sku sku = catalogSku("CX864E-N");
    auto p = build("CX864E-N", 512, plan::Attach::EvpnMh);
    const auto& sw = *p.findSwitch("p1-leaf1");
    for (auto release : plan::sonicReleases()) {
        if (release == plan::SonicRelease::Master) continue;
        auto old = plan::sonicSwitchConfig(p, sw, sku, {release});
        ASSERT_TRUE(std::holds_alternative<std::string>(old));
        EXPECT_TRUE(has(std::get<std::string>(old),
                        "--attach evpn-mh on SONiC " + plan::sonicReleaseName(release) +
                            ": EVPN_ETHERNET_SEGMENT has a YANG model (sonic-evpn.yang) only on "
                            "master"))
            << std::get<std::string>(old);
    }
    // A SKU whose every cage the plan uses has no port for the AUX link.
    plan::Sku full = sku;
    std::erase_if(full.ports, [](const plan::SkuPort& port) { return port.speedMbps < 100000; });
    for (const auto& name : {"Ethernet512", "Ethernet513"}) full.defaultModes.erase(name);
    auto none = plan::sonicSwitchConfig(p, sw, full, {plan::SonicRelease::Master});
    ASSERT_TRUE(std::holds_alternative<std::string>(none));
    EXPECT_TRUE(has(std::get<std::string>(none),
                    "p1-leaf1: HWSKU CX864E-N has no front-panel "
                    "port left for the EVPN-MH AUX link"))
        << std::get<std::string>(none);
    // Spines are as with every other attachment.
    const auto* spine = p.findSwitch("p1-spine1");
    auto c = plan::sonicSwitchConfig(p, *spine, sku, {plan::SonicRelease::Master});
    ASSERT_TRUE(std::holds_alternative<plan::SonicSwitchConfig>(c));
    EXPECT_FALSE(std::get<plan::SonicSwitchConfig>(c).overlay.contains("VXLAN_TUNNEL"));
}

TEST(PlanSonicEvpn, AuxPortIsTheFastestFreeCage) {
    const plan::Sku sku = catalogSku("CX864E-N");
    auto p = build("CX864E-N", 512, plan::Attach::EvpnMh);
    auto mapped = plan::mapPorts(sku, *p.findSwitch("p1-leaf1"));
    ASSERT_TRUE(std::holds_alternative<plan::PortMap>(mapped));
    plan::PortMap ports = std::get<plan::PortMap>(mapped);
    EXPECT_EQ(plan::sonicAuxPort(sku, ports), "Ethernet512");
    // With an 800G cage left free, that one: the AUX link carries a failed port's traffic.
    size_t freed = std::erase_if(ports.names, [](const auto& kv) {
        const int n = std::stoi(kv.second.substr(8));  // EthernetN
        return n >= 504 && n < 512;
    });
    ports.breakouts.erase("Ethernet504");
    ASSERT_GT(freed, 0U);
    EXPECT_EQ(plan::sonicAuxPort(sku, ports), "Ethernet504");
}
