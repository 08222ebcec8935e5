#include "twinrail/ars/quality.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace twinrail::ars {
namespace {

constexpr uint64_t kScalingUnitBps = 10'000'000'000ULL;  // SAI's scaling factor 1: 10G

// Where `value` lies in `r`, clamped to 0..1.
double within(double value, const LoadRange& r) {
    if (r.max <= r.min) return value > r.min ? 1 : 0;
    return std::clamp((value - r.min) / (r.max - r.min), 0.0, 1.0);
}

double ewma(double old, double sample, bool seeded) {
    return seeded ? old + kEwmaNewSample * (sample - old) : sample;
}

}  // namespace

uint64_t capacityBps(uint32_t scalingFactor, uint64_t measuredBps) {
    return scalingFactor != 0 ? scalingFactor * kScalingUnitBps : measuredBps;
}

uint8_t bandOf(double fraction) {
    if (!(fraction > 0)) return kBestBand;  // NaN too: no evidence of load
    const double step = std::floor(std::min(fraction, 1.0) * (kBestBand + 1));
    return static_cast<uint8_t>(kBestBand - std::min<double>(step, kBestBand));
}

PortQuality::PortQuality(const ArsConfig& cfg)
    : pastWeight_(cfg.pastLoadWeight),
      futureWeight_(cfg.futureLoadWeight),
      pastRange_(cfg.pastLoad),
      futureRange_(cfg.futureLoad) {}

uint8_t PortQuality::update(const PortSample& s) {
    // Future load: kilobytes queued now, in the profile's range.
    const double future = within(static_cast<double>(s.queuedBytes) / 1000.0, futureRange_);
    // Past load: percent of capacity sent over the interval; unknown without both.
    std::optional<double> past;
    if (s.capacityBps != 0 && s.intervalNs != 0) {
        const double sentBits = static_cast<double>(s.txBytesDelta) * 8.0;
        const double canBits =
            static_cast<double>(s.capacityBps) * static_cast<double>(s.intervalNs) / 1e9;
        past = within(100.0 * sentBits / canBits, pastRange_);
    }
    future_ = ewma(future_, future, seeded_);
    if (past) past_ = ewma(past_, *past, past_ >= 0);
    seeded_ = true;
    // A port whose capacity was never known is ranked by its queue alone.
    const double pw = past_ >= 0 ? pastWeight_ : 0;
    const double fw = futureWeight_;
    const double combined =
        pw + fw > 0 ? (pw * std::max(past_, 0.0) + fw * future_) / (pw + fw) : std::max(past_, 0.0);
    band_ = bandOf(combined);
    return band_;
}

}  // namespace twinrail::ars
