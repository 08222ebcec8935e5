#include <gtest/gtest.h>

#include "twinrail/quality/quality.h"

namespace twinrail::quality {
namespace {

using namespace std::chrono_literals;

Params labParams() {
    Params p;
    p.referenceBps = 100e6;
    p.levels = 16;
    p.queueRefSeconds = 0.02;
    p.latencyRefSeconds = 0.01;
    p.minHold = 1s;
    p.raiseHold = 5s;
    p.confirmSamples = 3;
    return p;
}

TEST(QualityEvaluate, IdleLinkIsItsCapacity) {
    Signals s{true, 50e6, 10e6, 0, 0, std::nullopt};
    auto b = evaluate(s, labParams());
    EXPECT_DOUBLE_EQ(b.congestion, 0);
    EXPECT_DOUBLE_EQ(b.usableBps, 50e6);
    EXPECT_DOUBLE_EQ(b.level, 8);
}

TEST(QualityEvaluate, UtilisationBelowTheKneeCostsNothing) {
    Signals s{true, 100e6, 79e6, 0, 0, std::nullopt};
    EXPECT_DOUBLE_EQ(evaluate(s, labParams()).congestion, 0);
    s.txBps = 90e6;  // halfway between the knee (0.8) and 1
    EXPECT_NEAR(evaluate(s, labParams()).congestion, 0.5, 1e-9);
}

TEST(QualityEvaluate, WorstSignalWinsAndPenaltyIsCapped) {
    auto p = labParams();
    Signals s{true, 100e6, 0, 250000, 0, std::nullopt};  // 20 ms of queue = full
    auto b = evaluate(s, p);
    EXPECT_DOUBLE_EQ(b.congestion, 1);
    EXPECT_DOUBLE_EQ(b.usableBps, 75e6);           // maxPenalty 0.25
    s = Signals{true, 100e6, 0, 0, 0.005, 0.002};  // half the drop ref, 20% of latency ref
    EXPECT_NEAR(evaluate(s, p).congestion, 0.5, 1e-9);
}

TEST(QualityEvaluate, DownOrUnknownCapacityIsZero) {
    EXPECT_DOUBLE_EQ(evaluate(Signals{false, 100e6, 0, 0, 0, std::nullopt}, labParams()).level, 0);
    EXPECT_DOUBLE_EQ(evaluate(Signals{true, 0, 0, 0, 0, std::nullopt}, labParams()).level, 0);
}

TEST(QualityFilter, NoisyLinkPublishesOnce) {
    Filter f(labParams());
    auto t = Clock::time_point{} + 1h;
    EXPECT_TRUE(f.update(8.0, true, t));
    int changes = 0;
    for (int i = 1; i <= 600; ++i) {  // 60 s of +-1.2 level noise around 8
        double noise = (i % 3 == 0 ? 1.2 : (i % 3 == 1 ? -1.2 : 0.3));
        changes += f.update(8.0 + noise, true, t + i * 100ms) ? 1 : 0;
    }
    EXPECT_EQ(changes, 0);
    EXPECT_EQ(f.published(), 8);
}

TEST(QualityFilter, StepPublishesTheNewLevelAfterConfirmation) {
    Filter f(labParams());
    auto t = Clock::time_point{} + 1h;
    f.update(16, true, t);
    EXPECT_FALSE(f.update(3.2, true, t + 2000ms));
    EXPECT_FALSE(f.update(3.1, true, t + 2100ms));
    EXPECT_TRUE(f.update(3.3, true, t + 2200ms));  // third sample out of band
    EXPECT_EQ(f.published(), 3);                   // the step, not the lagging EWMA
}

TEST(QualityFilter, HoldTimesBoundTheChangeRate) {
    auto p = labParams();  // minHold 1 s, raiseHold 5 s
    p.fastDrop = 0;        // (the halving below would be let through at once)
    Filter f(p);
    auto t = Clock::time_point{} + 1h;
    f.update(16, true, t);
    // A drop confirmed within a few samples is still held until 1 s after the last change.
    auto changedAt = [&f](Clock::time_point from, double level) {
        for (int i = 1; i <= 100; ++i)
            if (f.update(level, true, from + i * 100ms)) return from + i * 100ms;
        return from + 1h;
    };
    auto drop = changedAt(t, 8);
    EXPECT_EQ(drop - t, 1000ms);
    EXPECT_EQ(f.published(), 8);
    EXPECT_GT(f.suppressed(), 0u);
    // A raise right after waits for raiseHold, although it is confirmed at once.
    auto raise = changedAt(drop, 16);
    EXPECT_EQ(raise - drop, 5000ms);
    EXPECT_EQ(f.published(), 16);
}

TEST(QualityFilter, ALinkBackAtItsCapacityLevelIsRaisedFromOneLevelBelow) {
    // Congestion takes a link one level down (a raw 1.2 below, confirmed); then it is idle
    // again and its raw level is exactly its capacity's. The EWMA only approaches that,
    // one level from the published one: at the band's edge, which must count as outside.
    Filter f(labParams());  // minHold 1 s, raiseHold 5 s, 3 samples, hysteresis 0.5
    auto t = Clock::time_point{} + 1h;
    f.update(16, true, t);
    auto at = t;
    for (int i = 0; i < 100 && f.published() == 16; ++i) f.update(14.8, true, at += 100ms);
    ASSERT_EQ(f.published(), 15);
    const auto dropped = at;
    for (int i = 0; i < 600 && f.published() == 15; ++i) f.update(16, true, at += 100ms);
    EXPECT_EQ(f.published(), 16) << "stuck one level below a steady raw level";
    // When: once the EWMA is within a thousandth of a level (2 s x ln(1200) = 14 s), past
    // raiseHold. Not before the band's edge either: a raw 0.99 level away stays.
    EXPECT_LT(at - dropped, 20s);
    EXPECT_GT(at - dropped, 10s);
    Filter g(labParams());
    g.update(16, true, t);
    at = t;
    for (int i = 0; i < 100 && g.published() == 16; ++i) g.update(14.8, true, at += 100ms);
    for (int i = 0; i < 600; ++i) EXPECT_FALSE(g.update(15.99, true, at += 100ms));
    EXPECT_EQ(g.published(), 15);
}

TEST(QualityFilter, LargeDropPassesTheHoldSmallStepsAndRaisesDoNot) {
    Filter f(labParams());  // minHold 1 s, raiseHold 5 s, 3 samples, fastDrop 0.3
    auto t = Clock::time_point{} + 1h;
    f.update(16, true, t);
    // The EWMA still far away, the hold not over: three raw samples of a lost capacity.
    EXPECT_FALSE(f.update(3.9, true, t + 100ms));
    EXPECT_FALSE(f.update(4.1, true, t + 200ms));
    EXPECT_TRUE(f.update(4.0, true, t + 300ms));
    EXPECT_EQ(f.published(), 4);  // the highest of them: no overshoot
    EXPECT_EQ(f.fastDrops(), 1u);
    // A second collapse right after: through again.
    f.update(1.4, true, t + 400ms);
    f.update(1.2, true, t + 500ms);
    EXPECT_TRUE(f.update(1.3, true, t + 600ms));
    EXPECT_EQ(f.published(), 1);
    // Recovery waits for raiseHold as before.
    for (int i = 7; i < 56; ++i) EXPECT_FALSE(f.update(16, true, t + i * 100ms)) << i;
    EXPECT_TRUE(f.update(16, true, t + 5600ms));
}

TEST(QualityFilter, CongestionAloneNeverTakesTheFastPath) {
    // maxPenalty 0.25 < fastDrop 0.3: the most congestion can take off is held as usual.
    Filter f(labParams());
    auto t = Clock::time_point{} + 1h;
    f.update(16, true, t);
    Signals s{true, 100e6, 100e6, 250000, 0, std::nullopt};  // full, queue at the ref
    double congested = evaluate(s, labParams()).level;
    EXPECT_NEAR(congested, 12, 1e-9);
    int changes = 0;
    for (int i = 1; i <= 9; ++i) changes += f.update(congested, true, t + i * 100ms);
    EXPECT_EQ(changes, 0) << "published within minHold";
    EXPECT_EQ(f.fastDrops(), 0u);
}

TEST(QualityFilter, DownIsImmediateAndNeverBelowOneWhenUp) {
    Filter f(labParams());
    auto t = Clock::time_point{} + 1h;
    f.update(0.2, true, t);
    EXPECT_EQ(f.published(), 1);  // a live link is thinned, not removed
    EXPECT_TRUE(f.update(0, false, t + 100ms));
    EXPECT_EQ(f.published(), 0);
    EXPECT_TRUE(f.update(12, true, t + 200ms));  // back up: no history to damp against
    EXPECT_EQ(f.published(), 12);
}

TEST(QualityRates, CountersGoingBackwardsGiveNoRate) {
    RateTracker r;
    auto t = Clock::time_point{} + 1h;
    EXPECT_FALSE(r.update({1000, 10, 0}, t));
    auto rate = r.update({1000 + 125000, 110, 10}, t + 100ms);
    ASSERT_TRUE(rate);
    EXPECT_NEAR(rate->txBps, 10e6, 1);
    EXPECT_NEAR(rate->dropRatio, 10.0 / 110.0, 1e-9);
    EXPECT_FALSE(r.update({5, 1, 0}, t + 200ms));  // counter reset
    EXPECT_TRUE(r.update({10, 2, 0}, t + 300ms));
}

TEST(QualityEvaluate, EcnMarksPausesAndStormsAreCongestionWithTheirCause) {
    auto p = labParams();
    Signals s{true, 100e6, 0, 0, 0, std::nullopt};
    EXPECT_STREQ(evaluate(s, p).cause, "none");
    s.ecnMarkRatio = 0.05;  // half of ecnRefRatio 0.1: a link that marks and drops nothing
    auto b = evaluate(s, p);
    EXPECT_NEAR(b.congestion, 0.5, 1e-9);
    EXPECT_STREQ(b.cause, "ecn");
    EXPECT_DOUBLE_EQ(b.usableBps, 100e6 * (1 - 0.25 * 0.5));
    s.pauseRxPps = 800;  // 80% of pauseRefPps: the pause is now the worst
    b = evaluate(s, p);
    EXPECT_NEAR(b.congestion, 0.8, 1e-9);
    EXPECT_STREQ(b.cause, "pause");
    s.pfcStorm = true;
    b = evaluate(s, p);
    EXPECT_DOUBLE_EQ(b.congestion, 1);
    EXPECT_STREQ(b.cause, "pfc_storm");
    // Either input off (0): that signal no longer counts, the others still do.
    p.ecnRefRatio = 0;
    p.pauseRefPps = 0;
    s.pfcStorm = false;
    EXPECT_DOUBLE_EQ(evaluate(s, p).congestion, 0);
    s.txBps = 90e6;
    EXPECT_STREQ(evaluate(s, p).cause, "util");
}

TEST(QualityRates, PauseFramesBecomeRatesBetweenInstants) {
    RateTracker r;
    auto t = Clock::time_point{} + 1h;
    EXPECT_FALSE(r.update({0, 0, 0, 100, 7}, t));
    auto rate = r.update({0, 0, 0, 600, 7}, t + 500ms);
    ASSERT_TRUE(rate);
    EXPECT_NEAR(rate->pauseRxPps, 1000, 1e-6);
    EXPECT_NEAR(rate->pauseTxPps, 0, 1e-9);
    EXPECT_FALSE(r.update({0, 0, 0, 5, 7}, t + 1s));  // cleared: a reset, not a wrap
}

TEST(QualityMarkRatio, MarksOverPacketsHeldUntilTheCountersMoveAndZeroWhenStale) {
    MarkRatio m(30s);
    auto t = Clock::time_point{} + 1h;
    EXPECT_DOUBLE_EQ(m.update({100, 1000}, t), 0);           // a baseline
    EXPECT_DOUBLE_EQ(m.update({150, 2000}, t + 10s), 0.05);  // 50 of 1000
    // The same counters read again (SONiC's queue poll is 10 s): held, not 0.
    EXPECT_DOUBLE_EQ(m.update({150, 2000}, t + 19s), 0.05);
    EXPECT_DOUBLE_EQ(m.update({150, 2000}, t + 39s), 0.05);
    EXPECT_DOUBLE_EQ(m.update({150, 2000}, t + 40s), 0);  // 30 s without a move
    EXPECT_DOUBLE_EQ(m.update({150, 2500}, t + 41s), 0);  // packets, no marks
    EXPECT_DOUBLE_EQ(m.update({10, 10}, t + 42s), 0);     // a reset: a new baseline
    EXPECT_DOUBLE_EQ(m.update({20, 110}, t + 43s), 0.1);
    // More marks than packets in a step: the two were not read together; ignored.
    EXPECT_DOUBLE_EQ(m.update({200, 120}, t + 44s), 0.1);
}

TEST(QualityLatencyFloor, FollowsTheMinimumOverTheWindow) {
    LatencyFloor f(10s);
    auto t = Clock::time_point{} + 1h;
    EXPECT_DOUBLE_EQ(f.update(5.0, t), 5.0);  // a clock offset, not latency
    EXPECT_DOUBLE_EQ(f.update(5.02, t + 1s), 5.0);
    EXPECT_DOUBLE_EQ(f.update(4.99, t + 2s), 4.99);
    EXPECT_DOUBLE_EQ(f.update(5.05, t + 13s), 5.05);  // the old minima left the window
}

}  // namespace
}  // namespace twinrail::quality
