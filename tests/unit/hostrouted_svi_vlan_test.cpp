// hostrouted on SONiC's own kernel shape (vlanmgrd): ONE VLAN-aware bridge `Bridge`, the
// member ports enslaved to it with per-port VLAN membership, and each SVI `VlanX` an 802.1Q
// device on `Bridge`. Neighbors are learned on VlanX; the FDB entries sit on the members with
// `master Bridge vlan X`. This machine's kernel has neither vlan devices nor vlan_filtering
// (shared/notes/KERNEL-FACTS.md), so this shape is tested with the fake kernel only.
#include <linux/neighbour.h>

#include "hostrouted_harness.h"
#include "svi_hosts.h"

namespace twinrail::hostrouted::fixture {
namespace {

constexpr int kBridge = 40;
constexpr int kVlan1001 = 41;
constexpr int kVlan1002 = 42;
constexpr int kEth0 = 43;
constexpr int kEth8 = 44;
constexpr uint16_t kVid1 = 1001;
constexpr uint16_t kVid2 = 1002;
const MacAddr kHostC{0x02, 0, 0, 0, 0, 0xc1};

netlink::FdbEntry fdb(int port, MacAddr mac, uint16_t vlan) {
    netlink::FdbEntry f;
    f.ifindex = port;
    f.master = kBridge;
    f.mac = mac;
    f.vlan = vlan;
    f.state = NUD_REACHABLE;
    return f;
}

netlink::LinkState vlanDevice(int ifindex, const char* name, uint16_t vid) {
    auto l = link(ifindex, name, true);
    l.kind = "vlan";
    l.lower = kBridge;
    l.vlanId = vid;
    return l;
}

// ---- the pure parts ---------------------------------------------------------------------

TEST(SviBridgeOf, ABridgeIsItsOwnSviAVlanDeviceIsItsBridgesVlan) {
    auto bridge = link(kBridge, "Bridge", true);
    bridge.kind = "bridge";
    EXPECT_EQ(sviBridgeOf(bridge, nullptr), (SviBridge{kBridge, 0}));
    auto vlan = vlanDevice(kVlan1001, "Vlan1001", kVid1);
    EXPECT_EQ(sviBridgeOf(vlan, &bridge), (SviBridge{kBridge, kVid1}));
    EXPECT_FALSE(sviBridgeOf(vlan, nullptr));             // its lower device is not known (yet)
    auto other = link(kBridge + 100, "Ethernet4", true);  // not the device it sits on
    EXPECT_FALSE(sviBridgeOf(vlan, &other));
    auto veth = link(kBridge, "eth1", true);  // a vlan on a plain port: no FDB behind it
    EXPECT_FALSE(sviBridgeOf(vlan, &veth));
    vlan.vlanId = 0;  // a message without IFLA_VLAN_ID
    EXPECT_FALSE(sviBridgeOf(vlan, &bridge));
    EXPECT_FALSE(sviBridgeOf(link(kEth0, "Ethernet0", true), nullptr));
}

TEST(BridgeFdb, AVlanAwareBridgeKeysItsEntriesByVlanAndMac) {
    BridgeFdb table;
    EXPECT_TRUE(table.update(fdb(kEth0, kHostA, kVid1), false));
    EXPECT_TRUE(table.update(fdb(kEth8, kHostA, kVid2), false));  // another VLAN: no move
    EXPECT_EQ(table.size(), 2U);
    EXPECT_EQ(table.portOf({kBridge, kVid1}, kHostA), kEth0);
    EXPECT_EQ(table.portOf({kBridge, kVid2}, kHostA), kEth8);
    EXPECT_FALSE(table.portOf({kBridge, 1003}, kHostA));  // a third VLAN knows nothing
    EXPECT_FALSE(table.portOf({kBridge, kVid1}, kHostB));
    EXPECT_FALSE(table.portOf({kBridge + 1, kVid1}, kHostA));
    table.update(fdb(kEth0, kHostA, kVid2), true);  // not the entry's port: ignored
    EXPECT_EQ(table.portOf({kBridge, kVid2}, kHostA), kEth8);
    table.update(fdb(kEth8, kHostA, kVid2), true);
    EXPECT_FALSE(table.portOf({kBridge, kVid2}, kHostA));
    EXPECT_EQ(table.portOf({kBridge, kVid1}, kHostA), kEth0);  // the other VLAN's stays
}

// ---- the daemon -------------------------------------------------------------------------

// `Bridge` (VLAN-aware, no address, not managed), Vlan1001 and Vlan1002 on it, Ethernet0 and
// Ethernet8 members of `Bridge`; the rails' gateways on the SVIs.
class HostroutedVlanAware : public HostroutedHarness {
  protected:
    void seedKernel() override {
        HostroutedHarness::seedKernel();
        auto bridge = link(kBridge, "Bridge", true);
        bridge.kind = "bridge";
        kernel->setLink(bridge);
        kernel->setLink(vlanDevice(kVlan1001, "Vlan1001", kVid1));
        kernel->setLink(vlanDevice(kVlan1002, "Vlan1002", kVid2));
        member(kEth0, "Ethernet0", true);
        member(kEth8, "Ethernet8", true);
        kernel->addAddress({kVlan1001, *IpPrefix::parse("10.1.0.1/24")});
        kernel->addAddress({kVlan1002, *IpPrefix::parse("10.2.0.1/24")});
        for (const auto& f : seedFdb) kernel->setFdb(f);
        for (const auto& v : seedPortVlans) kernel->setPortVlans(v);
    }
    static json sviConfig() {
        auto doc = baseConfig();
        doc["HOSTROUTED_INTERFACE"] = {{"Vlan1001", json::object()}, {"Vlan1002", json::object()}};
        return doc;
    }
    void member(int index, const char* name, bool up) {
        auto l = link(index, name, up);
        l.master = kBridge;
        kernel->setLink(l);
    }
    void hostBehind(int port, uint16_t vid, const char* addr, MacAddr mac) {
        kernel->setFdb(fdb(port, mac, vid));
        kernel->setNeighbor(neighbor(vid == kVid1 ? kVlan1001 : kVlan1002, addr, mac));
    }
    std::vector<netlink::FdbEntry> seedFdb;
    std::vector<netlink::PortVlans> seedPortVlans;
};

TEST_F(HostroutedVlanAware, AHostIsPlacedByItsVlanAndMac) {
    startDaemon(configOf(sviConfig()));
    hostBehind(kEth0, kVid1, "10.1.0.10", kHostA);
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan1001);
    settle();
    EXPECT_EQ(stateField("HOST_ROUTE_TABLE|10.1.0.10", "ifname"), "Vlan1001");
    EXPECT_EQ(stateField("HOST_ROUTE_TABLE|10.1.0.10", "port"), "Ethernet0");
}

TEST_F(HostroutedVlanAware, AMacLearnedInAnotherVlanDoesNotPlaceTheHost) {
    startDaemon(configOf(sviConfig()));
    kernel->setFdb(fdb(kEth0, kHostA, kVid2));  // behind Ethernet0, but in VLAN 1002
    kernel->setNeighbor(neighbor(kVlan1001, "10.1.0.10", kHostA));
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), 0);
    EXPECT_EQ(prober->probesTo(ip("10.1.0.10")), 1U);  // asked, as an unknown MAC is
    kernel->setFdb(fdb(kEth8, kHostA, kVid2));         // a move in VLAN 1002: not ours
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), 0);
    kernel->setFdb(fdb(kEth0, kHostA, kVid1));  // its answer, in its own VLAN
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan1001);
}

