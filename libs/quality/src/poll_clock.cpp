#include "twinrail/quality/poll_clock.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace twinrail::quality {
namespace {
double seconds(std::chrono::steady_clock::duration d) {
    return std::chrono::duration<double>(d).count();
}
}  // namespace

double PollClock::secs(Clock::time_point t) const {
    return seconds(t - base_);
}

PollClock::Clock::time_point PollClock::at(double s) const {
    return base_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

std::optional<PollClock::Clock::duration> PollClock::period() const {
    size_t n = intervals_.size();
    if (n == 0 || n < p_.minHistory) return std::nullopt;
    // The median of the last few: robust to a missed poll, and follows a new cadence
    // within a few polls.
    size_t m = std::min(n, std::max<size_t>(1, p_.medianOf));
    std::vector<Clock::duration> recent(intervals_.end() - static_cast<std::ptrdiff_t>(m),
                                        intervals_.end());
    std::sort(recent.begin(), recent.end());
    double median = seconds(m % 2 == 1 ? recent[m / 2] : (recent[m / 2 - 1] + recent[m / 2]) / 2);
    if (median <= 0) return std::nullopt;
    // Then the mean over the recent intervals that agree with it, each counted as the
    // whole number of polls it spans (a median of 0.9/1.1 s pairs would be 1.1 s).
    double total = 0;
    long long polls = 0;
    for (auto it = intervals_.rbegin(); it != intervals_.rend(); ++it) {
        double x = seconds(*it);
        long long k = std::max<long long>(1, std::llround(x / median));
        if (std::abs(x - static_cast<double>(k) * median) > 0.25 * median) break;
        total += x;
        polls += k;
    }
    double s = polls > 0 ? total / static_cast<double>(polls) : median;
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

std::optional<PollClock::Clock::time_point> PollClock::observe(bool changed,
                                                               Clock::time_point now) {
    if (!lastRead_) {  // the value of some earlier poll, we cannot tell which
        lastRead_ = now;
        base_ = now;
        return std::nullopt;
    }
    Clock::time_point prevRead = *lastRead_;
    if (now <= prevRead) {  // time did not move: nothing to learn
        if (withheld_) return std::nullopt;
        return instant_;
    }
    lastRead_ = now;
    if (changed) {
        onChange(prevRead, now);
    } else {
        onUnchanged(prevRead, now);
    }
    if (withheld_) return std::nullopt;
    return instant_;
}

// The step, in seconds, from one poll to the next: the windows' period once they pin it,
// else the cadence's, else 0 (unknown).
double PollClock::step() const {
    if (gridPeriod_) return *gridPeriod_;
    auto cadence = period();
    return cadence ? seconds(*cadence) : 0.0;
}

// Which poll a window holds, counted in steps from the last change.
long long PollClock::nextPoll(Clock::time_point prevRead, Clock::time_point now) const {
    if (windows_.empty() || !instant_) return 0;
    long long last = windows_.back().n;
    double s = step();
    if (s <= 0) return last + 1;
    double mid = secs(prevRead) + seconds(now - prevRead) / 2;
    return last + std::max<long long>(1, std::llround((mid - secs(lastChange_)) / s));
}

// The periods every window allows (each widened by slack). Eliminating the origin from
// lo_i < origin + n_i * P <= hi_i leaves, for every pair i < j,
// (lo_j - hi_i) / (n_j - n_i) < P < (hi_j - lo_i) / (n_j - n_i): that range is exact.
// A new window only narrows it, against every window before it.
void PollClock::narrow(const Window& w, size_t upTo) {
    double slack = seconds(p_.slack);
    for (size_t i = 0; i < upTo; ++i) {
        auto dn = static_cast<double>(w.n - windows_[i].n);
        pmin_ = std::max(pmin_, (w.lo - windows_[i].hi - 2 * slack) / dn);
        pmax_ = std::min(pmax_, (w.hi - windows_[i].lo + 2 * slack) / dn);
    }
}

void PollClock::refit() {
    pmin_ = 0;
    pmax_ = std::numeric_limits<double>::infinity();
    for (size_t j = 1; j < windows_.size(); ++j) narrow(windows_[j], j);
}

// The middle of the feasible periods, once they are this narrow.
std::optional<double> PollClock::pinnedPeriod() const {
    if (windows_.size() < 2 || pmin_ > pmax_ || !std::isfinite(pmax_)) return std::nullopt;
    double mid = (pmin_ + pmax_) / 2;
    if (mid <= 0 || pmax_ - pmin_ > p_.pinned * mid) return std::nullopt;
    return mid;
}

void PollClock::onChange(Clock::time_point prevRead, Clock::time_point now) {
    long long n = nextPoll(prevRead, now);
    windows_.push_back({n, secs(prevRead), secs(now)});
    narrow(windows_.back(), windows_.size() - 1);
    if (windows_.size() > std::max<size_t>(4, p_.windows)) {
        // Forget the oldest quarter at once: the bounds are then recomputed once per
        // quarter of the history, not at every change.
        windows_.erase(windows_.begin(),
                       windows_.begin() + static_cast<std::ptrdiff_t>(windows_.size() / 4));
        refit();
    }
    bool changedCadence = false;
    while (pmin_ > pmax_ && windows_.size() > 1) {  // the cadence changed: keep the recent
        windows_.pop_front();
        refit();
        changedCadence = true;
    }
    // This poll and the next get no instant (see the header).
    if (changedCadence) withhold_ = 2;
    withheld_ = withhold_ > 0;
    if (withhold_ > 0) --withhold_;
    gridPeriod_ = pinnedPeriod();
    if (lastSeen_) learn(now - *lastSeen_, idle_);
    lastSeen_ = now;
    idle_ = false;
    // The latest instant every window allows for this poll: its own read, unless the
    // windows of earlier polls, carried forward by the longest period they allow, show
    // that it was seen late (the write landed just after a read). Using the longest
    // period errs only late, and by nothing for the recent polls that bind once the
    // windows span many polls. With few (after a cadence change, or at start) it exceeds
    // the true one by up to a read interval over the polls they span: 5 polls after a
    // change to 500 ms, 20 ms and more, 4-5% on the rate over that poll and the next. So
    // a run of evenly seen polls, where there is one, places it instead (evenRun), within
    // what the windows allow: no later than `latest`, no earlier than the previous read.
    double latest = secs(now);
    if (windows_.size() >= 2 && std::isfinite(pmax_) && pmin_ <= pmax_) {
        double slack = seconds(p_.slack);
        double earliest = secs(prevRead);
        for (const auto& w : windows_) {
            auto polls = static_cast<double>(n - w.n);
            latest = std::min(latest, w.hi + polls * pmax_);
            earliest = std::max(earliest, w.lo - slack + polls * pmin_);
        }
        if (auto even = evenRun(n); even && earliest <= latest)
            latest = std::clamp(*even, earliest, latest);
    }
    Clock::time_point t = at(latest);
    t = std::clamp(t, prevRead, now);
    // Never a step back or a zero-length one: the read then.
    if (instant_ && t <= *instant_) t = now;
    instant_ = t;
    lastChange_ = t;
}

// Where the latest run of evenly seen polls puts poll `n` (the newest window, not in
// the run). When the reads that saw the last changes came at one interval per poll (at
// least twice in a row, within twice the slack), each came the same time after its
// poll, and this poll is that time before their reads carried forward by that interval
// (kept within the periods the windows allow; the earliest read binds, as for `latest`).
// A change seen a read late is then placed just after the read that missed it, where
// its poll was, and not where `latest` puts it when the windows span few polls. A flip
// between two reads ends the run, and one interval is no run: at start, or right after
// a cadence change, the only two reads may be a late one and a prompt one.
std::optional<double> PollClock::evenRun(long long n) const {
    if (windows_.size() < 4 || pmin_ > pmax_) return std::nullopt;
    auto perPoll = [this](size_t j) {
        return (windows_[j].hi - windows_[j - 1].hi) /
               static_cast<double>(windows_[j].n - windows_[j - 1].n);
    };
    double slack = seconds(p_.slack);
    // The run may end a read or two back: the reads just before may have come late too.
    size_t newest = windows_.size() - 2;
    for (size_t last = newest; last >= 2 && newest - last <= 2; --last) {
        double interval = perPoll(last);
        size_t first = last - 1;
        while (first >= 1 && std::abs(perPoll(first) - interval) <= 2 * slack) --first;
        if (last - first < 2) continue;
        double step = (windows_[last].hi - windows_[first].hi) /
                      static_cast<double>(windows_[last].n - windows_[first].n);
        step = std::clamp(step, pmin_, pmax_);
        double t = std::numeric_limits<double>::infinity();
        for (size_t j = first; j <= last; ++j)
            t = std::min(t, windows_[j].hi + static_cast<double>(n - windows_[j].n) * step);
        return t;
    }
    return std::nullopt;
}

void PollClock::learn(Clock::duration interval, bool spannedIdle) {
    if (interval > p_.maxPeriod) return;
    size_t keep = std::max<size_t>(1, p_.history);
    if (!spannedIdle) {
        spans_.clear();
        intervals_.push_back(interval);
        while (intervals_.size() > keep) intervals_.pop_front();
        return;
    }
    spans_.push_back(interval);
    if (spans_.size() < std::max<size_t>(1, p_.minHistory)) return;
    auto [lo, hi] = std::minmax_element(spans_.begin(), spans_.end());
    if (seconds(*hi) > 1.25 * seconds(*lo)) {
        spans_.pop_front();  // irregular gaps: idle traffic, not a new cadence
        return;
    }
    intervals_.assign(spans_.begin(), spans_.end());
    spans_.clear();
}

void PollClock::onUnchanged(Clock::time_point prevRead, Clock::time_point now) {
    auto cadence = period();
    if (!instant_ || !lastSeen_ || !cadence || cadence->count() <= 0) return;
    if (!idle_ && seconds(now - *lastSeen_) > p_.idleAfter * seconds(*cadence)) idle_ = true;
    if (!idle_) return;
    // Only polls that a later read found unchanged: the previous read came after them,
    // so their write (a few ms after the poll) would have been seen by now. They stay on
    // the last change's grid, so the change that ends the idle stretch lands on it too.
    double s = step();
    if (s <= 0) return;
    double polls = std::floor((secs(prevRead) - secs(lastChange_)) / s);
    Clock::time_point t = at(secs(lastChange_) + polls * s);
    if (polls >= 1 && t > *instant_) {
        instant_ = t;
        withhold_ = 0;  // a rate of 0 needs no cadence
        withheld_ = false;
    }
}

}  // namespace twinrail::quality
