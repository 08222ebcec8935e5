// Link quality: from measured signals to a damped, quantised level that is safe to put
// into BGP. Pure code: time is passed in, nothing here does I/O.
//
// Why this shape (see docs/pathqd.md, "The quality model"):
//  * Weighted ECMP wants weights proportional to what each path can still carry, so the
//    base of the value is the link's effective capacity (configured, link speed or
//    shaper rate, whichever is lowest).
//  * Congestion (a queue that stays, drops, latency above the link's own floor,
//    utilisation past a knee) takes up to `maxPenalty` off that capacity. Utilisation
//    below the knee costs nothing: a half-used link is not worse for a new flow, and
//    penalising it would make traffic chase its own tail between paths.
//  * Every change re-hashes flows and re-advertises every tagged prefix, so the value
//    is smoothed (EWMA), quantised to `levels` steps of a fabric-wide reference, and
//    changes only when the smoothed value leaves a hysteresis band around the published
//    level for `confirmSamples` samples in a row, and no sooner than `minHold` after the
//    previous change (`raiseHold` for a raise). A steady or noisy link therefore
//    publishes nothing, and an oscillating one at most once per raiseHold.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

namespace twinrail::quality {

using Clock = std::chrono::steady_clock;

struct Params {
    double referenceBps = 400e9;  // fabric-wide: level `levels` means this much usable
    int levels = 32;
    // Congestion takes at most this fraction off. Capacity is the first-order signal
    // (what Meta's deployment carries); congestion is a correction: when every path
    // carries elephant flows, every path is "congested", and a large penalty would only
    // add churn while the flows shift.
    double maxPenalty = 0.25;
    double utilKnee = 0.8;              // utilisation below this costs nothing
    double queueRefSeconds = 100e-6;    // queue delay (bytes / capacity) counted as full congestion
    double latencyRefSeconds = 200e-6;  // latency above the floor counted as full congestion
    double dropRefRatio = 0.01;         // drop ratio counted as full congestion
    std::chrono::milliseconds smoothing{2000};  // EWMA time constant
    double hysteresis = 0.5;                    // in levels, beyond the half level rounding gives
    int confirmSamples = 2;
    std::chrono::milliseconds minHold{5000};
    // Bad news travels fast, good news slowly: a raise also waits this long after the
    // previous change. Moving traffic away empties a link, and an empty link looks
    // good; without this the level would chase its own traffic.
    std::chrono::milliseconds raiseHold{15000};
    // A large drop (at least this fraction of the published level, and 2 levels) is let
    // through at once: `confirmSamples` raw samples in a row that agree on it are enough,
    // without waiting for the EWMA or for `minHold`. A link that just lost most of its
    // capacity is worth a flow re-hash now, even right after another change; the damping
    // stays for raises and small steps, so a steady or noisy link still publishes
    // nothing. Above maxPenalty, so congestion alone never triggers it: only capacity
    // lost (a shaper, a slower speed, a member link down) does. 0 turns it off.
    double fastDrop = 0.3;
};

// What one sampling period measured on one link (egress direction).
struct Signals {
    bool up = true;
    double capacityBps = 0;                // effective capacity; 0 = unknown (no value)
    double txBps = 0;                      // measured egress rate
    double queueBytes = 0;                 // egress backlog
    double dropRatio = 0;                  // dropped / (sent + dropped) in the period
    std::optional<double> latencySeconds;  // queueing delay: above the link's own floor
};

struct Breakdown {
    double util = 0;        // txBps / capacity
    double congestion = 0;  // 0..1, the worst of the normalised signals
    double usableBps = 0;
    double level = 0;  // continuous, before smoothing
};

// Tracks the latency floor of a link (the lowest value seen recently), so latency counts
// only above what the link always has (cable, serialisation, the probe path). It also
// cancels a constant clock offset, which is what makes one-way probe delays usable
// between switches whose clocks are not synchronised.
class LatencyFloor {
  public:
    explicit LatencyFloor(std::chrono::seconds window = std::chrono::seconds(30))
        : window_(window) {}
    double update(double latencySeconds, Clock::time_point now);  // returns the floor

  private:
    std::chrono::seconds window_;
    std::deque<std::pair<Clock::time_point, double>> minima_;  // monotonic deque
};

Breakdown evaluate(const Signals& s, const Params& p);

// Damping and quantisation for one link. `published()` is what BGP carries: 1..levels
// (a live link is never 0, so a path is thinned, not removed), or 0 for a link that is down.
class Filter {
  public:
    explicit Filter(Params p) : p_(p) {}
    void setParams(const Params& p) { p_ = p; }

    // Feeds one sample; returns true when the published level changed.
    bool update(double rawLevel, bool up, Clock::time_point now);

    int published() const { return published_; }
    double smoothed() const { return smoothed_; }
    uint64_t suppressed() const { return suppressed_; }  // out of band, held back
    uint64_t fastDrops() const { return fastDrops_; }    // let through by fastDrop
    std::optional<Clock::time_point> lastChange() const { return lastChange_; }

  private:
    int clampLevel(double v) const;
    std::optional<int> largeDrop() const;
    Params p_;
    bool started_ = false;
    double smoothed_ = 0;
    int published_ = 0;
    int outOfBand_ = 0;
    std::deque<double> recent_;
    std::optional<Clock::time_point> lastSample_, lastChange_;
    uint64_t suppressed_ = 0;
    uint64_t fastDrops_ = 0;
};

// Byte and packet counters -> rates between the instants the counters were taken; a
// counter that went backwards (port reset, syncd restart, counter cleared) yields no rate
// rather than a huge one: a decrease is a reset, never a 64-bit wrap.
struct Counters {
    uint64_t txBytes = 0;
    uint64_t txPackets = 0;
    uint64_t drops = 0;
};

class RateTracker {
  public:
    struct Rates {
        double txBps = 0;
        double dropRatio = 0;
    };
    // `at` is when the device took `c`: the read time for live counters (Linux), the
    // inferred poll instant for polled ones (SONiC, see poll_clock.h). The same instant
    // as last time means nothing new was taken: no rate, and the baseline stays. No
    // instant (not known yet) gives no rate and drops the baseline.
    std::optional<Rates> update(const Counters& c, std::optional<Clock::time_point> at);

  private:
    std::optional<Counters> last_;
    Clock::time_point lastTime_;
};

}  // namespace twinrail::quality
