// How the ARS tc program's quality modes rank a route's next hops (libs/ars/bpf/ars.bpf.c):
// its own queue estimate (never below arsd's sampled backlog) first, then the band, then
// chance; global ARS measures the load against the path beyond. Through BPF_PROG_TEST_RUN
// with synthetic time (ars_bpf_fixture.h).
#include <gtest/gtest.h>
#include <linux/pkt_cls.h>

#include <algorithm>
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

TEST_F(ArsBpf, PerPacketQualityAlternatesOneFlowOverEquallyFastIdleUplinks) {
    mode(AssignMode::PacketQuality);
    twoUplinks();
    bothAt100Mbit();
    std::map<int, int> sent;
    for (int i = 0; i < 16; ++i) {  // one instant: nothing drains; bands equal (none written)
        ASSERT_EQ(send(flow_, 1 * kMs), TC_ACT_REDIRECT);
        ++sent[egress()];
    }
    EXPECT_EQ(sent[kUp1], 8);  // random ties would give 8 of 16 one time in five
    EXPECT_EQ(sent[kUp2], 8);
}

TEST_F(ArsBpf, GlobalPerPacketQualitySplitsByThePathBeyond) {
    mode(AssignMode::PacketQuality, /*global=*/true);
    twoUplinks(4, 1);  // pathqd: the path beyond up2 is a quarter as wide
    bothAt100Mbit();
    std::map<int, int> sent;
    for (int i = 0; i < 50; ++i) {
        send(flow_, 1 * kMs);
        ++sent[egress()];
    }
    EXPECT_NEAR(sent[kUp2], 10, 1);                     // 1 in 5
    mode(AssignMode::PacketQuality, /*global=*/false);  // local: the ports alone, equal
    for (int i = 0; i < 50; ++i) {
        send(flow_, 1 * kMs);
        ++sent[egress()];
    }
    EXPECT_NEAR(sent[kUp2], 50, 2);  // local: up2 catches up with up1's 40, then they alternate
}

TEST_F(ArsBpf, NewFlowletsInOneBandGoToTheShorterQueueWhichDrainsAtThePortRate) {
    mode(AssignMode::FlowletQuality);
    twoUplinks();
    bothAt100Mbit();
    ASSERT_EQ(send(flow_, 1 * kMs), TC_ACT_REDIRECT);
    const uint32_t slot = dp_->flows().front().slot;
    ASSERT_EQ(send(ipv4Udp("10.1.0.6", "10.2.0.7", 40001), 1 * kMs + 1 * kUs), TC_ACT_REDIRECT);
    auto flows = dp_->flows();
    ASSERT_EQ(flows.size(), 2U);
    EXPECT_NE(flows[0].ifindex, flows[1].ifindex);  // same band: the empty queue wins
    // A 46-byte frame drains in 3.7 us: later, equal queues again and random ties.
    std::set<int> seen;
    for (uint64_t t = 10 * kMs; t < 42 * kMs; t += 1 * kMs) {
        send(flow_, t);
        for (const auto& f : dp_->flows())
            if (f.slot == slot) seen.insert(f.ifindex);
    }
    EXPECT_EQ(seen, (std::set<int>{kUp1, kUp2}));  // all 32 on one: 2^-31
}

TEST_F(ArsBpf, FlowletIdleTimeCountsFromWhenItsLastPacketLeftThePort) {
    mode(AssignMode::FlowletQuality);
    twoUplinks();
    dp_->setPortRate(kUp1, k100Mbit);
    dp_->setPortBand(kUp2, 2);
    for (int i = 0; i < 100; ++i) send(flow_, 1 * kMs);  // 4.6 kB queued: 368 us on up1
    ASSERT_EQ(egress(), kUp1);
    dp_->setPortBand(kUp1, 0);
    send(flow_, 1 * kMs + 400 * kUs);  // 400 us after it arrived, 32 after it left: stays
    EXPECT_EQ(egress(), kUp1);
    send(flow_, 1 * kMs + 1100 * kUs);  // the one sent at 400 left at ~404: 696 us of silence
    EXPECT_EQ(egress(), kUp2);
}

