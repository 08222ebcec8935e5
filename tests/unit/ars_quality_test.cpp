// Port quality (libs/ars/include/twinrail/ars/quality.h): SAI's EWMA of past and future
// load in 8 bands, and global ARS's remote bands from the route's weights (FARE's rule).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "twinrail/ars/quality.h"

namespace {

using namespace twinrail::ars;

constexpr uint64_t kGbps = 1'000'000'000ULL;
constexpr uint64_t kMs = 1'000'000ULL;  // ns

// A sample of one millisecond on a 1G port sending `fraction` of its capacity.
PortSample sending(double fraction, uint64_t queuedBytes = 0) {
    const auto bytes = static_cast<uint64_t>(fraction * kGbps / 8 / 1000);
    return {bytes, kMs, kGbps, queuedBytes};
}

ArsConfig weights(uint32_t past, uint32_t future) {
    ArsConfig c;
    c.pastLoadWeight = past;
    c.futureLoadWeight = future;
    return c;
}

TEST(ArsBands, EightBandsSevenTheBest) {
    EXPECT_EQ(bandOf(0), 7);
    EXPECT_EQ(bandOf(0.124), 7);
    EXPECT_EQ(bandOf(0.125), 6);
    EXPECT_EQ(bandOf(0.5), 3);
    EXPECT_EQ(bandOf(0.99), 0);
    EXPECT_EQ(bandOf(1), 0);
    EXPECT_EQ(bandOf(3), 0);
    EXPECT_EQ(bandOf(-1), 7);
    EXPECT_EQ(bandOf(std::numeric_limits<double>::quiet_NaN()), 7);
}

TEST(ArsQuality, AnIdlePortIsTheBestBand) {
    PortQuality q(ArsConfig{});
    EXPECT_EQ(q.band(), kBestBand);  // before any sample
    EXPECT_EQ(q.update(sending(0)), 7);
    EXPECT_DOUBLE_EQ(q.pastLoad(), 0);
    EXPECT_DOUBLE_EQ(q.futureLoad(), 0);
}

TEST(ArsQuality, FullLoadIsTheWorstBandWhenPastLoadIsAllThatCounts) {
    PortQuality past(weights(1, 0));
    EXPECT_EQ(past.update(sending(1.0)), 0);
    EXPECT_DOUBLE_EQ(past.pastLoad(), 1);
    // Equal weights (SONiC's 16 and 16): a full port with an empty queue is half loaded.
    PortQuality both(ArsConfig{});
    EXPECT_EQ(both.update(sending(1.0)), 3);
    // ... and with a full queue as well, the worst.
    PortQuality full(ArsConfig{});
    EXPECT_EQ(full.update(sending(1.0, 1'000'000)), 0);
}

TEST(ArsQuality, AQueueLowersTheBand) {
    PortQuality q(ArsConfig{});                   // future load 0..1000 KB, equal weights
    EXPECT_EQ(q.update(sending(0, 500'000)), 5);  // (0 + 0.5) / 2 = 0.25
    PortQuality deep(ArsConfig{});
    EXPECT_EQ(deep.update(sending(0, 5'000'000)), 3);  // queue beyond the range: 1, halved
}

TEST(ArsQuality, WithoutCapacityThePortIsRankedByItsQueueAlone) {
    PortQuality q(ArsConfig{});
    EXPECT_EQ(q.update({1'000'000, kMs, 0, 500'000}), 3);  // 0.5 of the queue range
    EXPECT_LT(q.pastLoad(), 0);                            // never known
    PortQuality full(ArsConfig{});
    EXPECT_EQ(full.update({0, kMs, 0, 1'000'000}), 0);
    PortQuality idle(ArsConfig{});
    EXPECT_EQ(idle.update({123456, 0, kGbps, 0}), 7);  // no interval: no past load either
}

TEST(ArsQuality, TheProfileRangeBoundsEachLoad) {
    ArsConfig c = weights(1, 0);
    c.pastLoad = {20, 60};  // percent
    PortQuality q(c);
    EXPECT_EQ(q.update(sending(0.2)), 7);
    PortQuality mid(c);
    EXPECT_EQ(mid.update(sending(0.4)), 3);  // half way through 20..60
    PortQuality top(c);
    EXPECT_EQ(top.update(sending(0.6)), 0);
}

TEST(ArsQuality, TheAverageDecaysByAQuarterOfEachNewSample) {
    PortQuality q(weights(1, 0));
    ASSERT_EQ(q.update(sending(1.0)), 0);  // the first sample seeds the average
    double expected = 1;
    const int bands[] = {1, 3, 4, 5, 6, 6, 6, 7};
    for (int b : bands) {
        expected *= 1 - kEwmaNewSample;
        EXPECT_EQ(q.update(sending(0)), b) << expected;
        EXPECT_NEAR(q.pastLoad(), expected, 1e-12);
    }
    // And back up: one full sample after idle moves it a quarter of the way.
    PortQuality up(weights(1, 0));
    up.update(sending(0));
    up.update(sending(1.0));
    EXPECT_NEAR(up.pastLoad(), 0.25, 1e-12);
    EXPECT_EQ(up.band(), 5);
}

TEST(ArsQuality, ScalingFactorIsInUnitsOfTenGig) {
    EXPECT_EQ(capacityBps(0, 25 * kGbps), 25 * kGbps);
    EXPECT_EQ(capacityBps(1, 25 * kGbps), 10 * kGbps);
    EXPECT_EQ(capacityBps(40, 0), 400 * kGbps);
}

}  // namespace
