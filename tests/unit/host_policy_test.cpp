#include "host_policy.h"

#include <gtest/gtest.h>
#include <linux/neighbour.h>

using namespace twinrail;
using namespace twinrail::hostrouted;

namespace {

netlink::NeighborEntry neigh(const char* ip, uint16_t state, uint8_t flags = 0) {
    netlink::NeighborEntry n;
    n.ifindex = 7;
    n.ip = *IpAddr::parse(ip);
    n.mac = MacAddr{0x02, 0, 0, 0, 0, 0x10};
    n.state = state;
    n.flags = flags;
    return n;
}

const std::vector<IpPrefix> kSubnets = {*IpPrefix::parse("10.1.1.1/24"),
                                        *IpPrefix::parse("2001:db8:1::1/64"),
                                        *IpPrefix::parse("fe80::1/64")};

InterfaceView port() {
    return InterfaceView{true, true, kSubnets};
}

std::set<IpAddr> own() {
    return {*IpAddr::parse("10.1.1.1"), *IpAddr::parse("2001:db8:1::1")};
}

Verdict classify(const netlink::NeighborEntry& n, PolicyOptions o = {}, bool deleted = false,
                 InterfaceView v = port()) {
    return classifyNeighbor(n, deleted, v, own(), o);
}

}  // namespace

TEST(HostPolicy, AcceptsLiveStates) {
    for (int state : {NUD_REACHABLE, NUD_STALE, NUD_DELAY, NUD_PROBE, NUD_PERMANENT}) {
        auto s = static_cast<uint16_t>(state);
        auto v = classify(neigh("10.1.1.10", s));
        EXPECT_TRUE(v.accept) << netlink::nudStateName(s);
        EXPECT_EQ(v.source, Source::Local);
    }
    EXPECT_TRUE(classify(neigh("2001:db8:1::10", NUD_REACHABLE)).accept);
}

TEST(HostPolicy, WithdrawsUnresolvedAndDeleted) {
    EXPECT_EQ(classify(neigh("10.1.1.10", NUD_FAILED)).reason, Reason::NotResolved);
    EXPECT_EQ(classify(neigh("10.1.1.10", NUD_INCOMPLETE)).reason, Reason::NotResolved);
    EXPECT_EQ(classify(neigh("10.1.1.10", NUD_NONE)).reason, Reason::NotResolved);
    EXPECT_EQ(classify(neigh("10.1.1.10", NUD_REACHABLE), {}, true).reason, Reason::Deleted);
}

// zebra installs a remote VTEP's type-2 host as extern_learn NOARP (EVPN-MH-FACTS 4c): that
// host is behind another leaf, so it is never routed here, in any state.
TEST(HostPolicy, RemoteVtepEntriesAreNeverRouted) {
    EXPECT_EQ(classify(neigh("10.1.1.20", NUD_NOARP, NTF_EXT_LEARNED)).reason, Reason::RemoteVtep);
    EXPECT_EQ(classify(neigh("10.1.1.20", NUD_REACHABLE, NTF_EXT_LEARNED)).reason,
              Reason::RemoteVtep);
    EXPECT_EQ(classify(neigh("10.1.1.20", NUD_NOARP)).reason, Reason::NoArp);
    EXPECT_FALSE(classify(neigh("10.1.1.20", NUD_FAILED, NTF_EXT_LEARNED)).accept);
}

TEST(HostPolicy, IgnoresSpecialAddresses) {
    EXPECT_EQ(classify(neigh("169.254.0.1", NUD_PERMANENT)).reason, Reason::LinkLocal);
    EXPECT_EQ(classify(neigh("fe80::99", NUD_REACHABLE)).reason, Reason::LinkLocal);
    EXPECT_EQ(classify(neigh("224.0.0.5", NUD_REACHABLE)).reason, Reason::NotUnicast);
    EXPECT_EQ(classify(neigh("ff02::1", NUD_REACHABLE)).reason, Reason::NotUnicast);
    EXPECT_EQ(classify(neigh("255.255.255.255", NUD_REACHABLE)).reason, Reason::NotUnicast);
    EXPECT_EQ(classify(neigh("10.1.1.255", NUD_REACHABLE)).reason, Reason::NotUnicast);
    EXPECT_EQ(classify(neigh("10.1.1.1", NUD_REACHABLE)).reason, Reason::OwnAddress);
    EXPECT_EQ(classify(neigh("10.9.9.9", NUD_REACHABLE)).reason, Reason::OutsideSubnets);
    EXPECT_EQ(classify(neigh("2001:db8:9::1", NUD_REACHABLE)).reason, Reason::OutsideSubnets);
}

TEST(HostPolicy, RequiresUsableLinkAddress) {
    auto n = neigh("10.1.1.10", NUD_REACHABLE);
    n.mac.reset();
    EXPECT_EQ(classify(n).reason, Reason::NoLinkAddress);
    n.mac = MacAddr{};
    EXPECT_EQ(classify(n).reason, Reason::NoLinkAddress);
    n.mac = MacAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    EXPECT_EQ(classify(n).reason, Reason::NoLinkAddress);
}

TEST(HostPolicy, PortAndFamilyGates) {
    auto n = neigh("10.1.1.10", NUD_REACHABLE);
    InterfaceView unmanaged = port();
    unmanaged.managed = false;
    EXPECT_EQ(classify(n, {}, false, unmanaged).reason, Reason::NotManaged);
    InterfaceView down = port();
    down.operUp = false;
    EXPECT_EQ(classify(n, {}, false, down).reason, Reason::LinkDown);
    EXPECT_EQ(classify(n, PolicyOptions{false, true}).reason, Reason::FamilyDisabled);
    EXPECT_EQ(classify(neigh("2001:db8:1::10", NUD_REACHABLE), PolicyOptions{true, false}).reason,
              Reason::FamilyDisabled);
}
