// Max-min fair rates by progressive filling: every unfrozen flow's rate rises together
// until a link fills; the flows crossing it freeze at that rate; repeat. Links that fill
// at the same level freeze together, so the rounds are the distinct rate levels, not the
// links. A sprayed flow counts on each link by the fraction it sends there.
#pragma once

#include <vector>

#include "twinrail/sim/fabric.h"
#include "twinrail/sim/routing.h"

namespace twinrail::sim {

// `active` (one per flow, when given) leaves the others out, at rate 0.
std::vector<double> maxMinRates(const std::vector<Link>& links, const RoutedTraffic& traffic,
                                const std::vector<char>* active = nullptr);

}  // namespace twinrail::sim
