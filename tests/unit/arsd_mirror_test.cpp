// route_mirror.h: what the datapath holds for a prefix, from the kernel's routes alone.
#include <gtest/gtest.h>

#include "arsd_harness.h"
#include "route_mirror.h"
#include "twinrail/ars/quality.h"

namespace twinrail::arsd::test {
namespace {

netlink::RouteFeed::Routes table(const std::vector<netlink::KernelRoute>& rs) {
    netlink::RouteFeed::Routes out;
    for (const auto& r : rs) out[netlink::keyOf(r)] = r;
    return out;
}

const MirrorPolicy kUplinks{ars::NhgSelector::Interface, {11, 12}, {}, true, true};

TEST(ArsdMirror, MultipathOverEligiblePortsIsMirroredWithWeights) {
    auto rs = table({route("10.1.0.0/24", {{11, "169.254.0.1", 4}, {12, "fe80::2", 1}})});
    auto m = mirrorFor(rs, prefix("10.1.0.0/24"), kUplinks);
    ASSERT_TRUE(m.has_value());
    ASSERT_EQ(m->size(), 2u);
    EXPECT_EQ((*m)[0].ifindex, 11);
    EXPECT_EQ((*m)[0].gateway, ip("169.254.0.1"));
    EXPECT_EQ((*m)[0].weight, 4u);
    EXPECT_EQ((*m)[1].gateway, ip("fe80::2"));
    EXPECT_EQ((*m)[1].weight, 1u);
}

TEST(ArsdMirror, ANexthopOnAPortOutsideArsInterfacesLeavesTheRouteToTheKernel) {
    auto rs = table({route("10.1.0.0/24", {{11, "169.254.0.1", 1}, {13, "169.254.0.1", 1}})});
    auto m = mirrorFor(rs, prefix("10.1.0.0/24"), kUplinks);
    ASSERT_TRUE(m.has_value());
    EXPECT_TRUE(m->empty());
}

TEST(ArsdMirror, AbsentRouteIsRemovedAndLocalOrConnectedOnesStayTheKernels) {
    auto rs = table({route("10.0.0.1/32", {{11, nullptr, 1}}, 255, 0),
                     route("10.0.0.0/31", {{11, nullptr, 1}}, 254, 0),
                     route("10.9.0.0/24", {{11, "169.254.0.1", 1}, {12, "169.254.0.1", 1}})});
    EXPECT_FALSE(mirrorFor(rs, prefix("10.2.0.0/24"), kUplinks).has_value());
    auto local = mirrorFor(rs, prefix("10.0.0.1/32"), kUplinks);
    ASSERT_TRUE(local.has_value());
    EXPECT_TRUE(local->empty());
    auto connected = mirrorFor(rs, prefix("10.0.0.0/31"), kUplinks);
    ASSERT_TRUE(connected.has_value());
    EXPECT_TRUE(connected->empty());
    EXPECT_EQ(mirrorFor(rs, prefix("10.9.0.0/24"), kUplinks)->size(), 2u);
}

TEST(ArsdMirror, TheLowestMetricWinsAndOnlyUnicastIsSteered) {
    auto worse = route("10.1.0.0/24", {{11, "169.254.0.1", 1}}, 254, 100);
    auto best = route("10.1.0.0/24", {{11, "169.254.0.1", 1}, {12, "169.254.0.1", 1}}, 254, 20);
    auto blackhole = route("10.3.0.0/24", {}, 254, 20);
    blackhole.type = 6;  // RTN_BLACKHOLE
    auto rs = table({worse, best, blackhole});
    EXPECT_EQ(mirrorFor(rs, prefix("10.1.0.0/24"), kUplinks)->size(), 2u);
    EXPECT_TRUE(mirrorFor(rs, prefix("10.3.0.0/24"), kUplinks)->empty());
}

TEST(ArsdMirror, TheNexthopSelectorWantsEveryGatewayInArsNexthops) {
    auto rs = table({route("10.1.0.0/24", {{11, "10.0.0.1", 1}, {12, "10.0.0.3", 1}}),
                     route("10.2.0.0/24", {{11, "10.0.0.1", 1}, {12, "10.0.0.5", 1}})});
    MirrorPolicy p{ars::NhgSelector::Nexthop,
                   {11, 12},
                   {prefix("10.0.0.1/32"), prefix("10.0.0.3/32")},
                   true,
                   true};
    EXPECT_EQ(mirrorFor(rs, prefix("10.1.0.0/24"), p)->size(), 2u);
    EXPECT_TRUE(mirrorFor(rs, prefix("10.2.0.0/24"), p)->empty());
}

TEST(ArsdMirror, TheGlobalSelectorTakesEveryMultipathRouteAndFamiliesCanBeOff) {
    auto rs = table({route("10.1.0.0/24", {{11, "169.254.0.1", 1}, {13, "169.254.0.1", 1}}),
                     route("2001:db8::/64", {{11, "fe80::1", 1}, {12, "fe80::2", 1}})});
    MirrorPolicy p{ars::NhgSelector::Global, {}, {}, true, false};
    EXPECT_EQ(mirrorFor(rs, prefix("10.1.0.0/24"), p)->size(), 2u);
    EXPECT_TRUE(mirrorFor(rs, prefix("2001:db8::/64"), p)->empty());  // ipv6_enable false
}

}  // namespace
}  // namespace twinrail::arsd::test
