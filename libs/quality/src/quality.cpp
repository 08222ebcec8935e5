#include "twinrail/quality/quality.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace twinrail::quality {
namespace {
double clamp01(double v) {
    return std::clamp(v, 0.0, 1.0);
}
double seconds(Clock::duration d) {
    return std::chrono::duration<double>(d).count();
}
}  // namespace

double LatencyFloor::update(double latencySeconds, Clock::time_point now) {
    while (!minima_.empty() && minima_.back().second >= latencySeconds) minima_.pop_back();
    minima_.emplace_back(now, latencySeconds);
    while (minima_.front().first + window_ < now) minima_.pop_front();
    return minima_.front().second;
}

Breakdown evaluate(const Signals& s, const Params& p) {
    Breakdown b;
    if (!s.up || s.capacityBps <= 0) return b;
    b.util = s.txBps / s.capacityBps;
    double byUtil = clamp01((b.util - p.utilKnee) / std::max(1e-9, 1.0 - p.utilKnee));
    double byQueue = clamp01(s.queueBytes * 8.0 / s.capacityBps / p.queueRefSeconds);
    double byDrops = clamp01(s.dropRatio / p.dropRefRatio);
    double byLatency = 0;
    if (s.latencySeconds) byLatency = clamp01(*s.latencySeconds / p.latencyRefSeconds);
    double byEcn = p.ecnRefRatio > 0 ? clamp01(s.ecnMarkRatio / p.ecnRefRatio) : 0.0;
    double byPause = p.pauseRefPps > 0 ? clamp01(s.pauseRxPps / p.pauseRefPps) : 0.0;
    // A stormed queue is one the watchdog is dropping or forwarding lossy: as bad as
    // congestion gets, whatever the other signals say.
    double byStorm = s.pfcStorm ? 1.0 : 0.0;
    const std::pair<double, const char*> signals[] = {
        {byUtil, "util"}, {byQueue, "queue"}, {byDrops, "drops"},    {byLatency, "latency"},
        {byEcn, "ecn"},   {byPause, "pause"}, {byStorm, "pfc_storm"}};
    for (const auto& [value, name] : signals) {
        if (value > b.congestion) {
            b.congestion = value;
            b.cause = name;
        }
    }
    b.usableBps = s.capacityBps * (1.0 - p.maxPenalty * b.congestion);
    b.level = b.usableBps / p.referenceBps * p.levels;
    return b;
}

int Filter::clampLevel(double v) const {
    return std::clamp(static_cast<int>(std::lround(v)), 1, p_.levels);
}

bool Filter::update(double rawLevel, bool up, Clock::time_point now) {
    if (!up) {
        started_ = false;
        recent_.clear();
        outOfBand_ = 0;
        if (published_ == 0) return false;
        published_ = 0;
        lastChange_ = now;
        return true;
    }
    recent_.push_back(rawLevel);
    while (static_cast<int>(recent_.size()) > std::max(1, p_.confirmSamples)) recent_.pop_front();
    if (!started_) {  // first sample, or the link came back: no history to damp against
        started_ = true;
        smoothed_ = rawLevel;
        lastSample_ = now;
        int level = clampLevel(rawLevel);
        if (level == published_) return false;
        published_ = level;
        lastChange_ = now;
        return true;
    }
    double dt = seconds(now - *lastSample_);
    lastSample_ = now;
    double tau = std::max(1e-3, seconds(p_.smoothing));
    smoothed_ += (1.0 - std::exp(-dt / tau)) * (rawLevel - smoothed_);

    if (auto drop = largeDrop()) {
        ++fastDrops_;
        published_ = *drop;
        smoothed_ = rawLevel;
        outOfBand_ = 0;
        lastChange_ = now;
        return true;
    }
    // The band's edge counts as outside (to a thousandth of a level): the EWMA only
    // approaches a steady value, so a raw level exactly at the edge, one level away with
    // the default hysteresis, would never be reached. An uncongested link's raw level is
    // its capacity's, a whole level whenever that is a multiple of the reference's step
    // (the top level, or half of it): once congestion took it one level down, it stayed
    // there for good (likely the 24 against 25 lb_bench saw on an idle fabric for minutes).
    constexpr double kEdge = 1e-3;
    bool outside = std::abs(smoothed_ - published_) > 0.5 + p_.hysteresis - kEdge;
    outOfBand_ = outside ? outOfBand_ + 1 : 0;
    if (outOfBand_ < std::max(1, p_.confirmSamples)) return false;

    // Confirmed. After a step the recent raw samples agree and the EWMA still lags:
    // publish their median. When they disagree (a noisy link drifting), the EWMA is the
    // better estimate.
    std::vector<double> sorted(recent_.begin(), recent_.end());
    std::sort(sorted.begin(), sorted.end());
    double median = sorted.back() - sorted.front() <= 1.0 ? sorted[sorted.size() / 2] : smoothed_;
    int candidate = clampLevel(median);
    if (candidate == published_) return false;  // a transient the EWMA still carries
    auto hold = candidate > published_ ? std::max(p_.minHold, p_.raiseHold) : p_.minHold;
    if (lastChange_ && now - *lastChange_ < hold) {
        ++suppressed_;
        return false;
    }
    published_ = candidate;
    smoothed_ = median;
    outOfBand_ = 0;
    lastChange_ = now;
    return true;
}

