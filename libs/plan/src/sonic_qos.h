// RoCE QoS rows of a SONiC switch's overlay (sonic_qos.cpp), for sonic_overlay.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "twinrail/plan/roce.h"
#include "twinrail/plan/sonic_target.h"

namespace twinrail::plan {

// The fabric's maps, schedulers, WRED/ECN profile and PFC watchdog, and per port of `sw`
// (SKU names) its PORT_QOS_MAP, QUEUE rows, CABLE_LENGTH, PFC_WD, and with the dynamic
// buffer model its lossless BUFFER_PG. An error names the switch and port: a lossless PG
// the SKU's pg_profile_lookup.ini has no profile for.
std::optional<std::string> sonicQosRows(const Plan& plan, const Switch& sw, const PortMap& ports,
                                        const Sku& sku, const SonicOptions& options,
                                        nlohmann::json& db);

}  // namespace twinrail::plan