// The program's own count misses what it did not send; arsd's sampled qdisc backlog is a
// floor under it, drained at the port rate since it was read.
TEST_F(ArsBpf, TheSampledBacklogIsAFloorUnderTheQueueEstimate) {
    mode(AssignMode::FlowletQuality);
    twoUplinks();
    bothAt100Mbit();
    dp_->setPortBacklog(kUp1, 125'000, 1 * kMs);  // 10 ms queued that the program never sent
    for (uint16_t port = 1000; port < 1008; ++port) {
        ASSERT_EQ(send(ipv4Udp("10.1.0.5", "10.2.0.7", port), 1 * kMs + 1 * kUs), TC_ACT_REDIRECT);
    }
    for (const auto& f : dp_->flows()) EXPECT_EQ(f.ifindex, kUp2) << "slot " << f.slot;
    // 11 ms on, drained: equal queues again, so new flows also go to up1 (random ties).
    bool up1 = false;
    for (uint16_t port = 2000; port < 2032; ++port) {
        send(ipv4Udp("10.1.0.5", "10.2.0.7", port), (12 + port - 2000) * kMs);
        for (const auto& f : dp_->flows()) up1 = up1 || f.ifindex == kUp1;
    }
    EXPECT_TRUE(up1);  // all 32 on up2: 2^-32
}

TEST_F(ArsBpf, AFlowletWaitsForTheSampledBacklogAheadOfItToLeave) {
    mode(AssignMode::FlowletQuality);  // idle 256 us
    twoUplinks();
    bothAt100Mbit();
    dp_->setPortBand(kUp2, 2);
    send(flow_, 1 * kMs);
    ASSERT_EQ(egress(), kUp1);
    dp_->setPortBacklog(kUp1, 25'000, 1 * kMs + 10 * kUs);  // 2 ms ahead of the next packet
    send(flow_, 1 * kMs + 100 * kUs);                       // leaves at ~3.1 ms
    dp_->setPortBand(kUp1, 0);
    send(flow_, 2 * kMs);  // 900 us after it arrived, still queued: stays
    EXPECT_EQ(egress(), kUp1);
    send(flow_, 3 * kMs + 500 * kUs);  // ~400 us after it left: a new flowlet, the better band
    EXPECT_EQ(egress(), kUp2);
}

// A GSO packet of 10 segments leaves as 10 frames with 10 sets of headers (42 bytes of
// Ethernet, IPv4 and UDP each): 46 + 9 x 42 = 424 bytes, more than five 46-byte frames.
TEST_F(ArsBpf, AGsoPacketIsCountedWithTheHeadersOfEverySegment) {
    mode(AssignMode::FlowletQuality);
    twoUplinks();
    bothAt100Mbit();
    const auto gso = ipv4Udp("10.1.0.5", "10.2.0.7", 1000);
    const auto plain = ipv4Udp("10.1.0.5", "10.2.0.7", 1001);
    ASSERT_EQ(send(gso, 1 * kMs, kHostPort, 10), TC_ACT_REDIRECT);
    const int gsoPort = egress();
    for (int i = 0; i < 5; ++i) ASSERT_EQ(send(plain, 1 * kMs), TC_ACT_REDIRECT);
    int plainPort = 0;
    for (const auto& f : dp_->flows())
        if (f.ifindex != gsoPort) plainPort = f.ifindex;
    ASSERT_NE(plainPort, 0) << "the second flow went to the one queued port";
    send(ipv4Udp("10.1.0.5", "10.2.0.7", 1002), 1 * kMs);  // 230 bytes queued against 424
    auto flows = dp_->flows();
    ASSERT_EQ(flows.size(), 3U);
    EXPECT_EQ(std::count_if(flows.begin(), flows.end(),
                            [plainPort](const auto& f) { return f.ifindex == plainPort; }),
              2);
}

TEST_F(ArsBpf, QualityPicksTheBestBandForEveryFlow) {
    mode(AssignMode::FlowletQuality);
    dp_->setRoute(prefix("10.2.0.0/16"), {hop(kUp1, "169.254.0.1"), hop(kUp2, "169.254.0.1"),
                                          hop(kUp3, "169.254.0.1"), hop(kUp4, "169.254.0.1")});
    dp_->setPortBand(kUp1, 3);
    dp_->setPortBand(kUp2, 6);
    dp_->setPortBand(kUp3, 2);
    dp_->setPortBand(kUp4, 5);
    for (uint16_t port = 1000; port < 1032; ++port)
        ASSERT_EQ(send(ipv4Udp("10.1.0.5", "10.2.0.7", port), 1 * kMs), TC_ACT_REDIRECT);
    auto flows = dp_->flows();
    ASSERT_GE(flows.size(), 8U);  // 32 flows in 64 slots
    for (const auto& f : flows) EXPECT_EQ(f.ifindex, kUp2) << "slot " << f.slot;
}

TEST_F(ArsBpf, QualityTiesAreBrokenAtRandom) {
    mode(AssignMode::PacketQuality);
    dp_->setRoute(prefix("10.2.0.0/16"),
                  {hop(kUp1, "169.254.0.1"), hop(kUp2, "169.254.0.1"), hop(kUp3, "169.254.0.1")});
    dp_->setPortBand(kUp3, 4);  // kUp1 and kUp2 tie at 7
    std::set<int> seen;
    for (int i = 0; i < 64; ++i) {
        send(flow_, 1 * kMs);
        seen.insert(egress());
    }
    EXPECT_EQ(seen, (std::set<int>{kUp1, kUp2}));
}

// FARE's rule: spine 1's path beyond is a quarter as wide (weight 1 of 4), so its uplink at
// 12-25% load (band 6) fills that path (band 7 - 4 x 1 = 3); spine 2's uplink is busier (5)
// with a full path beyond.
TEST_F(ArsBpf, GlobalAvoidsASpineWhoseRemotePathIsDegraded) {
    mode(AssignMode::FlowletQuality, /*global=*/true);
    twoUplinks(1, 4);
    dp_->setPortBand(kUp1, 6);
    dp_->setPortBand(kUp2, 5);
    ASSERT_EQ(send(flow_, 1 * kMs), TC_ACT_REDIRECT);
    EXPECT_EQ(egress(), kUp2);
}

TEST_F(ArsBpf, LocalArsIgnoresThePathBeyond) {
    mode(AssignMode::FlowletQuality, /*global=*/false);
    twoUplinks(1, 4);
    dp_->setPortBand(kUp1, 6);
    dp_->setPortBand(kUp2, 5);
    ASSERT_EQ(send(flow_, 1 * kMs), TC_ACT_REDIRECT);
    EXPECT_EQ(egress(), kUp1);
}

TEST_F(ArsBpf, GlobalLeavesAnIdlePortAtTheBestBandWhateverLiesBeyond) {
    mode(AssignMode::FlowletQuality, /*global=*/true);
    twoUplinks(1, 4);  // both idle: no band written
    std::set<int> seen;
    for (uint64_t t = 1 * kMs; t < 33 * kMs; t += 1 * kMs) {  // a new flowlet each time
        send(flow_, t);
        seen.insert(egress());
    }
    EXPECT_EQ(seen, (std::set<int>{kUp1, kUp2}));  // all 32 on one: 2^-31
}

}  // namespace
