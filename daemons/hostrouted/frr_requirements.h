// The FRR configuration hostrouted depends on, derived from its own config.
//  IPv4: routes in kernel table N -> zebra `ip import-table N` -> bgpd `redistribute table N`.
//  IPv6: FRR 8.4 has no `ipv6 import-table`, so /128s go into the main table with
//        hostrouted's protocol number and bgpd redistributes kernel routes through a
//        route-map that passes /128s only.
//  advertise table-direct (FRR >= 9.1): bgpd `redistribute table-direct N` reads the kernel
//        table itself; no `ip import-table`, so zebra copies nothing into its RIB (on SONiC
//        nothing reaches fpmsyncd twice). IPv6 as above.
//  advertise network-table: SONiC's bgpcfgd writes `network` statements from STATE_DB;
//        hostrouted needs no FRR line of its own.
#pragma once

#include <vector>

#include "config.h"
#include "twinrail/frr/running_config.h"

namespace twinrail::hostrouted {

inline constexpr const char* kV6RouteMap = "TWINRAIL-HOSTROUTES-V6";

std::vector<frr::ConfigLine> requiredFrrLines(const Config& cfg);

}  // namespace twinrail::hostrouted
