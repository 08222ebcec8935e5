// The short verdict twinrail-plan --simulate prints with a plan: how a permutation (a
// collective's step) runs under each way of balancing, and what one leaf's failure costs.
// Pure: the plan in, text out.
#pragma once

#include <string>

#include "twinrail/plan/plan.h"

namespace twinrail::sim {

// seeds: hash seeds per figure (medians). Errors (a plan the model cannot read) come back as
// the text of the verdict, prefixed "no simulation: ".
std::string verdict(const plan::Plan& plan, int seeds);

}  // namespace twinrail::sim
