// The planner's evpn-mh outputs on the lab's default plan: what each leaf of a pair
// gets, and that the pair agrees on what must be shared.
#include <gtest/gtest.h>

#include "twinrail/lab/plan_lab.h"
#include "twinrail/plan/evpn_mh.h"
#include "twinrail/plan/outputs.h"
#include "twinrail/plan/server_config.h"

using namespace twinrail;
using namespace twinrail::plan;

namespace {
Plan evpnPlan() {
    return std::get<Plan>(buildPlan(lab::defaultLabRequest(Attach::EvpnMh)));
}
bool has(const std::string& text, const std::string& what) {
    return text.find(what) != std::string::npos;
}
}  // namespace

TEST(EvpnMhPlan, PairsShareSegmentsTargetsAndTheAuxLink) {
    Plan p = evpnPlan();
    auto a = evpnMhLeaf(p, *p.findSwitch("p1-leaf1"));
    auto b = evpnMhLeaf(p, *p.findSwitch("p2-leaf1"));
    EXPECT_EQ(a.peer, "p2-leaf1");
    EXPECT_EQ(b.peer, "p1-leaf1");
    EXPECT_EQ(a.esSysMac, b.esSysMac);
    EXPECT_EQ(a.auxAddress, b.peerAuxAddress + "/31");
    EXPECT_EQ(b.auxAddress, a.peerAuxAddress + "/31");
    ASSERT_EQ(a.segments.size(), 2u);
    EXPECT_EQ(a.segments[0].bond, b.segments[0].bond);
    EXPECT_EQ(a.segments[0].esId, b.segments[0].esId);
    ASSERT_EQ(a.bridges.size(), 1u);
    EXPECT_EQ(a.bridges[0].vni, b.bridges[0].vni);
    EXPECT_EQ(a.bridges[0].routeTarget, b.bridges[0].routeTarget);  // ASNs differ; RTs must not
    EXPECT_EQ(a.bridges[0].gateway, b.bridges[0].gateway);
    // Another pair: its own AUX /31 and system MAC.
    auto c = evpnMhLeaf(p, *p.findSwitch("p1-leaf2"));
    EXPECT_NE(c.auxAddress, a.auxAddress);
    EXPECT_NE(c.esSysMac, a.esSysMac);
    EXPECT_THROW(evpnMhLeaf(p, *p.findSwitch("p1-spine1")), std::invalid_argument);
}

TEST(EvpnMhPlan, FrrConfigHasSegmentsAndAnEvpnOnlySessionOverAux) {
    Plan p = evpnPlan();
    const Switch& sw = *p.findSwitch("p1-leaf1");
    auto mh = evpnMhLeaf(p, sw);
    std::string c = frrConfig(p, sw);
    EXPECT_TRUE(has(c, "interface hbond1\n evpn mh es-id 1\n evpn mh es-sys-mac " + mh.esSysMac));
    EXPECT_TRUE(has(c, " neighbor " + mh.peerAuxAddress + " remote-as " +
                           std::to_string(p.findSwitch("p2-leaf1")->asn)));
    // The planes never meet: no IPv4 unicast on the AUX session.
    EXPECT_TRUE(has(c, "  no neighbor " + mh.peerAuxAddress + " activate"));
    EXPECT_TRUE(has(c, " address-family l2vpn evpn\n  neighbor " + mh.peerAuxAddress +
                           " activate\n  advertise-all-vni"));
    EXPECT_TRUE(has(c, "   route-target import " + mh.bridges[0].routeTarget));
    auto db = configDb(p, sw);
    EXPECT_EQ(db["HOSTROUTED"]["global"]["evpn_mh"], "true");
    EXPECT_EQ(db["HOSTROUTED"]["global"]["evpn_peer"], mh.peerAuxAddress);
    EXPECT_EQ(db["HOSTROUTED"]["global"]["evpn_peer_interface"], "aux1");
    EXPECT_TRUE(db["HOSTROUTED_INTERFACE"].contains("br-rail1"));
    EXPECT_FALSE(db["HOSTROUTED_INTERFACE"].contains("swp1"));
    EXPECT_TRUE(db["INTERFACE"].contains("br-rail1|" + mh.bridges[0].gateway));
    // Each NIC's address is bound to its rail's bridge, behind the ES bond of its port.
    for (const auto& seg : mh.segments) {
        for (const auto& srv : p.servers) {
            for (const auto& nic : srv.nics) {
                for (const auto& np : nic.ports) {
                    if (np.leaf != sw.name || np.leafPort != seg.port) continue;
                    EXPECT_EQ(db["HOSTROUTED_BINDING"][nic.address]["ifname"],
                              "br-rail" + std::to_string(nic.rail));
                    EXPECT_EQ(db["HOSTROUTED_BINDING"][nic.address]["port"], seg.bond);
                }
            }
        }
    }
    EXPECT_EQ(db["HOSTROUTED_BINDING"].size(), mh.segments.size());
    EXPECT_TRUE(has(cablingCsv(p), "aux,0,p1-leaf1,aux1,p2-leaf1,aux1,10\n"));
}

TEST(EvpnMhPlan, LinkCommandsAndTheHostBond) {
    Plan p = evpnPlan();
    auto mh = evpnMhLeaf(p, *p.findSwitch("p2-leaf1"));
    std::string real = evpnLinkCommands(p, mh, true);
    EXPECT_TRUE(has(real,
                    "ip link add hbond1 type bond mode 802.3ad lacp_rate fast miimon 100 "
                    "ad_actor_system " +
                        mh.esSysMac));
    EXPECT_TRUE(has(real, "ip link set swp1 master hbond1"));
    EXPECT_TRUE(has(real, "local " + mh.auxAddress.substr(0, mh.auxAddress.find('/'))));
    EXPECT_TRUE(has(real, "neigh_suppress on flood off"));
    std::string lab = evpnLinkCommands(p, mh, false);
    EXPECT_FALSE(has(lab, "type bond"));
    EXPECT_TRUE(has(lab, "ip link set hbond1 master br-rail1"));
    std::string netplan = netplanConfig(p, p.servers[0]);
    EXPECT_TRUE(has(netplan, "mode: 802.3ad"));
    EXPECT_FALSE(has(netplan, "balance-xor"));
    EXPECT_FALSE(has(netplan, "dual-send"));
}
