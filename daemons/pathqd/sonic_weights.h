// SONiC's routing tables as the weight audit reads them: APPL_DB ROUTE_TABLE (what
// fpmsyncd wrote from FRR's routes) and ASIC_DB's route entries with their next-hop groups
// (what orchagent told the ASIC). Pure: rows in, weights by port name and named errors out;
// a malformed row is an error naming its key, never an exception.
//
// APPL_DB (separator ':'; fpmsyncd/routesync.cpp):
//   ROUTE_TABLE:<prefix> or ROUTE_TABLE:<vrf>:<prefix>  (IPv6 keys hold colons: the VRF is
//     told apart by not parsing as a prefix; a host route's key may omit /32 or /128)
//     nexthop  "10.0.0.1,10.0.0.3"   ifname "Ethernet0,Ethernet4"   weight "24,74"
//     (comma lists in the same order; unnumbered next hops are 169.254.0.1 or a link-local
//     address, told apart by ifname) or, with DEVICE_METADATA nexthop_group enabled,
//     nexthop_group "<id>" -> NEXTHOP_GROUP_TABLE:<id> with the same three lists.
// ASIC_DB (ASIC_STATE:<SAI object type>:<oid>; sonic-sairedis):
//   ASIC_STATE:SAI_OBJECT_TYPE_ROUTE_ENTRY:{"dest":"10.0.0.0/24","switch_id":"oid:..","vr":"oid:.."}
//     SAI_ROUTE_ENTRY_ATTR_NEXT_HOP_ID -> a next-hop group (or a single next hop)
//   ..._NEXT_HOP_GROUP_MEMBER:oid:X  SAI_NEXT_HOP_GROUP_MEMBER_ATTR_NEXT_HOP_GROUP_ID,
//     ..._NEXT_HOP_ID, ..._WEIGHT (absent: 1, SAI's default)
//   ..._NEXT_HOP:oid:X  SAI_NEXT_HOP_ATTR_ROUTER_INTERFACE_ID
//   ..._ROUTER_INTERFACE:oid:X  SAI_ROUTER_INTERFACE_ATTR_PORT_ID (a port or a LAG)
//   COUNTERS_DB COUNTERS_PORT_NAME_MAP / COUNTERS_LAG_NAME_MAP: name -> oid.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "forwarding_weights.h"
#include "twinrail/common/ip.h"

namespace twinrail::pathqd::sonic_weights {

using Row = std::map<std::string, std::string, std::less<>>;  // find by string_view
using Rows = std::map<std::string, Row>;                      // full key -> fields

struct RouteKey {
    std::string vrf;  // empty: the default VRF
    IpPrefix prefix;
};
// "ROUTE_TABLE:..." (the table name included).
std::optional<RouteKey> parseRouteKey(const std::string& key, std::string& error);

// A route's weights by ifname and the rule they follow; nullopt with `error` naming the
// field. A route with one next hop gives one entry. `nhgRows` holds the
// NEXTHOP_GROUP_TABLE rows by full key.
struct ApplWeights {
    PortWeights weights;
    WeightRule rule = WeightRule::Exact;
};
std::optional<ApplWeights> parseApplRoute(const Row& row, const Rows& nhgRows, int sonicRelease,
                                          std::string& error);

struct AsicTables {
    Rows routes;    // ASIC_STATE:SAI_OBJECT_TYPE_ROUTE_ENTRY:{...}
    Rows members;   // ASIC_STATE:SAI_OBJECT_TYPE_NEXT_HOP_GROUP_MEMBER:oid:...
    Rows nexthops;  // ASIC_STATE:SAI_OBJECT_TYPE_NEXT_HOP:oid:...
    Rows rifs;      // ASIC_STATE:SAI_OBJECT_TYPE_ROUTER_INTERFACE:oid:...
    Row portNames;  // COUNTERS_PORT_NAME_MAP and COUNTERS_LAG_NAME_MAP: name -> oid
};
struct AsicRoutes {
    std::map<IpPrefix, PortWeights> multipath;  // routes through a next-hop group
    std::vector<std::string> errors;
};
// Route -> group -> members -> next hop -> router interface -> port name. A prefix found
// in more than one virtual router is left out (the VRF is not known from ASIC_DB alone).
AsicRoutes resolveAsic(const AsicTables& t);

struct SonicTables {
    Rows applRoutes;  // ROUTE_TABLE:...
    Rows nhgRows;     // NEXTHOP_GROUP_TABLE:...
    std::optional<AsicTables> asic;
};
// The weights in force for the default VRF's multipath routes: ASIC_DB's where it has the
// route (what the ASIC forwards by), APPL_DB's otherwise. Every unusable row is named in
// badRows; routes of other VRFs are not audited (BGP is asked in the default VRF only).
ForwardedRead forwardedOnSonic(const SonicTables& t, int sonicRelease);

}  // namespace twinrail::pathqd::sonic_weights
