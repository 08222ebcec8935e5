// The load-balancing rows of a switch's config_db for --lb ars, ars-global and spray, in
// SONiC's Local ARS shape (libs/ars/include/twinrail/ars/config.h reads them back). Shared
// by the Linux/lab config (outputs.cpp) and the SONiC overlay (sonic_overlay.cpp).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "twinrail/plan/plan.h"

namespace twinrail::plan {

// The ARS_PROFILE and ARS_OBJECT key the planner writes.
inline constexpr const char* kArsName = "twinrail";
// The software path's sampling interval (arsd samples no faster than 1 ms); on SONiC the
// field is left to the platform's default.
inline constexpr int kLinuxArsSamplingUs = 1000;

// Adds the rows for plan.request.lb to `db` (nothing for ecmp and static). `portName` maps
// a plan port name to the switch's (identity on Linux, the HWSKU's EthernetN on SONiC);
// `softwarePath` (Linux, the lab) adds the software path's sampling interval.
void addLbRows(const Plan& plan, const Switch& sw,
               const std::function<std::string(const std::string&)>& portName, bool softwarePath,
               nlohmann::json& db);

}  // namespace twinrail::plan
