// planesteer's probe schedule and the policy's active peers, with time injected.
#include <gtest/gtest.h>

#include <algorithm>

#include "probe_schedule.h"
#include "steer_policy.h"

namespace twinrail::planesteer {
namespace {

using namespace std::chrono_literals;

IpAddr peerNo(int i) {
    return *IpAddr::parse("10.128.1." + std::to_string(i));
}

bool has(const std::vector<IpAddr>& v, const IpAddr& a) {
    return std::find(v.begin(), v.end(), a) != v.end();
}

TEST(ProbeSchedule, PeersSentToAreProbedEveryActiveIntervalTheRestEveryIdleInterval) {
    ProbeSchedule s({200ms, 20ms, 1000ms, 64});
    const std::vector<IpAddr> peers{peerNo(1), peerNo(2)};
    auto t = Clock::time_point{} + 100s;
    s.traffic(peerNo(1), t);
    std::map<IpAddr, int> probes;
    for (int i = 0; i < 50; ++i) {  // one second of 20 ms rounds
        auto r = s.round(peers, t + i * 20ms);
        for (const auto& p : r.probe) ++probes[p];
        if (i % 10 == 0) s.traffic(peerNo(1), t + i * 20ms);  // still sending to it
    }
    EXPECT_EQ(probes[peerNo(1)], 50);
    EXPECT_EQ(probes[peerNo(2)], 5) << "an idle peer costs what it did before";
    EXPECT_TRUE(s.active(peerNo(1)));
    EXPECT_FALSE(s.active(peerNo(2)));
    EXPECT_EQ(s.tick(), 20ms);
}

TEST(ProbeSchedule, APeerLeavesTheFastSetOnceItsTrafficIsOlderThanTheWindow) {
    ProbeSchedule s({200ms, 20ms, 1000ms, 64});
    const std::vector<IpAddr> peers{peerNo(1)};
    auto t = Clock::time_point{} + 100s;
    s.traffic(peerNo(1), t);
    auto r = s.round(peers, t);
    EXPECT_TRUE(has(r.nowActive, peerNo(1)));
    r = s.round(peers, t + 1000ms);
    EXPECT_TRUE(r.nowIdle.empty()) << "still inside the window";
    r = s.round(peers, t + 1020ms);
    EXPECT_TRUE(has(r.nowIdle, peerNo(1)));
    EXPECT_EQ(s.tick(), 200ms) << "nothing active: the loop wakes at the idle interval";
}

TEST(ProbeSchedule, TheFastSetIsCappedToTheMostRecentlySentTo) {
    ProbeSchedule s({200ms, 20ms, 1000ms, 3});
    std::vector<IpAddr> peers;
    auto t = Clock::time_point{} + 100s;
    for (int i = 1; i <= 10; ++i) {
        peers.push_back(peerNo(i));
        s.traffic(peerNo(i), t + i * 1ms);  // peer 10 the most recent
    }
    auto r = s.round(peers, t + 20ms);
    EXPECT_EQ(s.activeCount(), 3u);
    for (int i = 8; i <= 10; ++i) EXPECT_TRUE(s.active(peerNo(i))) << i;
    // The next round probes only the fast three: ten peers, a storm of none.
    r = s.round(peers, t + 40ms);
    EXPECT_EQ(r.probe.size(), 3u);
}

TEST(ProbeSchedule, NoFastProbesWhenTheProbeIsArpOrTheCapIsZero) {
    const std::vector<IpAddr> peers{peerNo(1)};
    auto t = Clock::time_point{} + 100s;
    ProbeSchedule arp({200ms, 20ms, 1000ms, 64});
    arp.traffic(peerNo(1), t);
    arp.round(peers, t, false);
    EXPECT_FALSE(arp.active(peerNo(1))) << "ARP is answered by the leaf's CPU";
    ProbeSchedule off({200ms, 20ms, 1000ms, 0});
    off.traffic(peerNo(1), t);
    off.round(peers, t);
    EXPECT_FALSE(off.active(peerNo(1)));
}

TEST(ProbeSchedule, ARemovedPeerIsForgotten) {
    ProbeSchedule s({200ms, 20ms, 1000ms, 64});
    auto t = Clock::time_point{} + 100s;
    s.traffic(peerNo(1), t);
    s.round({peerNo(1)}, t);
    s.remove(peerNo(1));
    EXPECT_FALSE(s.active(peerNo(1)));
    auto r = s.round({}, t + 20ms);
    EXPECT_TRUE(r.probe.empty());
    EXPECT_TRUE(r.nowIdle.empty()) << "already gone";
}

TEST(SteerPolicy, AnActivePeerIsLostInMissesActiveIntervalsButNotForItsIdlePast) {
    SteerPolicy p(2, {200ms, 3, 20ms});
    const IpAddr peer = peerNo(1);
    auto t = Clock::time_point{} + 100s;
    p.addPeer(peer, t);
    p.answered(peer, 0, t + 10ms);
    p.answered(peer, 1, t + 10ms);
    // Made active 150 ms after its last (idle) answer: not silent for that past.
    p.setActive(peer, true, t + 160ms);
    EXPECT_FALSE(p.pinFor(peer, t + 200ms));
    for (int i = 1; i <= 10; ++i) p.answered(peer, 0, t + 160ms + i * 20ms);  // plane 2 silent
    EXPECT_FALSE(p.pinFor(peer, t + 219ms)) << "within 3 x 20 ms of becoming active";
    EXPECT_EQ(p.pinFor(peer, t + 221ms), std::optional<size_t>(0)) << "61 ms: lost in plane 2";
    // Idle again: it gets the idle interval's patience from now on.
    p.setActive(peer, false, t + 360ms);
    p.answered(peer, 1, t + 370ms);
    EXPECT_FALSE(p.pinFor(peer, t + 380ms));
}

}  // namespace
}  // namespace twinrail::planesteer
