// Checks that zebra really imported every IPv4 host route hostrouted put in its kernel
// table, and says what to repair. FRR 8.4 can lose track of them in two known ways:
//  * after zebra is killed (crash, kill -9), the copies it had installed in the main
//    table (proto zebra) stay behind. The new zebra reads them as *kernel* routes
//    (distance 0), which beat the table import (distance 15), so BGP stops advertising
//    the host ("shadowed"). zebra also ignores the deletion of a route carrying its own
//    protocol number, so the stale copy must first be taken over, then deleted.
//  * an imported route is dropped silently when an address for the same prefix arrives
//    in the same netlink batch (FRRouting/frr#22654): the route is "missing" from zebra.
//    Writing it again (delete + add in table 10, which nothing forwards from) makes
//    zebra import it again.
// Pure: JSON text in, a verdict out. The daemon runs vtysh and the netlink repairs.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "twinrail/common/ip.h"

namespace twinrail::hostrouted {

// `show ip route summary json`, the "table" type: imported routes zebra knows (rib) and
// those it selected and installed (fib).
struct ImportCounts {
    size_t rib = 0;
    size_t fib = 0;
};
std::optional<ImportCounts> parseImportCounts(const std::string& summaryJson, std::string& error);

// One entry of `show ip route [table|kernel] json`.
struct ZebraRoute {
    IpAddr prefix;  // host routes only (/32); other prefixes are left out
    std::string protocol;
    bool selected = false;
};
std::optional<std::vector<ZebraRoute>> parseZebraRoutes(const std::string& routesJson,
                                                        std::string& error);

struct ImportAudit {
    std::vector<IpAddr> missing;    // ours, but zebra has no table import for it
    std::vector<IpAddr> shadowed;   // imported, but a kernel route of the prefix wins
    std::vector<IpAddr> outranked;  // imported, but another FRR route wins: reported only
    std::vector<IpAddr> foreign;    // imported from the table, but not ours: reported only
    bool clean() const { return missing.empty() && shadowed.empty(); }
};

// `ours`: host routes in our table old enough that zebra must have seen them.
// `fresh`: ours too new to judge (neither missing nor foreign).
ImportAudit auditImports(const std::set<IpAddr>& ours, const std::set<IpAddr>& fresh,
                         const std::vector<ZebraRoute>& zebra);

// With `advertise table-direct` or `network-table` zebra holds no imported copies: bgpd
// originates the host routes itself (redistribute table-direct, or bgpcfgd's `network`
// statements). What is checked then is BGP's own table: `show bgp ipv4 unicast
// self-originate json` (FRR's bgp_show JSON: "routes": {"<prefix>": [path, ...]}), every
// host route of ours with a valid path. Returns the /32 (and /128) prefixes with one.
std::optional<std::set<IpAddr>> parseBgpOriginated(const std::string& json, std::string& error);

// `ours` not originated are missing; originated host prefixes not ours are foreign
// (another `network` statement or redistribution: reported, never touched).
ImportAudit auditOriginated(const std::set<IpAddr>& ours, const std::set<IpAddr>& fresh,
                            const std::set<IpAddr>& originated);

}  // namespace twinrail::hostrouted
