#include "sonic_weight_rules.h"

#include <algorithm>

namespace twinrail::pathqd {
namespace {

PortWeights allOnes(const PortWeights& w) {
    PortWeights out;
    for (const auto& [port, v] : w) out[port] = 1;
    return out;
}

bool anyOne(const PortWeights& w) {
    return std::any_of(w.begin(), w.end(), [](const auto& pv) { return pv.second <= 1; });
}

}  // namespace

FrrScale frrScaleOf(int sonicRelease) {
    return sonicRelease >= 202411 ? FrrScale::Max255 : FrrScale::Percent;  // FRR 10.0.1 on
}

PortWeights frrWeights(const std::vector<BgpPath>& paths, FrrScale scale) {
    if (scale == FrrScale::Percent) return impliedWeights(paths);
    PortWeights w;
    double largest = 0;
    bool allTagged = true;
    for (const auto& p : paths) {
        allTagged &= p.bytesPerSecond.has_value();
        largest = std::max(largest, p.bytesPerSecond.value_or(0));
    }
    for (const auto& p : paths) {
        unsigned weight = 1;
        if (allTagged && largest > 0)
            weight = std::max(1u, static_cast<unsigned>(*p.bytesPerSecond * 255 / largest));
        w[p.interface] += weight;
    }
    return w;
}

WeightRule routeTableRule(int sonicRelease) {
    if (sonicRelease < 202111) return WeightRule::Ecmp;
    if (sonicRelease < 202205) return WeightRule::ExactOrEcmp;
    if (sonicRelease < 202405) return WeightRule::MinusOneOrEcmp;
    return WeightRule::MinusOneFloorOne;
}

const char* ruleName(WeightRule rule) {
    switch (rule) {
        case WeightRule::Exact:
            return "exact";
        case WeightRule::Ecmp:
            return "ecmp";
        case WeightRule::ExactOrEcmp:
            return "exact-or-ecmp";
        case WeightRule::MinusOneOrEcmp:
            return "minus-one-or-ecmp";
        case WeightRule::MinusOneFloorOne:
            return "minus-one-floor-one";
    }
    return "?";
}

PortWeights expectedWeights(const PortWeights& frr, WeightRule rule) {
    switch (rule) {
        case WeightRule::Exact:
            return frr;
        case WeightRule::Ecmp:
            return allOnes(frr);
        case WeightRule::ExactOrEcmp:
            return anyOne(frr) ? allOnes(frr) : frr;
        case WeightRule::MinusOneOrEcmp:
        case WeightRule::MinusOneFloorOne: {
            if (rule == WeightRule::MinusOneOrEcmp && anyOne(frr)) return allOnes(frr);
            PortWeights out;
            for (const auto& [port, v] : frr) out[port] = std::max(1u, v - (v > 0 ? 1 : 0));
            return out;
        }
    }
    return frr;
}

bool weightsAgreeAfter(const PortWeights& frr, const PortWeights& forwarded, WeightRule rule) {
    return weightsAgree(expectedWeights(frr, rule), forwarded);
}

}  // namespace twinrail::pathqd
