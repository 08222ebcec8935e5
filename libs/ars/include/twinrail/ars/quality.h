// Path quality as SAI's ARS defines it, in software: an EWMA of a port's past load (bytes
// sent per sampling interval against its capacity) and of its future load (bytes queued),
// each placed in its ARS_PROFILE range, combined by the profile's weights and quantised
// into 8 bands, 7 the best. Global ARS adds FARE's rule: a next hop is no better than the
// path beyond it, whose share pathqd carries in BGP as link bandwidth and FRR installs as
// the kernel route's weights. Pure: no I/O, no clock.
#pragma once

#include <cstdint>
#include <vector>

#include "twinrail/ars/config.h"

namespace twinrail::ars {

struct PortSample {
    uint64_t txBytesDelta = 0;  // sent since the last sample
    uint64_t intervalNs = 0;    // since the last sample (0: no past-load sample this time)
    uint64_t capacityBps = 0;   // the port's rate (a shaper's, else its speed); 0: unknown
    uint64_t queuedBytes = 0;   // its root qdisc's backlog now
};

// The EWMA's weight of a new sample: 1/4 (SAI's example PORT_LOAD_EXPONENT 2; SONiC does
// not expose it). The first sample seeds the average.
inline constexpr double kEwmaNewSample = 0.25;

// A port's capacity for past load: ARS_INTERFACES scaling_factor in SAI's unit (1 = 10
// Gb/s) when set, else what the port reports (its shaper or speed).
uint64_t capacityBps(uint32_t scalingFactor, uint64_t measuredBps);

// One port's EWMA state; band() after each sample.
class PortQuality {
  public:
    explicit PortQuality(const ArsConfig& cfg);
    uint8_t update(const PortSample& s);  // the new band, 0..7
    uint8_t band() const { return band_; }
    // The averages, each 0..1 of its range (for state and tests); past is negative while
    // the port's capacity has never been known.
    double pastLoad() const { return past_; }
    double futureLoad() const { return future_; }

  private:
    uint32_t pastWeight_, futureWeight_;
    LoadRange pastRange_, futureRange_;
    double past_ = -1, future_ = 0;
    bool seeded_ = false;
    uint8_t band_ = kBestBand;
};

// The band of a load that is `fraction` (0..1) of the way to the worst: 7 at 0, 0 at 1.
uint8_t bandOf(double fraction);

}  // namespace twinrail::ars