TEST_F(HostroutedVlanAware, TheSameMacInTwoVlansIsTwoHostsBehindTwoMembers) {
    startDaemon(configOf(sviConfig()));
    hostBehind(kEth0, kVid1, "10.1.0.10", kHostA);
    hostBehind(kEth8, kVid2, "10.2.0.10", kHostA);
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan1001);
    EXPECT_EQ(routes->routedVia(ip("10.2.0.10")), kVlan1002);
    settle();
    EXPECT_EQ(stateField("HOST_ROUTE_TABLE|10.2.0.10", "port"), "Ethernet8");
    member(kEth8, "Ethernet8", false);
    EXPECT_EQ(routes->routedVia(ip("10.2.0.10")), 0);
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan1001);  // VLAN 1001's is behind Ethernet0
}

TEST_F(HostroutedVlanAware, AMemberGoingDownOrLeavingTheBridgeWithdrawsItsHostsAtOnce) {
    startDaemon(configOf(sviConfig()));
    hostBehind(kEth0, kVid1, "10.1.0.10", kHostA);
    hostBehind(kEth8, kVid1, "10.1.0.11", kHostB);
    member(kEth0, "Ethernet0", false);  // the link event alone
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), 0);
    EXPECT_EQ(routes->routedVia(ip("10.1.0.11")), kVlan1001);
    kernel->setNeighbor(neighbor(kVlan1001, "10.1.0.10", kHostA, NUD_STALE));
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), 0);  // not while its member is down
    const size_t probesBefore = prober->probesTo(ip("10.1.0.10"));
    kernel->removeFdb(kBridge, kHostA, kVid1);  // the bridge flushes the member's entries
    member(kEth0, "Ethernet0", true);
    EXPECT_GT(prober->probesTo(ip("10.1.0.10")), probesBefore);
    kernel->setFdb(fdb(kEth0, kHostA, kVid1));
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan1001);
    kernel->setLink(link(kEth8, "Ethernet8", true));  // nomaster: out of `Bridge`
    EXPECT_EQ(routes->routedVia(ip("10.1.0.11")), 0);
}

