// hostrouted's EVPN-multihoming module (evpn_mh.h) inside a real Daemon, on fakes: zebra's
// EVPN view comes from FakeFrr's vty answers (as FRR 8.4.4 printed them on a lab leaf), the
// SVI's neighbors from FakeKernel; the routes, static neighbors and detours it decides are
// read back from the fake route table and policy writer.
#include "evpn_views.h"
#include "hostrouted_harness.h"

using namespace twinrail;
using namespace twinrail::hostrouted;
using namespace twinrail::hostrouted::fixture;

namespace {

constexpr int kBridge = 30;  // the rail's SVI (managed)
constexpr int kEsPort = 31;  // hbond1, the Ethernet segment, in the bridge
constexpr int kVxlan = 32;   // the bridge's VXLAN port
constexpr int kAux = 33;     // the link to the ES peer

const char* const kArp = kEvpnArp;
const char* const kMac = kEvpnMac;
const char* const kEs = kEvpnEs;
const MacAddr kPeerHostMac{0x02, 0, 0x0a, 0x80, 0, 0x02};

class HostroutedEvpn : public HostroutedHarness {
  protected:
    void seedKernel() override {
        auto bridge = link(kBridge, "br10", true);
        bridge.kind = "bridge";
        kernel->setLink(bridge);
        auto es = link(kEsPort, "hbond1", esUp);
        es.master = kBridge;
        kernel->setLink(es);
        auto vx = link(kVxlan, "vx10", true);
        vx.master = kBridge;
        vx.kind = "vxlan";
        kernel->setLink(vx);
        kernel->setLink(link(kAux, "aux0", true));
        kernel->addAddress({kBridge, *IpPrefix::parse("10.128.0.1/24")});
        kernel->addAddress({kAux, *IpPrefix::parse("10.254.0.0/31")});
    }
    Config evpnConfig(bool withPeer) {
        json doc = {{"HOSTROUTED",
                     {{"global",
                       {{"keepalive", "0"},
                        {"audit_interval", "0"},
                        {"frr_audit_interval", "0"},
                        {"evpn_mh", "true"},
                        {"evpn_poll_interval", "20"}}}}},
                    {"HOSTROUTED_INTERFACE", {{"br10", json::object()}}}};
        if (withPeer) {
            doc["HOSTROUTED"]["global"]["evpn_peer"] = "10.254.0.1";
            doc["HOSTROUTED"]["global"]["evpn_peer_interface"] = "aux0";
        }
        return configOf(doc);
    }
    // FakeFrr is made in startDaemon; zebra's answers are in place before the first poll.
    void startWithView(bool withPeer) {
        startDaemon(evpnConfig(withPeer));
        frr->zebraAnswers["show evpn arp-cache vni all detail json"] = kArp;
        frr->zebraAnswers["show evpn mac vni all detail json"] = kMac;
        frr->zebraAnswers["show evpn es detail json"] = kEs;
        settle(100ms);
    }
    fakes::FakePolicyWriter& evpnWriter() { return *writers.at(0); }
    bool ownNeighborFor(const IpAddr& host) {
        for (const auto& n : evpnWriter().neighbors)
            if (!n.fdb && n.ip == host) return true;
        return false;
    }
    bool detoured(const IpAddr& host) {
        for (const auto& r : evpnWriter().routes)
            if (r.dst.addr == host && r.table == 990) return true;
        return false;
    }
    bool esUp = true;
};

TEST_F(HostroutedEvpn, AHostOnlyThePeerLearnedIsRoutedWithAStaticNeighborOfOurs) {
    startWithView(false);
    ASSERT_EQ(routes->routedVia(ip("10.128.0.2")), kBridge);
    EXPECT_EQ(stateField("HOST_ROUTE_TABLE|10.128.0.2", "source"), "es-peer");
    // Its row names the segment it is behind (what `twinrail verify` checks the cable by).
    EXPECT_EQ(stateField("HOST_ROUTE_TABLE|10.128.0.2", "port"), "hbond1");
    ASSERT_TRUE(ownNeighborFor(ip("10.128.0.2")));
    for (const auto& n : evpnWriter().neighbors) {
        EXPECT_EQ(n.ifindex, kBridge);
        EXPECT_EQ(n.mac, kPeerHostMac);
        EXPECT_EQ(n.protocol, 201);
    }
    // A remote VTEP's host is reached through EVPN type-2 routes, never as ours.
    EXPECT_EQ(routes->routedVia(ip("10.128.0.20")), 0);
}

TEST_F(HostroutedEvpn, TheSegmentGoingDownHereWithdrawsAtOnceAndTheStaticNeighborGoes) {
    startWithView(false);
    ASSERT_EQ(routes->routedVia(ip("10.128.0.2")), kBridge);
    auto es = link(kEsPort, "hbond1", false);
    es.master = kBridge;
    kernel->setLink(es);  // before FRR's next read says so
    settle(1ms);
    EXPECT_EQ(routes->routedVia(ip("10.128.0.2")), 0);
    EXPECT_FALSE(ownNeighborFor(ip("10.128.0.2")));
}

TEST_F(HostroutedEvpn, WithAnEsPeerADownSegmentsHostsAreDetouredOverTheAuxLink) {
    startWithView(true);
    EXPECT_FALSE(detoured(ip("10.128.0.2")));
    auto es = link(kEsPort, "hbond1", false);
    es.master = kBridge;
    kernel->setLink(es);
    settle(1ms);
    ASSERT_TRUE(detoured(ip("10.128.0.2")));
    bool fdbToVxlan = false;
    for (const auto& n : evpnWriter().neighbors)
        fdbToVxlan |= n.fdb && n.mac == kPeerHostMac && n.ifindex == kVxlan;
    EXPECT_TRUE(fdbToVxlan) << "the bridge sends the host's MAC to the ES peer too";
    EXPECT_EQ(evpnWriter().rules.size(), 2U) << "AUX ingress to main, the rest to the detour";
    es.operUp = true;
    kernel->setLink(es);
    settle(1ms);
    EXPECT_FALSE(detoured(ip("10.128.0.2")));
}

TEST_F(HostroutedEvpn, ZebraUnreachableKeepsTheLastViewsHosts) {
    startWithView(false);
    ASSERT_EQ(routes->routedVia(ip("10.128.0.2")), kBridge);
    frr->reachable = false;
    settle(200ms);
    EXPECT_EQ(routes->routedVia(ip("10.128.0.2")), kBridge);
    EXPECT_TRUE(ownNeighborFor(ip("10.128.0.2")));
}

TEST_F(HostroutedEvpn, ABindingToAnotherSegmentRefusesThePeersHostAndPublishesTheClaim) {
    Config cfg = evpnConfig(false);
    json doc = {{"HOSTROUTED_BINDING", {{"10.128.0.2", {{"ifname", "br10"}, {"port", "hbond9"}}}}},
                {"HOSTROUTED_INTERFACE", {{"br10", json::object()}}}};
    cfg.bindings = configOf(doc).bindings;
    startDaemon(cfg);
    frr->zebraAnswers["show evpn arp-cache vni all detail json"] = kArp;
    frr->zebraAnswers["show evpn mac vni all detail json"] = kMac;
    frr->zebraAnswers["show evpn es detail json"] = kEs;
    settle(100ms);
    EXPECT_EQ(routes->routedVia(ip("10.128.0.2")), 0);
    EXPECT_FALSE(ownNeighborFor(ip("10.128.0.2")));
    EXPECT_EQ(stateField("HOST_CLAIM_TABLE|10.128.0.2|br10", "reason"), "bound-elsewhere");
}

}  // namespace
