// RoCE QoS rows of a SONiC switch's overlay (sonic_qos.cpp), for sonic_overlay.cpp.
#pragma once

#include <nlohmann/json.hpp>

#include "twinrail/plan/roce.h"
#include "twinrail/plan/sonic_target.h"

namespace twinrail::plan {

// The fabric's maps, schedulers, WRED/ECN profile and PFC watchdog, and per port of `sw`
// (SKU names) its PORT_QOS_MAP, QUEUE rows, CABLE_LENGTH and PFC_WD.
void sonicQosRows(const Plan& plan, const Switch& sw, const PortMap& ports, nlohmann::json& db);

}  // namespace twinrail::plan