TEST_F(HostroutedVlanAware, AHostMovingToAnotherMemberFollowsItsVlansEntry) {
    startDaemon(configOf(sviConfig()));
    hostBehind(kEth0, kVid1, "10.1.0.10", kHostA);
    kernel->setFdb(fdb(kEth8, kHostA, kVid1));  // moved within VLAN 1001
    settle();
    EXPECT_EQ(stateField("HOST_ROUTE_TABLE|10.1.0.10", "port"), "Ethernet8");
    member(kEth0, "Ethernet0", false);  // its old member no longer concerns it
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan1001);
    member(kEth8, "Ethernet8", false);
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), 0);
}

TEST_F(HostroutedVlanAware, ABindingsPortIsEnforcedBehindAVlanDevice) {
    auto doc = sviConfig();
    doc["HOSTROUTED_BINDING"]["10.1.0.10"] = {{"ifname", "Vlan1001"}, {"port", "Ethernet0"}};
    startDaemon(configOf(doc));
    hostBehind(kEth8, kVid1, "10.1.0.10", kHostB);  // another server claims the address
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), 0);
    settle();
    EXPECT_EQ(stateField("HOST_CLAIM_TABLE|10.1.0.10|Vlan1001", "reason"), "bound-elsewhere");
    hostBehind(kEth0, kVid1, "10.1.0.10", kHostA);  // the planned server, where it is cabled
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan1001);
    kernel->setFdb(fdb(kEth8, kHostA, kVid1));  // behind the wrong member: withdrawn
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), 0);
}

TEST_F(HostroutedVlanAware, ARestartAdoptsTheSvisRoutesWithoutTouchingThem) {
    leftoverRoutes.push_back({ip("10.1.0.10"), kVlan1001, 10, 201});
    leftoverRoutes.push_back({ip("10.2.0.10"), kVlan1002, 10, 201});
    seedFdb.push_back(fdb(kEth0, kHostA, kVid1));
    seedFdb.push_back(fdb(kEth8, kHostA, kVid2));
    seedNeighbors.push_back(neighbor(kVlan1001, "10.1.0.10", kHostA, NUD_STALE));
    seedNeighbors.push_back(neighbor(kVlan1002, "10.2.0.10", kHostA, NUD_STALE));
    startDaemon(configOf(sviConfig()));
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan1001);
    EXPECT_EQ(routes->routedVia(ip("10.2.0.10")), kVlan1002);
    EXPECT_EQ(routes->writes, 0U);
    settle();
    EXPECT_EQ(stateField("HOST_ROUTE_TABLE|10.2.0.10", "port"), "Ethernet8");
}

