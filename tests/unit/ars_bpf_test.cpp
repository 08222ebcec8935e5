// The ARS tc program's decisions (libs/ars/bpf/ars.bpf.c), driven through BPF_PROG_TEST_RUN
// with synthetic timestamps: the loaded program, the real maps, crafted frames. Root (or
// CAP_BPF); skipped only when the kernel refuses bpf() with EPERM.
#include <gtest/gtest.h>
#include <linux/pkt_cls.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "twinrail/ars/bpf_datapath.h"

using namespace twinrail;
using namespace twinrail::ars;

namespace {

using Frame = std::vector<uint8_t>;

constexpr int kHostPort = 10;  // where test packets arrive
constexpr int kUp1 = 101, kUp2 = 102, kUp3 = 103, kUp4 = 104;
constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kUs = 1'000;

uint16_t ipChecksum(const uint8_t* p, size_t n) {
    uint32_t acc = 0;
    for (size_t i = 0; i + 1 < n; i += 2) acc += (uint32_t{p[i]} << 8) | p[i + 1];
    while (acc >> 16) acc = (acc & 0xffff) + (acc >> 16);
    return static_cast<uint16_t>(~acc);
}

void put16(Frame& f, uint16_t v) {
    f.push_back(static_cast<uint8_t>(v >> 8));
    f.push_back(static_cast<uint8_t>(v & 0xff));
}

// Destination MAC 00:..:00: the loopback device's, so the test run's skb is PACKET_HOST.
Frame ethernet(uint16_t type, bool toUs = true) {
    Frame f(6, 0);
    if (!toUs) f[0] = 0x02, f[5] = 0x99;
    Frame src = {0x02, 0, 0, 0, 0, 1};
    f.insert(f.end(), src.begin(), src.end());
    put16(f, type);
    return f;
}

void udp(Frame& f, uint16_t sport, uint16_t dport) {
    put16(f, sport);
    put16(f, dport);
    put16(f, 12);
    put16(f, 0);  // no UDP checksum: the program never reads it
    f.insert(f.end(), {'a', 'r', 's', '!'});
}

Frame ipv4Udp(const char* src, const char* dst, uint16_t sport, uint16_t dport = 4791,
              uint8_t ttl = 64, uint16_t fragment = 0, bool toUs = true) {
    Frame f = ethernet(0x0800, toUs);
    size_t ip = f.size();
    f.insert(f.end(), {0x45, 0});
    put16(f, 20 + 12);
    put16(f, 0x1234);
    put16(f, fragment);
    f.insert(f.end(), {ttl, 17, 0, 0});
    auto s = *IpAddr::parse(src), d = *IpAddr::parse(dst);
    f.insert(f.end(), s.data(), s.data() + 4);
    f.insert(f.end(), d.data(), d.data() + 4);
    uint16_t sum = ipChecksum(f.data() + ip, 20);
    f[ip + 10] = static_cast<uint8_t>(sum >> 8);
    f[ip + 11] = static_cast<uint8_t>(sum & 0xff);
    udp(f, sport, dport);
    return f;
}

Frame ipv6Udp(const char* src, const char* dst, uint16_t sport, uint8_t hopLimit = 64) {
    Frame f = ethernet(0x86dd);
    f.insert(f.end(), {0x60, 0, 0, 0});
    put16(f, 12);
    f.insert(f.end(), {17, hopLimit});
    auto s = *IpAddr::parse(src), d = *IpAddr::parse(dst);
    f.insert(f.end(), s.data(), s.data() + 16);
    f.insert(f.end(), d.data(), d.data() + 16);
    udp(f, sport, 4791);
    return f;
}

PathNexthop hop(int ifindex, const char* gateway, uint32_t weight = 1) {
    PathNexthop h;
    h.ifindex = ifindex;
    h.gateway = *IpAddr::parse(gateway);
    h.weight = weight;
    return h;
}

IpPrefix prefix(const char* text) {
    return *IpPrefix::parse(text);
}

class ArsBpf : public ::testing::Test {
  protected:
    void SetUp() override {
        try {
            dp_ = std::make_unique<BpfDatapath>(64);
        } catch (const std::runtime_error& e) {
            if (std::string(e.what()).find(std::strerror(EPERM)) != std::string::npos)
                GTEST_SKIP() << "bpf() refused: " << e.what();
            FAIL() << e.what();
        }
    }
    void mode(AssignMode m, bool global = false, uint32_t idleUs = 256) {
        dp_->configure({m, idleUs, global});
    }
    // Two uplinks, 10.2.0.0/16 over both (FRR's onlink next hops).
    void twoUplinks(uint32_t w1 = 1, uint32_t w2 = 1) {
        dp_->setRoute(prefix("10.2.0.0/16"),
                      {hop(kUp1, "169.254.0.1", w1), hop(kUp2, "169.254.0.1", w2)});
    }
    int send(const Frame& f, uint64_t now, int in = kHostPort) {
        dp_->setClockOverride(now);
        return dp_->testRun(f, in).action;
    }
    // The egress of the one flow the test sent; 0 when the table is empty.
    int egress() {
        auto flows = dp_->flows();
        EXPECT_LE(flows.size(), 1U);
        return flows.empty() ? 0 : flows.front().ifindex;
    }
    std::unique_ptr<BpfDatapath> dp_;
    const Frame flow_ = ipv4Udp("10.1.0.5", "10.2.0.7", 40000);
};

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

constexpr uint64_t k100Mbit = 12'500'000;  // bytes per second: the queue estimate drains at it

TEST_F(ArsBpf, PerPacketQualityAlternatesOneFlowOverEquallyFastIdleUplinks) {
    mode(AssignMode::PacketQuality);
    twoUplinks();
    dp_->setPortRate(kUp1, k100Mbit);
    dp_->setPortRate(kUp2, k100Mbit);
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
    dp_->setPortRate(kUp1, k100Mbit);
    dp_->setPortRate(kUp2, k100Mbit);
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
    dp_->setPortRate(kUp1, k100Mbit);
    dp_->setPortRate(kUp2, k100Mbit);
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
