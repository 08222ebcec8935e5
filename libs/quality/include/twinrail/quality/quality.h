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
    // A lossless fabric does not drop: congestion shows as ECN marks and PFC pauses
    // (docs/pathqd.md, "Lossless congestion"). The share of sent packets marked CE, and
    // the pause frames per second the peer sends us, counted as full congestion. 0 turns
    // the input off.
    double ecnRefRatio = 0.1;
    double pauseRefPps = 1000;
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
    bool operator==(const Params&) const = default;
};

// What one sampling period measured on one link (egress direction).
struct Signals {
    bool up = true;
    double capacityBps = 0;                // effective capacity; 0 = unknown (no value)
    double txBps = 0;                      // measured egress rate
    double queueBytes = 0;                 // egress backlog
    double dropRatio = 0;                  // dropped / (sent + dropped) in the period
    std::optional<double> latencySeconds;  // queueing delay: above the link's own floor
    double ecnMarkRatio = 0;               // marked CE / sent, over the last counter step
    double pauseRxPps = 0;                 // PFC/802.3x pause frames received (peer pausing us)
    bool pfcStorm = false;                 // the PFC watchdog found a queue of this port stormed
};

struct Breakdown {
    double util = 0;        // txBps / capacity
    double congestion = 0;  // 0..1, the worst of the normalised signals
    // Which signal that was: "util", "queue", "drops", "latency", "ecn", "pause",
    // "pfc_storm"; "none" when nothing is congested.
    const char* cause = "none";
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
    uint64_t pauseRx = 0;  // pause frames received, every priority and 802.3x
    uint64_t pauseTx = 0;  // sent: shown, not a signal for this port's egress
};

class RateTracker {
  public:
    struct Rates {
        double txBps = 0;
        double dropRatio = 0;
        double pauseRxPps = 0;
        double pauseTxPps = 0;
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

// ECN marks over sent packets, between two counter steps. The ratio needs no clock, so it
// suits counters that move at their own cadence (SONiC's queue counters, 10 s by default)
// as well as live ones (a Linux qdisc). It is held until the counters move again; when
// they have not moved for `stale` nothing is being sent or marked, and the ratio is 0. A
// decrease is a reset: no ratio from that step.
struct MarkCounters {
    uint64_t marked = 0;
    uint64_t packets = 0;
};

class MarkRatio {
  public:
    explicit MarkRatio(std::chrono::milliseconds stale = std::chrono::seconds(30))
        : stale_(stale) {}
    double update(const MarkCounters& c, Clock::time_point now);
    double ratio() const { return ratio_; }

  private:
    std::chrono::milliseconds stale_;
    std::optional<MarkCounters> last_;
    Clock::time_point lastMove_;
    double ratio_ = 0;
};

}  // namespace twinrail::quality
