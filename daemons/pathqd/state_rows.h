// STATE_DB rows pathqd publishes (schema: proto/pathqd_state.schema.json):
//   PATH_QUALITY_TABLE|<port>   measured signals, levels, what is published
//   PATH_WEIGHT_TABLE|<group>   per-nexthop weights of BGP multipath routes, as installed
//   PATHQD_STATS|global         counters
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "twinrail/common/time_text.h"
#include "twinrail/redis/client.h"
#include "weight_groups.h"

namespace twinrail::pathqd {

inline constexpr const char* kQualityTable = "PATH_QUALITY_TABLE";
inline constexpr const char* kWeightTable = "PATH_WEIGHT_TABLE";
inline constexpr const char* kStatsTable = "PATHQD_STATS";

std::string formatDouble(double v, int decimals);

}  // namespace twinrail::pathqd
