// The ARS tc program's decisions (libs/ars/bpf/ars.bpf.c), driven through BPF_PROG_TEST_RUN
// with synthetic timestamps: the loaded program, the real maps, crafted frames. Flowlets,
// random choice, route changes, pins and forwarding; how a quality choice ranks the next
// hops is in ars_bpf_choice_test.cpp.
#include <gtest/gtest.h>
#include <linux/pkt_cls.h>

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "ars_bpf_fixture.h"

using namespace twinrail;
using namespace twinrail::ars;
using namespace twinrail::ars::test;

namespace {

TEST_F(ArsBpf, FlowletKeepsItsEgressWhileWithinIdleTimeEvenWhenBandsChange) {
    mode(AssignMode::FlowletQuality);
    twoUplinks();
    dp_->setPortBand(kUp1, 7);
    dp_->setPortBand(kUp2, 2);
    ASSERT_EQ(send(flow_, 1 * kMs), TC_ACT_REDIRECT);
    ASSERT_EQ(egress(), kUp1);
    dp_->setPortBand(kUp1, 0);  // now the worse one, but the flowlet has not paused
    for (uint64_t t = 1 * kMs + 100 * kUs; t < 3 * kMs; t += 200 * kUs) {
        ASSERT_EQ(send(flow_, t), TC_ACT_REDIRECT);
        EXPECT_EQ(egress(), kUp1) << "at " << t;
    }
    EXPECT_EQ(dp_->counters().newFlowlets, 1U);
    EXPECT_EQ(dp_->counters().moved, 0U);
}

TEST_F(ArsBpf, FlowletMovesToTheBetterPortAfterIdleTime) {
    mode(AssignMode::FlowletQuality);
    twoUplinks();
    dp_->setPortBand(kUp2, 2);
    ASSERT_EQ(send(flow_, 1 * kMs), TC_ACT_REDIRECT);
    ASSERT_EQ(egress(), kUp1);
    dp_->setPortBand(kUp1, 0);
    ASSERT_EQ(send(flow_, 1 * kMs + 300 * kUs), TC_ACT_REDIRECT);  // 300 us of silence
    EXPECT_EQ(egress(), kUp2);
    EXPECT_EQ(dp_->counters().newFlowlets, 2U);
    EXPECT_EQ(dp_->counters().moved, 1U);
}

TEST_F(ArsBpf, FlowletRandomRechoosesOnlyAfterIdleTime) {
    mode(AssignMode::FlowletRandom);
    twoUplinks();
    std::set<int> seen;
    uint64_t t = 1 * kMs;
    for (int i = 0; i < 64; ++i, t += 100 * kUs) send(flow_, t);  // never idle: one choice
    EXPECT_EQ(dp_->counters().newFlowlets, 1U);
    for (int i = 0; i < 64; ++i) {  // always idle: a new choice each time
        t += 1 * kMs;
        send(flow_, t);
        seen.insert(egress());
    }
    EXPECT_EQ(dp_->counters().newFlowlets, 65U);
    EXPECT_EQ(seen, (std::set<int>{kUp1, kUp2}));  // all on one: 2^-63
}

TEST_F(ArsBpf, PerPacketRandomSpraysOneFlowOverBothUplinks) {
    mode(AssignMode::PacketRandom);
    twoUplinks();
    std::set<int> seen;
    for (int i = 0; i < 64; ++i) {
        ASSERT_EQ(send(flow_, 1 * kMs), TC_ACT_REDIRECT);  // one instant: no idle time at all
        seen.insert(egress());
    }
    EXPECT_EQ(seen, (std::set<int>{kUp1, kUp2}));
    EXPECT_EQ(dp_->counters().newFlowlets, 64U);
}

TEST_F(ArsBpf, PerPacketQualityFollowsABandChangeOnTheNextPacket) {
    mode(AssignMode::PacketQuality);
    twoUplinks();
    dp_->setPortBand(kUp2, 3);
    send(flow_, 1 * kMs);
    EXPECT_EQ(egress(), kUp1);
    dp_->setPortBand(kUp1, 1);
    send(flow_, 1 * kMs + 1 * kUs);
    EXPECT_EQ(egress(), kUp2);
    EXPECT_EQ(dp_->counters().moved, 1U);
}

TEST_F(ArsBpf, RandomFollowsTheRouteWeights) {
    mode(AssignMode::PacketRandom);
    twoUplinks(3, 1);
    constexpr int kPackets = 4000;
    int onUp1 = 0;
    for (int i = 0; i < kPackets; ++i) {
        send(flow_, 1 * kMs);
        if (egress() == kUp1) ++onUp1;
    }
    // Expected 0.75; one standard deviation is 0.007, so this bound is about 7 of them.
    double share = static_cast<double>(onUp1) / kPackets;
    EXPECT_GT(share, 0.70);
    EXPECT_LT(share, 0.80);
}

TEST_F(ArsBpf, WithdrawnNexthopIsNotUsedOnTheNextPacketEvenWithinIdleTime) {
    mode(AssignMode::FlowletQuality);
    dp_->setRoute(prefix("10.2.0.0/16"),
                  {hop(kUp1, "169.254.0.1"), hop(kUp2, "169.254.0.1"), hop(kUp3, "169.254.0.1")});
    dp_->setPortBand(kUp2, 3);
    dp_->setPortBand(kUp3, 3);
    send(flow_, 1 * kMs);
    ASSERT_EQ(egress(), kUp1);
    dp_->setRoute(prefix("10.2.0.0/16"), {hop(kUp2, "169.254.0.1"), hop(kUp3, "169.254.0.1")});
    ASSERT_EQ(send(flow_, 1 * kMs + 10 * kUs), TC_ACT_REDIRECT);
    EXPECT_NE(egress(), kUp1);
    EXPECT_EQ(dp_->counters().moved, 1U);
}

TEST_F(ArsBpf, RouteRewrittenWithTheSameNexthopsKeepsTheFlowlet) {
    mode(AssignMode::FlowletQuality);
    twoUplinks();
    dp_->setPortBand(kUp2, 3);
    send(flow_, 1 * kMs);
    ASSERT_EQ(egress(), kUp1);
    dp_->setPortBand(kUp1, 0);
    // The same ports in another order (a new generation): kUp1 is still a next hop.
    dp_->setRoute(prefix("10.2.0.0/16"), {hop(kUp2, "169.254.0.1"), hop(kUp1, "169.254.0.1")});
    send(flow_, 1 * kMs + 10 * kUs);
    EXPECT_EQ(egress(), kUp1);
    EXPECT_EQ(dp_->counters().newFlowlets, 1U);
}

TEST_F(ArsBpf, PinnedPortIsLeftToTheKernelAndLeavesNoFlow) {
    mode(AssignMode::PacketRandom);
    twoUplinks();
    dp_->setPinned(kHostPort, true);
    EXPECT_EQ(send(flow_, 1 * kMs), TC_ACT_UNSPEC);
    EXPECT_TRUE(dp_->flows().empty());
    dp_->setPinned(kHostPort, false);
    EXPECT_EQ(send(flow_, 1 * kMs), TC_ACT_REDIRECT);
}

TEST_F(ArsBpf, NoRouteIsLeftToTheKernel) {
    mode(AssignMode::PacketRandom);
    twoUplinks();
    EXPECT_EQ(send(ipv4Udp("10.1.0.5", "10.3.0.7", 1), 1 * kMs), TC_ACT_UNSPEC);
    dp_->removeRoute(prefix("10.2.0.0/16"));
    EXPECT_EQ(send(flow_, 1 * kMs), TC_ACT_UNSPEC);
    EXPECT_TRUE(dp_->flows().empty());
    EXPECT_EQ(dp_->counters().passed, 2U);
    EXPECT_EQ(dp_->counters().steered, 0U);
}

TEST_F(ArsBpf, SingleNexthopRouteIsLeftToTheKernel) {
    mode(AssignMode::PacketRandom);
    dp_->setRoute(prefix("10.2.0.0/16"), {hop(kUp1, "169.254.0.1")});
    EXPECT_EQ(send(flow_, 1 * kMs), TC_ACT_UNSPEC);
    EXPECT_TRUE(dp_->flows().empty());
}

TEST_F(ArsBpf, RouteOfMoreThanSixteenNexthopsIsLeftToTheKernel) {
    mode(AssignMode::PacketRandom);
    std::vector<PathNexthop> hops;
    hops.reserve(17);
    for (int i = 0; i < 17; ++i) hops.push_back(hop(200 + i, "169.254.0.1"));
    dp_->setRoute(prefix("10.2.0.0/16"), hops);
    EXPECT_EQ(send(flow_, 1 * kMs), TC_ACT_UNSPEC);
}

TEST_F(ArsBpf, TtlOneFragmentsNonIpAndOtherHostsFramesAreLeftToTheKernel) {
    mode(AssignMode::PacketRandom);
    twoUplinks();
    EXPECT_EQ(send(ipv4Udp("10.1.0.5", "10.2.0.7", 1, 4791, 1), 1 * kMs), TC_ACT_UNSPEC);
    EXPECT_EQ(send(ipv4Udp("10.1.0.5", "10.2.0.7", 1, 4791, 64, 0x2000), 1 * kMs),
              TC_ACT_UNSPEC);  // more fragments
    EXPECT_EQ(send(ipv4Udp("10.1.0.5", "10.2.0.7", 1, 4791, 64, 0x0010), 1 * kMs),
              TC_ACT_UNSPEC);  // a later fragment
    EXPECT_EQ(send(ipv4Udp("10.1.0.5", "10.2.0.7", 1, 4791, 64, 0, /*toUs=*/false), 1 * kMs),
              TC_ACT_UNSPEC);
    Frame arp = ethernet(0x0806);
    arp.resize(42, 0);
    EXPECT_EQ(send(arp, 1 * kMs), TC_ACT_UNSPEC);
    EXPECT_EQ(send(ipv6Udp("2001:db8:1::5", "2001:db8:2::7", 1, 1), 1 * kMs), TC_ACT_UNSPEC);
    EXPECT_TRUE(dp_->flows().empty());
    EXPECT_EQ(dp_->counters().passed, 6U);
}

TEST_F(ArsBpf, Ipv4TtlIsDecrementedWithAValidChecksum) {
    mode(AssignMode::FlowletQuality);
    twoUplinks();
    dp_->setClockOverride(1 * kMs);
    auto out = dp_->testRun(flow_, kHostPort);
    ASSERT_EQ(out.action, TC_ACT_REDIRECT);
    ASSERT_EQ(out.frame.size(), flow_.size());
    EXPECT_EQ(out.frame[14 + 8], 63);
    EXPECT_EQ(ipChecksum(out.frame.data() + 14, 20), 0);  // a valid header sums to 0xffff
    EXPECT_EQ(std::memcmp(out.frame.data() + 34, flow_.data() + 34, flow_.size() - 34), 0);
    EXPECT_EQ(dp_->counters().steered, 1U);
}

TEST_F(ArsBpf, Ipv6IsSteeredWithHopLimitDecremented) {
    mode(AssignMode::FlowletQuality);
    dp_->setRoute(prefix("2001:db8:2::/48"), {hop(kUp1, "fe80::1"), hop(kUp2, "fe80::2")});
    dp_->setPortBand(kUp1, 2);
    dp_->setClockOverride(1 * kMs);
    auto out = dp_->testRun(ipv6Udp("2001:db8:1::5", "2001:db8:2::7", 1000), kHostPort);
    ASSERT_EQ(out.action, TC_ACT_REDIRECT);
    EXPECT_EQ(out.frame[14 + 7], 63);
    EXPECT_EQ(egress(), kUp2);
}

TEST_F(ArsBpf, Ipv6RouteWithAnIpv4GatewayIsLeftToTheKernel) {
    mode(AssignMode::PacketRandom);
    dp_->setRoute(prefix("2001:db8:2::/48"), {hop(kUp1, "169.254.0.1"), hop(kUp2, "fe80::2")});
    EXPECT_EQ(send(ipv6Udp("2001:db8:1::5", "2001:db8:2::7", 1000), 1 * kMs), TC_ACT_UNSPEC);
}

TEST_F(ArsBpf, LongestPrefixMatchPicksTheSlash32OverTheSlash24) {
    mode(AssignMode::FlowletQuality);
    dp_->setRoute(prefix("10.2.0.0/24"), {hop(kUp1, "169.254.0.1"), hop(kUp2, "169.254.0.1")});
    dp_->setRoute(prefix("10.2.0.7/32"), {hop(kUp3, "169.254.0.1"), hop(kUp4, "169.254.0.1")});
    dp_->setPortBand(kUp2, 1);
    dp_->setPortBand(kUp4, 1);
    send(ipv4Udp("10.1.0.5", "10.2.0.7", 1000), 1 * kMs);
    EXPECT_EQ(egress(), kUp3);
    dp_->setRoute(prefix("10.2.0.7/32"), {});  // a local route: the kernel's, not ours
    EXPECT_EQ(send(ipv4Udp("10.1.0.5", "10.2.0.7", 1000), 2 * kMs), TC_ACT_UNSPEC);
    dp_->removeRoute(prefix("10.2.0.7/32"));
    send(ipv4Udp("10.1.0.5", "10.2.0.7", 1000), 3 * kMs);
    EXPECT_EQ(egress(), kUp1);
}

TEST_F(ArsBpf, HostBitsOfAPrefixAreIgnored) {
    mode(AssignMode::PacketRandom);
    dp_->setRoute(prefix("10.2.3.4/16"), {hop(kUp1, "169.254.0.1"), hop(kUp2, "169.254.0.1")});
    EXPECT_EQ(send(flow_, 1 * kMs), TC_ACT_REDIRECT);
    dp_->removeRoute(prefix("10.2.0.0/16"));
    EXPECT_EQ(send(flow_, 1 * kMs), TC_ACT_UNSPEC);
}

TEST_F(ArsBpf, BadArgumentsAreRefusedWithTheirName) {
    EXPECT_THROW(BpfDatapath(100), std::invalid_argument);
    EXPECT_THROW(BpfDatapath(0), std::invalid_argument);
    try {
        dp_->setPortBand(kUp1, 8);
        ADD_FAILURE() << "band 8 accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("band 8 is not in 0..7"), std::string::npos);
    }
    EXPECT_THROW(dp_->setRoute(IpPrefix{}, {}), std::invalid_argument);
}

TEST(ArsAssignMode, NamesAreSonicsModeNames) {
    EXPECT_STREQ(assignModeName(AssignMode::FlowletQuality), "flowlet-quality");
    EXPECT_STREQ(assignModeName(AssignMode::FlowletRandom), "flowlet-random");
    EXPECT_STREQ(assignModeName(AssignMode::PacketQuality), "per-packet-quality");
    EXPECT_STREQ(assignModeName(AssignMode::PacketRandom), "per-packet-random");
}

}  // namespace
