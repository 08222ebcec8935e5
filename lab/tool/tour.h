// The demo (docs/demo.md): a short tour of a running lab (host routes per plane, WCMP weights,
// STATE_DB, a leaf failure and a NIC port failure under traffic), in the plan's attachment.
#pragma once

#include <string>

#include "twinrail/lab/plan_lab.h"

namespace twinrail::labtool {

// Returns false when something the tour shows did not happen.
bool runTour(const std::string& lab, const lab::LabBinaries& bins, const plan::Plan& plan);

}  // namespace twinrail::labtool
