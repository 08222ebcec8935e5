// PollClock + RateTracker against a simulated flex-counter poll: the device takes its
// counters on its own cadence and writes them a few ms later; pathqd reads every 100 ms,
// as Daemon::updateLink does (the last rate is held when nothing new was polled).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "twinrail/quality/poll_clock.h"
#include "twinrail/quality/quality.h"

namespace twinrail::quality {
namespace {

using namespace std::chrono_literals;
using Tp = Clock::time_point;

constexpr double kCapacityBps = 100e9;
constexpr double kHalfLineBytesPerSec = 0.5 * kCapacityBps / 8;

// Deterministic jitter in [-1, 1].
struct Jitter {
    uint32_t state = 12345;
    double next() {
        state = state * 1664525u + 1013904223u;
        return static_cast<double>(state >> 8) / static_cast<double>(1u << 24) * 2.0 - 1.0;
    }
};

Clock::duration ms(double v) {
    return std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double, std::milli>(v));
}

// The device: polls at the instants given, each poll's value is the bytes sent so far
// (traffic at `rate(t)` bytes/s, integrated in 1 ms steps) unless a reset restarted them.
struct Device {
    struct Poll {
        Tp at;
        Tp visible;  // written to COUNTERS_DB
        Counters value;
    };
    std::vector<Poll> polls;