std::optional<int> Filter::largeDrop() const {
    if (p_.fastDrop <= 0 || static_cast<int>(recent_.size()) < std::max(1, p_.confirmSamples))
        return std::nullopt;
    // Every recent raw sample is that far below: a step, not noise (the highest of them
    // is what is published, so a sample on its way down does not overshoot).
    double highest = *std::max_element(recent_.begin(), recent_.end());
    int candidate = clampLevel(highest);
    double step = published_ - highest;
    if (step < std::max(2.0, p_.fastDrop * published_) || candidate >= published_)
        return std::nullopt;
    return candidate;
}

std::optional<RateTracker::Rates> RateTracker::update(const Counters& c,
                                                      std::optional<Clock::time_point> at) {
    if (!at) {
        last_.reset();
        return std::nullopt;
    }
    if (last_ && *at == lastTime_) return std::nullopt;  // the same poll read again
    std::optional<Rates> out;
    if (last_ && *at > lastTime_ && c.txBytes >= last_->txBytes &&
        c.txPackets >= last_->txPackets && c.drops >= last_->drops && c.pauseRx >= last_->pauseRx &&
        c.pauseTx >= last_->pauseTx) {
        double dt = seconds(*at - lastTime_);
        Rates r;
        r.txBps = static_cast<double>(c.txBytes - last_->txBytes) * 8.0 / dt;
        double sent = static_cast<double>(c.txPackets - last_->txPackets);
        double dropped = static_cast<double>(c.drops - last_->drops);
        r.dropRatio = sent + dropped > 0 ? dropped / (sent + dropped) : 0.0;
        r.pauseRxPps = static_cast<double>(c.pauseRx - last_->pauseRx) / dt;
        r.pauseTxPps = static_cast<double>(c.pauseTx - last_->pauseTx) / dt;
        out = r;
    }
    last_ = c;
    lastTime_ = *at;
    return out;
}

double MarkRatio::update(const MarkCounters& c, Clock::time_point now) {
    if (!last_ || c.marked < last_->marked || c.packets < last_->packets) {
        last_ = c;  // first read, or a reset: a baseline, no ratio from it
        lastMove_ = now;
        return ratio_;
    }
    if (c.packets == last_->packets && c.marked == last_->marked) {
        if (now - lastMove_ >= stale_) ratio_ = 0;
        return ratio_;
    }
    uint64_t sent = c.packets - last_->packets;
    uint64_t marked = c.marked - last_->marked;
    // More marks than packets: the two counters were not taken together (a queue row
    // polled between them); the step says nothing, the baseline moves on.
    if (sent > 0 && marked <= sent)
        ratio_ = static_cast<double>(marked) / static_cast<double>(sent);
    last_ = c;
    lastMove_ = now;
    return ratio_;
}

}  // namespace twinrail::quality
