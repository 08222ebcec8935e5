// STATE_DB rows hostrouted publishes (schema: proto/hostrouted_state.schema.json).
#pragma once

#include <chrono>
#include <string>

#include "host_registry.h"
#include "twinrail/redis/client.h"

namespace twinrail::hostrouted {

inline constexpr const char* kHostRouteTable = "HOST_ROUTE_TABLE";
inline constexpr const char* kStatsTable = "HOST_ROUTE_STATS";

std::string wallClock(TimePoint steady, TimePoint steadyNow,
                      std::chrono::system_clock::time_point wallNow);

redis::Fields hostRow(const HostRecord& rec, const std::string& ifname, TimePoint now,
                      std::chrono::system_clock::time_point wallNow);

}  // namespace twinrail::hostrouted