    Counters read(Tp now) const {
        Counters c;
        for (const auto& p : polls)
            if (p.visible <= now) c = p.value;
        return c;
    }
};

struct Schedule {
    Tp start;
    std::function<Clock::duration(Tp)> period;  // cadence at a time
    std::function<double(Tp)> rate = [](Tp) { return kHalfLineBytesPerSec; };
    std::function<bool(Tp)> skip = [](Tp) { return false; };   // a missed poll
    std::function<bool(Tp)> reset = [](Tp) { return false; };  // counters restart here
    Clock::duration length = 60s;
    Clock::duration phase = 437ms;  // of the polls against the reads
    double jitterMs = 3;            // per poll, accumulating (each poll is scheduled from the last)
};

Device makeDevice(const Schedule& s) {
    Device d;
    Jitter j;
    double bytes = 0;
    Tp t = s.start + s.phase;
    Tp integrated = s.start;
    while (t < s.start + s.length) {
        for (; integrated < t; integrated += 1ms) bytes += s.rate(integrated) * 1e-3;
        if (s.reset(t)) bytes = 0;
        if (!s.skip(t)) {
            auto bytesU = static_cast<uint64_t>(bytes);
            d.polls.push_back({t, t + ms(6 + 4 * j.next()), {bytesU, bytesU / 1000, 0}});
        }
        t += s.period(t) + ms(s.jitterMs * j.next());
    }
    return d;
}

struct Sample {
    Tp at;
    double util;
    double oldUtil;  // the rate over the read interval: the method being replaced
};

// Reads every 100 ms (+-2 ms) and does what Daemon::updateLink does.
std::vector<Sample> sampleDevice(const Device& d, const Schedule& s,
                                 PollClock* clockOut = nullptr) {
    PollClock clock;
    RateTracker rates, oldRates;
    std::optional<RateTracker::Rates> last, oldLast;
    std::optional<Counters> prev;
    Jitter j{777};
    std::vector<Sample> out;
    for (Tp t = s.start; t < s.start + s.length; t += 100ms) {
        Tp now = t + ms(2 * j.next());
        Counters c = d.read(now);
        bool changed = !prev || c.txBytes != prev->txBytes || c.txPackets != prev->txPackets;
        prev = c;
        if (auto r = rates.update(c, clock.observe(changed, now))) last = r;
        if (auto r = oldRates.update(c, now)) oldLast = r;
        out.push_back({now, last ? last->txBps / kCapacityBps : 0.0,
                       oldLast ? oldLast->txBps / kCapacityBps : 0.0});
    }
    if (clockOut != nullptr) *clockOut = clock;
    return out;
}

double worstError(const std::vector<Sample>& samples, Tp from, Tp to, double truth) {
    double worst = 0;
    for (const auto& s : samples)
        if (s.at >= from && s.at < to) worst = std::max(worst, std::abs(s.util - truth));
    return worst;
}

// Within 2% of the true 50%: the reads jitter by +-2 ms and the polls by +-3 ms, and a
// rate over a learned period errs by the period's error only (a few ms in 1 s).
constexpr double kTolerance = 0.01;

const Tp kT0 = Tp{} + 1h;

TEST(PollClock, NoInstantBeforeTheFirstChange) {
    PollClock c;
    EXPECT_FALSE(c.observe(false, kT0));
    EXPECT_FALSE(c.observe(false, kT0 + 100ms));
    auto first = c.observe(true, kT0 + 200ms);
    ASSERT_TRUE(first);
    EXPECT_EQ(*first, kT0 + 200ms);
    EXPECT_EQ(c.observe(false, kT0 + 300ms), first);  // nothing new was polled
}

TEST(PollClock, OneSecondCadenceAtHalfLineRateIsSteadyAfterWarmUp) {
    Schedule s{kT0, [](Tp) { return Clock::duration(1s); }};
    PollClock clock;
    auto samples = sampleDevice(makeDevice(s), s, &clock);
    EXPECT_LE(worstError(samples, kT0 + 5s, kT0 + 60s, 0.5), kTolerance);
    ASSERT_TRUE(clock.period());
    EXPECT_NEAR(std::chrono::duration<double>(*clock.period()).count(), 1.0, 0.01);
    // The method it replaces: 0 for nine reads, then ten times the rate.
    double oldMax = 0, oldMin = 1;
    for (const auto& x : samples) {
        if (x.at >= kT0 + 5s) {
            oldMax = std::max(oldMax, x.oldUtil);
            oldMin = std::min(oldMin, x.oldUtil);
        }
    }
    EXPECT_GT(oldMax, 4.0);
    EXPECT_EQ(oldMin, 0.0);
}

TEST(PollClock, ChangesLandingOnTheReadsAddNoJitter) {
    // Each write lands within a ms or two of a read: the read that sees it flips between
    // two neighbours, so the intervals between sightings are 0.9, 1.0 or 1.1 s. A rate over
    // those would be +-10% noise; over the learned period it is not.
    Schedule s{kT0, [](Tp) { return Clock::duration(1s); }};
    s.phase = 494ms;  // + 6 ms write delay: visible at ~500 ms, when a read happens
    auto samples = sampleDevice(makeDevice(s), s);
    EXPECT_LE(worstError(samples, kT0 + 5s, kT0 + 60s, 0.5), kTolerance);
}

TEST(PollClock, PollsDriftingAcrossTheReadsCauseNoJump) {
    // syncd's FlexCounter starts each poll one interval after the previous start plus its
    // wake-up latency: the polls drift against pathqd's reads (here 1.5 ms a poll), so
    // the read that sees a change slides through the whole read interval and wraps.
    Schedule s{kT0, [](Tp) { return Clock::duration(1001500us); }};
    s.jitterMs = 0.5;
    s.length = 200s;
    auto samples = sampleDevice(makeDevice(s), s);
    EXPECT_LE(worstError(samples, kT0 + 5s, kT0 + 200s, 0.5), kTolerance);
}

TEST(PollClock, FollowsCadenceChanges) {
    // 1 s, then 2 s, then 500 ms, 20 s each.
    Schedule s{kT0, [](Tp t) {
                   if (t < kT0 + 20s) return Clock::duration(1s);
                   if (t < kT0 + 40s) return Clock::duration(2s);
                   return Clock::duration(500ms);
               }};
    PollClock clock;
    auto samples = sampleDevice(makeDevice(s), s, &clock);
    EXPECT_LE(worstError(samples, kT0 + 5s, kT0 + 60s, 0.5), kTolerance);
    ASSERT_TRUE(clock.period());
    EXPECT_NEAR(std::chrono::duration<double>(*clock.period()).count(), 0.5, 0.01);
}

TEST(PollClock, IdleCounterReadsZeroAndTrafficComesBackWithoutASpike) {
    Schedule s{kT0, [](Tp) { return Clock::duration(1s); }};
    s.rate = [](Tp t) { return t >= kT0 + 20s && t < kT0 + 40s ? 0.0 : kHalfLineBytesPerSec; };
    auto samples = sampleDevice(makeDevice(s), s);
    EXPECT_LE(worstError(samples, kT0 + 5s, kT0 + 20s, 0.5), kTolerance);
    // Idle: "no change for 2.5 periods" is idle, not a late poll.
    EXPECT_EQ(worstError(samples, kT0 + 24s, kT0 + 40s, 0.0), 0.0);
    // The first poll after the idle stretch carries one poll's traffic.
    EXPECT_LE(worstError(samples, kT0 + 41600ms, kT0 + 60s, 0.5), kTolerance);
    for (const auto& x : samples) {  // after the warm-up, nothing overshoots: no spike on resume
        if (x.at >= kT0 + 5s) {
            EXPECT_LE(x.util, 0.5 + kTolerance);
        }
    }
}

TEST(PollClock, CounterResetGivesNoRateForThatStep) {
    Schedule s{kT0, [](Tp) { return Clock::duration(1s); }};
    bool done = false;
    s.reset = [&done](Tp t) {  // syncd restarts once, between two polls
        if (done || t < kT0 + 20s) return false;
        done = true;
        return true;
    };
    auto samples = sampleDevice(makeDevice(s), s);
    // The reset step yields nothing, so the last rate is held: never a huge or a
    // negative one.
    EXPECT_LE(worstError(samples, kT0 + 5s, kT0 + 60s, 0.5), kTolerance);
}

TEST(PollClock, AMissedPollIsTwoPeriodsNotIdleAndNotDouble) {
    Schedule s{kT0, [](Tp) { return Clock::duration(1s); }};
    s.skip = [](Tp t) { return t > kT0 + 20s && t < kT0 + 21s; };
    auto samples = sampleDevice(makeDevice(s), s);
    EXPECT_LE(worstError(samples, kT0 + 5s, kT0 + 60s, 0.5), kTolerance);
}

TEST(PollClock, LearnsAPeriodLongerThanTheIdleThreshold) {
    // An operator sets POLL_INTERVAL from 1 s to 3 s: the first few 3 s steps look like
    // "idle, then a poll's worth"; three in a row that agree are a new period.
    Schedule s{kT0, [](Tp t) { return t < kT0 + 20s ? Clock::duration(1s) : Clock::duration(3s); }};
    PollClock clock;
    auto samples = sampleDevice(makeDevice(s), s, &clock);
    EXPECT_LE(worstError(samples, kT0 + 5s, kT0 + 20s, 0.5), kTolerance);
    EXPECT_LE(worstError(samples, kT0 + 35s, kT0 + 60s, 0.5), kTolerance);
    ASSERT_TRUE(clock.period());
    EXPECT_NEAR(std::chrono::duration<double>(*clock.period()).count(), 3.0, 0.02);
}

TEST(PollClock, IrregularIdleGapsDoNotChangeThePeriod) {
    // Bursty traffic: on and off for uneven stretches, polled every second.
    Schedule s{kT0, [](Tp) { return Clock::duration(1s); }};
    std::vector<std::pair<double, double>> on = {{0, 6},   {10, 13},   {19.5, 24},
                                                 {31, 33}, {36.2, 45}, {52, 60}};
    s.rate = [on](Tp t) {
        double x = std::chrono::duration<double>(t - kT0).count();
        for (auto [a, b] : on)
            if (x >= a && x < b) return kHalfLineBytesPerSec;
        return 0.0;
    };
    PollClock clock;
    auto samples = sampleDevice(makeDevice(s), s, &clock);
    ASSERT_TRUE(clock.period());
    EXPECT_NEAR(std::chrono::duration<double>(*clock.period()).count(), 1.0, 0.01);
    // Inside a burst, from its second poll on, the rate is right.
    EXPECT_LE(worstError(samples, kT0 + 38s, kT0 + 45s, 0.5), kTolerance);
    EXPECT_LE(worstError(samples, kT0 + 54s, kT0 + 60s, 0.5), kTolerance);
}

// The namespace test's flex-counter writer (SonicSource.UtilIsRightAtEveryFlexCounterCadence),
// replayed read by read: 1 s for 12 s, 2 s for 16 s, then 500 ms for 8 s, on the grid of
// pathqd's 100 ms reads, each write landing half a ms before the read that sees it (the
// writer and the reads start together). The poll at `lateAt` is taken 1 ms late (the
// writer woke late): its write lands just after that read, so the next read, 100 ms on,
// is the first to see it.
struct CadenceReplay {
    std::vector<Sample> samples;
    std::optional<Tp> latePoll;     // when the late poll took its counters (if one was)
    std::optional<Tp> lateInstant;  // the instant PollClock gave them
    std::vector<std::pair<Tp, std::optional<Tp>>> instants;  // every read's
};

CadenceReplay replayCadenceChanges(Clock::duration lateAt) {
    struct Write {
        Tp visible;
        Counters value;
    };
    const std::pair<Clock::duration, Clock::duration> segments[] = {
        {12s, 1000ms}, {16s, 2000ms}, {8s, 500ms}};
    CadenceReplay out;
    std::vector<Write> writes;
    Tp poll = kT0;
    for (auto [length, period] : segments) {
        for (Tp end = poll + length; poll < end; poll += period) {
            Tp taken = poll;
            if (poll - kT0 == lateAt) {
                taken += 1ms;
                out.latePoll = taken;
            }
            // A second of traffic before the first poll: that poll is a change too.
            auto bytes = static_cast<uint64_t>(
                kHalfLineBytesPerSec * std::chrono::duration<double>(taken - kT0 + 1s).count());
            writes.push_back({taken + 100us, {bytes, bytes / 1000, 0}});
        }
    }
    PollClock clock;
    RateTracker rates;
    std::optional<RateTracker::Rates> last;
    uint64_t prev = 0;  // zeros until the first write
    for (Tp now = kT0 - 1s + 500us; now < kT0 + 36s; now += 100ms) {
        Counters c;
        for (const auto& w : writes)
            if (w.visible <= now) c = w.value;
        bool changed = c.txBytes != prev;
        prev = c.txBytes;
        auto at = clock.observe(changed, now);
        out.instants.emplace_back(now, at);
        if (changed && out.latePoll && now > *out.latePoll && !out.lateInstant)
            out.lateInstant = at;
        if (auto r = rates.update(c, at)) last = r;
        out.samples.push_back({now, last ? last->txBps / kCapacityBps : 0.0, 0.0});
    }
    return out;
}

TEST(PollClock, AChangeSeenAReadLateAfterACadenceChangeIsPlacedAtItsPoll) {
    // The namespace test's flake: 2.5 s after the switch to 500 ms, one write is seen a
    // read late. The windows since the switch span 5 polls, so the longest period they
    // allow is over 20 ms too long; carried forward by it, the instant was 27 ms after
    // the poll, the rate over that poll 5% low (2.8 points of utilisation), the next 5%
    // high.
    auto r = replayCadenceChanges(30500ms);
    ASSERT_TRUE(r.latePoll && r.lateInstant);
    double offMs = std::chrono::duration<double, std::milli>(*r.lateInstant - *r.latePoll).count();
    EXPECT_NEAR(offMs, 0.0, 1.0) << "the instant is that far from the poll";
    EXPECT_LE(worstError(r.samples, kT0 + 3s, kT0 + 36s, 0.5), kTolerance);
}

TEST(PollClock, AChangeSeenAReadLateKeepsTheRateAtEveryCadence) {
    // Any one poll seen a read late, from 3 s on: the rate stays right at every cadence.
    // The first two polls at 500 ms get no instant (nothing yet tells one seen late from a
    // cadence of 600 or 550 ms), so the rate from the 2 s polls is held over them.
    for (auto lateAt = Clock::duration(3s); lateAt < 36s; lateAt += 500ms) {
        auto r = replayCadenceChanges(lateAt);
        if (!r.latePoll) continue;  // no poll then
        EXPECT_LE(worstError(r.samples, kT0 + 3s, kT0 + 36s, 0.5), kTolerance)
            << "the poll at " << std::chrono::duration<double>(lateAt).count()
            << " s seen a read late";
    }
}

TEST(PollClock, TheFirstTwoPollsAtANewCadenceGetNoInstant) {
    // After the 2 s poll at 28 s, the polls come every 500 ms. From the read that sees the
    // poll at 28.5 s to the one before the read that sees the poll at 29.5 s, no instant:
    // with one or two windows at the new cadence, a poll seen a read late looks like a
    // cadence of 600 or 550 ms. The third poll has one, at its poll.
    auto r = replayCadenceChanges(Clock::duration::max());
    for (const auto& [read, instant] : r.instants) {
        if (read < kT0) continue;  // before the first change: none yet
        bool withheld = read > kT0 + 28500ms && read < kT0 + 29500ms;
        EXPECT_EQ(instant.has_value(), !withheld)
            << "read at " << std::chrono::duration<double>(read - kT0).count() << " s";
        if (read > kT0 + 29500ms && read < kT0 + 29600ms) {
            ASSERT_TRUE(instant);
            double atMs = std::chrono::duration<double, std::milli>(*instant - kT0).count();
            EXPECT_NEAR(atMs, 29500, 1.0);
        }
    }
    EXPECT_LE(worstError(r.samples, kT0 + 3s, kT0 + 36s, 0.5), kTolerance);
}

TEST(PollClock, ACounterThatGoesIdleRightAfterACadenceChangeReadsZero) {
    // Traffic stops just before the first 500 ms poll (20.937 s), whose instant is
    // withheld: idle needs no cadence, so the rate still drops to 0.
    Schedule s{kT0,
               [](Tp t) { return t < kT0 + 20s ? Clock::duration(1s) : Clock::duration(500ms); }};
    s.rate = [](Tp t) { return t < kT0 + 20600ms ? kHalfLineBytesPerSec : 0.0; };
    s.length = 40s;
    auto samples = sampleDevice(makeDevice(s), s);
    EXPECT_LE(worstError(samples, kT0 + 5s, kT0 + 20s, 0.5), kTolerance);
    EXPECT_EQ(worstError(samples, kT0 + 26s, kT0 + 40s, 0.0), 0.0);
}

TEST(QualityRates, TheSameInstantGivesNothingAndKeepsTheBaseline) {
    RateTracker r;
    EXPECT_FALSE(r.update({1000, 10, 0}, kT0));
    EXPECT_FALSE(r.update({1000, 10, 0}, kT0));  // the same poll read again
    auto rate = r.update({1000 + 125000000, 110, 0}, kT0 + 1s);
    ASSERT_TRUE(rate);
    EXPECT_NEAR(rate->txBps, 1e9, 1);
    EXPECT_FALSE(r.update({2000, 120, 0}, std::nullopt));  // instant unknown: baseline dropped
    EXPECT_FALSE(r.update({3000, 130, 0}, kT0 + 2s));      // a new baseline, no rate yet
    EXPECT_TRUE(r.update({4000, 140, 0}, kT0 + 3s));
}

}  // namespace
}  // namespace twinrail::quality
