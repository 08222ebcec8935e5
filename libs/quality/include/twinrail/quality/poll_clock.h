// When did the device take the counters we just read? SONiC's flex counters refresh
// COUNTERS_DB once per poll (1 s by default, configurable), the rows carry no timestamp,
// and pathqd reads them every sample period (100 ms). A rate over the read interval is
// then 0 nine times and 10x once. PollClock infers the poll instants from the changes
// themselves, so a rate can be taken between two polls. Pure: time is passed in.
//
// How:
//  * The poll that produced a changed value happened between the previous read and this
//    one: it lies in the window (previous read, this read].
//  * The polls are (nearly) evenly spaced, so any two windows bound the period by their
//    distance over the polls between them; over all recent windows (each widened by
//    `slack`, the device's own jitter) that range is exact (pairwise bounds, kept up to
//    date in O(windows) per change), and it narrows as windows accumulate. One change
//    seen a read late, or the polls drifting across the reads, pins it tightly.
//  * The instant of a poll is the latest one every window allows: its own read, unless
//    the earlier windows, carried forward by the longest period they allow, show that it
//    was seen late (the write landed just after a read). So the +-one-read jitter of
//    when a change is noticed does not become +-10% rate noise at 1 s; the longest
//    period errs only late, and by nothing for the recent windows that bind.
//  * Until the windows span many polls (at start, after a cadence change) the longest
//    period they allow is too long by up to a read over the polls they span, so a change
//    seen a read late would be placed that much after its poll (over 20 ms at 500 ms, 5
//    polls after a change: 4-5% on two rates). Where the reads that saw the last changes
//    came at one interval per poll (twice or more), that run carries it instead: to just
//    after the read that missed it. The first two polls (at start, or at a new cadence:
//    see below) have no such run: one interval cannot tell a late read from a longer
//    cadence.
//  * When the windows no longer fit one period, the oldest are dropped: the cadence
//    changed (1 s -> 500 ms) and the new one is learned within a few polls. A missed
//    poll, or a cadence that is a multiple of the old one, is a step of two polls.
//  * The first two polls at the new cadence have only the last old window and one or two
//    new ones: a change seen a read late is not told from a longer cadence (600 ms, not
//    500), up to +-20% on a rate at 500 ms. So they get no instant (no rate: the daemon
//    holds the one it has), and rates resume from the third. Not at start, where there is
//    no rate to hold (and an idle counter, whose rate is 0 wherever its instants are,
//    ends the wait).
//  * The cadence (period(), for telling idle from late) is learned from the intervals
//    between the reads that saw a change: the median of the latest few says which are
//    whole polls, and the period is the mean over the recent ones that agree.
//  * No change for `idleAfter` periods: the counter is idle, not late. The instant then
//    moves on by whole polls (confirmed by a later read), so a rate of 0 follows; when
//    traffic comes back, it arrived within the last poll.
//  * An interval that spans an idle stretch is not a poll interval (bursty traffic has
//    idle gaps of any length), unless `minHistory` of them in a row agree: then the poll
//    period itself grew (an operator set a longer POLL_INTERVAL), and it is learned.
//  * Until the first change, nothing is known about when the value was taken: no instant.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <limits>
#include <optional>

namespace twinrail::quality {

struct PollClockParams {
    size_t history = 16;                 // change intervals kept for the cadence (see period())
    size_t medianOf = 5;                 // the latest ones whose median says which intervals agree
    size_t minHistory = 3;               // fewer than this: no cadence yet
    size_t windows = 256;                // change windows the period is bounded by
    std::chrono::milliseconds slack{5};  // how far one poll may stray from even spacing
    double pinned = 0.02;  // the windows' period is used once known within this fraction
    // A missed poll is 2 periods without a change; idle needs clearly more.
    double idleAfter = 2.5;
    // Intervals longer than this are not poll intervals (a counter that changes once a
    // minute on an idle link): they are not learned.
    std::chrono::seconds maxPeriod{60};
};

class PollClock {
  public:
    using Clock = std::chrono::steady_clock;

    PollClock() = default;
    explicit PollClock(PollClockParams p) : p_(p) {}

    // One read at `now`; `changed` when the values differ from the previous read's.
    // Returns the instant the values were taken by the device (the same instant as last
    // time when nothing new was polled), or nullopt before the first change was seen.
    std::optional<Clock::time_point> observe(bool changed, Clock::time_point now);

    // The learned poll cadence, once `minHistory` intervals were seen.
    std::optional<Clock::duration> period() const;
    bool idle() const { return idle_; }
    // The counters restarted or belong to another object now: forget everything.
    void reset() { *this = PollClock(p_); }

  private:
    struct Window {
        long long n;    // which poll, counted from the first window
        double lo, hi;  // seconds since base_: the poll happened in (lo, hi]
    };
    void onChange(Clock::time_point prevRead, Clock::time_point now);
    void onUnchanged(Clock::time_point prevRead, Clock::time_point now);
    void learn(Clock::duration interval, bool spannedIdle);
    long long nextPoll(Clock::time_point prevRead, Clock::time_point now) const;
    double step() const;
    void narrow(const Window& w, size_t upTo);
    void refit();
    std::optional<double> evenRun(long long n) const;
    std::optional<double> pinnedPeriod() const;
    double secs(Clock::time_point t) const;
    Clock::time_point at(double s) const;

    PollClockParams p_;
    Clock::time_point base_{};
    std::optional<Clock::time_point> lastRead_;
    std::optional<Clock::time_point> lastSeen_;  // the read that last saw a change
    std::optional<Clock::time_point> instant_;   // the last instant returned
    Clock::time_point lastChange_{};             // the instant of the last change (not idle)
    std::deque<Clock::duration> intervals_;
    std::deque<Clock::duration> spans_;  // consecutive intervals that spanned an idle stretch
    std::deque<Window> windows_;
    std::optional<double> gridPeriod_;  // the windows' period, once pinned
    // The periods all windows allow.
    double pmin_ = 0, pmax_ = std::numeric_limits<double>::infinity();
    bool idle_ = false;
    // After a cadence change: how many more changes get no instant, and whether the last
    // one got none.
    int withhold_ = 0;
    bool withheld_ = false;
};

}  // namespace twinrail::quality
