// STATE_DB rows pathqd publishes (schema: proto/pathqd_state.schema.json):
//   PATH_QUALITY_TABLE|<port>   measured signals, levels, what is published
//   PATH_WEIGHT_TABLE|<group>   per-nexthop weights of BGP multipath routes, as installed
//   PATHQD_STATS|global         counters
#pragma once

#include "twinrail/common/time_text.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "twinrail/netlink/link_stats.h"
#include "twinrail/redis/client.h"

namespace twinrail::pathqd {

inline constexpr const char* kQualityTable = "PATH_QUALITY_TABLE";
inline constexpr const char* kWeightTable = "PATH_WEIGHT_TABLE";
inline constexpr const char* kStatsTable = "PATHQD_STATS";

std::string formatDouble(double v, int decimals);

// Routes that share a nexthop group (zebra gives every distinct set of nexthops and
// weights its own) become one row keyed "nhg<id>", or "route <prefix>" for routes that
// carry their nexthops inline. Fields: nexthops ("swp1=25 swp2=75"), one
// weight_<ifname> per nexthop, prefixes (count) and sample (up to 4 prefixes).
std::map<std::string, redis::Fields> weightRows(const std::vector<netlink::RouteWeights>& routes,
                                                const std::function<std::string(int)>& ifname);

}  // namespace twinrail::pathqd
