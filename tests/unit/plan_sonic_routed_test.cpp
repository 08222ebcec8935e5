// Routed hosts on SONiC leaves (sonic_routed.cpp): the rail VLAN with one address per
// plane on its SVI, the leaf's listen ranges, the NIC's frr.conf, and the refusals. The
// check that matters most: every NIC's sessions go to an address one of its own leaves
// carries, on the port cabled to that leaf, and no NIC holds that address.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "plan_sonic_helpers.h"
#include "twinrail/plan/sonic_sku.h"
#include "twinrail/plan/sonic_target.h"

namespace plan = twinrail::plan;
using nlohmann::json;
using twinrail::plansonic_test::catalogSku;
using twinrail::plansonic_test::routedPlan;

namespace {

std::map<std::string, plan::SonicSwitchConfig> leafConfigs(const plan::Plan& p,
                                                           const plan::Sku& sku) {
    std::map<std::string, plan::SonicSwitchConfig> out;
    for (const auto& sw : p.switches) {
        if (sw.spine) continue;
        auto c = plan::sonicSwitchConfig(p, sw, sku, {});
        if (auto* why = std::get_if<std::string>(&c)) {
            ADD_FAILURE() << sw.name << ": " << *why;
            continue;
        }
        out.emplace(sw.name, std::get<plan::SonicSwitchConfig>(c));
    }
    return out;
}

bool has(const std::string& text, const std::string& line) {
    return text.find(line) != std::string::npos;
}

}  // namespace

TEST(PlanSonicRouted, LeafShape) {
    auto p = routedPlan("CX732Q-N", 256);
    auto configs = leafConfigs(p, catalogSku("CX732Q-N"));
    ASSERT_FALSE(configs.empty());
    for (const auto& sw : p.switches) {
        if (sw.spine) continue;
        const auto& c = configs.at(sw.name);
        const json& o = c.overlay;
        const plan::RailSubnet* rs = p.subnetFor(sw.group, sw.rails.front());
        ASSERT_NE(rs, nullptr);
        const std::string vlan = "Vlan" + std::to_string(1000 + sw.rails.front());
        const std::string len = rs->prefix.substr(rs->prefix.find('/'));
        const std::string peer = plan::sonicRoutedPeer(*rs, sw.plane);
        // A /24 rail subnet: plane 1 at .254, plane 2 at .253.
        EXPECT_EQ(peer.substr(peer.rfind('.')), sw.plane == 1 ? ".254" : ".253") << sw.name;
        EXPECT_EQ(o["VLAN_INTERFACE"][vlan], json::object()) << sw.name;  // no proxy ARP, MAC
        EXPECT_TRUE(o["VLAN_INTERFACE"].contains(vlan + "|" + peer + len)) << sw.name;
        EXPECT_FALSE(o["VLAN_INTERFACE"].contains(vlan + "|" + rs->gateway + len)) << sw.name;
        EXPECT_EQ(plan::overlappingRouterInterfaces(o), std::vector<std::string>{}) << sw.name;
        EXPECT_EQ(o["HOSTROUTED"]["global"]["proxy_arp"], "false");
        EXPECT_TRUE(o["HOSTROUTED_INTERFACE"].contains(vlan));
        size_t members = 0, hostPorts = 0;
        for (const auto& [key, row] : o["VLAN_MEMBER"].items()) {
            members += 1;
            EXPECT_EQ(row["tagging_mode"], "untagged") << key;
        }
        for (const auto& port : sw.ports) hostPorts += port.role == plan::PortRole::Host;
        EXPECT_EQ(members, hostPorts) << sw.name;
        // The leaf accepts sessions from its rails' subnets, as many as it has host ports,
        // and takes nothing from them; no unnumbered session on a host port.
        EXPECT_TRUE(has(c.frrConf, " bgp listen range " + rs->prefix + " peer-group HOSTS\n"));
        EXPECT_TRUE(has(c.frrConf, " bgp listen limit " + std::to_string(hostPorts) + "\n"));
        EXPECT_TRUE(has(c.frrConf, " neighbor HOSTS remote-as " + std::to_string(p.hostAsn)));
        EXPECT_TRUE(has(c.frrConf, "  neighbor HOSTS route-map TWINRAIL-FROM-HOSTS in\n"));
        EXPECT_FALSE(has(c.frrConf, "interface peer-group HOSTS")) << sw.name;
    }
}