netlink::PortVlans vlansOf(int port, std::set<uint16_t> vlans) {
    return {port, kBridge, std::move(vlans)};
}

// `bridge vlan del vid 1001 dev Ethernet0` while Ethernet0 stays in VLAN 1002: the port's
// new list withdraws its host on Vlan1001 at once (the FDB flush alone looks like ageing),
// leaves its host on Vlan1002 and the other member's host on Vlan1001 alone, and when the
// port joins again the waiting host is probed and routed once the bridge learns it.
TEST_F(HostroutedVlanAware, AMemberLeavingOneVlanWithdrawsItsHostsThereOnly) {
    startDaemon(configOf(sviConfig()));
    kernel->setPortVlans(vlansOf(kEth0, {kVid1, kVid2}));
    kernel->setPortVlans(vlansOf(kEth8, {kVid1}));
    hostBehind(kEth0, kVid1, "10.1.0.10", kHostA);
    hostBehind(kEth0, kVid2, "10.2.0.10", kHostB);
    hostBehind(kEth8, kVid1, "10.1.0.11", kHostC);
    ASSERT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan1001);
    kernel->removeFdb(kBridge, kHostA, kVid1);  // the flush: taken for ageing, kept
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan1001);
    kernel->setPortVlans(vlansOf(kEth0, {kVid2}));
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), 0);
    EXPECT_EQ(routes->routedVia(ip("10.2.0.10")), kVlan1002);
    EXPECT_EQ(routes->routedVia(ip("10.1.0.11")), kVlan1001);
    // Heard again while the port is out of the VLAN, with a stale FDB entry: not routed.
    kernel->setFdb(fdb(kEth0, kHostA, kVid1));
    kernel->setNeighbor(neighbor(kVlan1001, "10.1.0.10", kHostA, NUD_STALE));
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), 0);
    kernel->removeFdb(kBridge, kHostA, kVid1);
    const size_t probesBefore = prober->probesTo(ip("10.1.0.10"));
    kernel->setPortVlans(vlansOf(kEth0, {kVid1, kVid2}));
    EXPECT_GT(prober->probesTo(ip("10.1.0.10")), probesBefore);
    kernel->setFdb(fdb(kEth0, kHostA, kVid1));  // its answer
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan1001);
    // No list after one: the port has no VLAN left.
    kernel->setPortVlans({kEth0, kBridge, std::nullopt});
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), 0);
    EXPECT_EQ(routes->routedVia(ip("10.2.0.10")), 0);
}

// After a restart the bridge-port dump gives the lists: a host heard behind a port that is
// no longer in its VLAN is not routed, one behind a member of it is.
TEST_F(HostroutedVlanAware, TheSnapshotsVlanListsPlaceTheHosts) {
    seedFdb.push_back(fdb(kEth0, kHostA, kVid1));  // left over: Ethernet0 left VLAN 1001
    seedFdb.push_back(fdb(kEth8, kHostB, kVid1));
    seedNeighbors.push_back(neighbor(kVlan1001, "10.1.0.10", kHostA));
    seedNeighbors.push_back(neighbor(kVlan1001, "10.1.0.11", kHostB));
    seedPortVlans.push_back(vlansOf(kEth0, {kVid2}));
    seedPortVlans.push_back(vlansOf(kEth8, {kVid1}));
    startDaemon(configOf(sviConfig()));
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), 0);
    EXPECT_EQ(routes->routedVia(ip("10.1.0.11")), kVlan1001);
}

// A VLAN-unaware bridge's ports send no list: nothing changes for its SVI.
TEST_F(HostroutedVlanAware, NoListMeansAnyVlan) {
    startDaemon(configOf(sviConfig()));
    kernel->setPortVlans({kEth0, kBridge, std::nullopt});
    hostBehind(kEth0, kVid1, "10.1.0.10", kHostA);
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan1001);
}

}  // namespace
}  // namespace twinrail::hostrouted::fixture