// Each NIC: one /32 and one session per port, to an address the leaf at the other end of
// that port carries on the NIC's rail SVI; none of those addresses is a NIC's.
TEST(PlanSonicRouted, EveryNicPeersWithTheLeafItIsCabledTo) {
    auto p = routedPlan("CX864E-N", 512);
    auto configs = leafConfigs(p, catalogSku("CX864E-N"));
    std::set<std::string> nicAddresses;
    for (const auto& srv : p.servers)
        for (const auto& nic : srv.nics) nicAddresses.insert(nic.address);
    size_t sessions = 0;
    for (const auto& srv : p.servers) {
        for (const auto& nic : srv.nics) {
            const std::string conf = plan::sonicHostFrrConfig(p, srv, nic);
            const plan::RailSubnet* rs = p.subnetFor(srv.group, nic.rail);
            ASSERT_NE(rs, nullptr);
            const std::string len = rs->prefix.substr(rs->prefix.find('/'));
            EXPECT_TRUE(has(conf, " neighbor LEAVES update-source " + nic.address + "\n"));
            EXPECT_TRUE(has(conf, "  neighbor LEAVES route-map TWINRAIL-NOTHING out\n"));
            EXPECT_TRUE(has(conf, "\nno zebra nexthop kernel enable\n"));
            for (const auto& np : nic.ports) {
                const std::string peer = plan::sonicRoutedPeer(*rs, np.plane);
                const std::string at = srv.name + "/" + nic.name + " " + np.name;
                EXPECT_TRUE(has(conf, "ip route " + peer + "/32 " + np.name + "\n")) << at;
                EXPECT_TRUE(has(conf, " neighbor " + peer + " peer-group LEAVES\n")) << at;
                EXPECT_EQ(nicAddresses.count(peer), 0U) << at;
                const json& svi = configs.at(np.leaf).overlay["VLAN_INTERFACE"];
                EXPECT_TRUE(
                    svi.contains("Vlan" + std::to_string(1000 + nic.rail) + "|" + peer + len))
                    << at;
                ++sessions;
            }
        }
    }
    EXPECT_EQ(sessions, 512U / 8 * 8 * 2);  // every NIC port of 64 servers
}

TEST(PlanSonicRouted, RefusesWhatOneSviCannotCarry) {
    // Two ports of a NIC on one leaf: one SVI, one MAC per neighbor.
    auto four = routedPlan("CX864E-N", 512, 4);
    auto why = plan::sonicRefusal(four);
    ASSERT_TRUE(why.has_value());
    EXPECT_TRUE(has(*why, "srv1/nic1 has two ports on p1-leaf1")) << *why;
    auto refused = plan::sonicSwitchConfig(four, four.switches.front(), catalogSku("CX864E-N"), {});
    ASSERT_TRUE(std::holds_alternative<std::string>(refused));
    // A host on a plane's address: no room for the leaves' addresses.
    auto p = routedPlan("CX864E-N", 512);
    EXPECT_FALSE(plan::sonicRefusal(p).has_value());
    const auto& rs = *p.subnetFor(p.servers[0].group, p.servers[0].nics[0].rail);
    p.servers[0].nics[0].address = plan::sonicRoutedPeer(rs, 2);
    why = plan::sonicRefusal(p);
    ASSERT_TRUE(why.has_value());
    EXPECT_TRUE(has(*why, "rail subnet " + rs.prefix + " has no room")) << *why;
    // Bonded hosts are not concerned.
    p.request.attach = plan::Attach::Bond;
    EXPECT_FALSE(plan::sonicRoutedRefusal(p).has_value());
}

TEST(PlanSonicRouted, PeerAddressesOfOddSubnets) {
    EXPECT_EQ(plan::sonicRoutedPeer({1, 1, "10.128.0.0/23", "10.128.0.1"}, 1), "10.128.1.254");
    EXPECT_EQ(plan::sonicRoutedPeer({1, 1, "10.128.0.0/23", "10.128.0.1"}, 2), "10.128.1.253");
    // A /30: plane 1 above the gateway, plane 2 would be the gateway itself.
    EXPECT_EQ(plan::sonicRoutedPeer({1, 1, "10.128.0.0/30", "10.128.0.1"}, 1), "10.128.0.2");
    EXPECT_EQ(plan::sonicRoutedPeer({1, 1, "10.128.0.0/30", "10.128.0.1"}, 2), "");
    EXPECT_EQ(plan::sonicRoutedPeer({1, 1, "10.128.0.0/31", "10.128.0.1"}, 1), "");
    EXPECT_EQ(plan::sonicRoutedPeer({1, 1, "10.128.0.0", "10.128.0.1"}, 1), "");
    EXPECT_EQ(plan::sonicRoutedPeer({1, 1, "bogus/24", "10.128.0.1"}, 1), "");
    EXPECT_EQ(plan::sonicRoutedPeer({1, 1, "10.128.0.0/24", "10.128.0.1"}, 0), "");
}
