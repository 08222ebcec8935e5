// Which FRR daemon a line belongs to, for the vty-over-TCP channel (no I/O here).
//
// vtysh knows, for every command, the daemons that define it, and sends it to each. A TCP
// vty reaches one daemon, so the callers' vtysh arguments ("-c" line, "-d" daemon) are
// mapped onto zebra and bgpd here:
// - "-d zebra" / "-d bgpd" sends every line to that daemon, as `vtysh -d` does.
// - Otherwise each top-level configuration line picks the daemon of its block:
//   bgpd for `router bgp`, route-maps, prefix lists, community, extcommunity,
//   large-community and as-path lists and other `bgp ...` globals; zebra for
//   `ip import-table`, `ip protocol`, `ip nht`, `interface`, `vrf` and forwarding lines.
//   The lines under a block follow it. Route-maps and prefix lists are per daemon in FRR
//   (vtysh sends them to all): here they go to bgpd only, the daemon that uses them in
//   this project (neighbor and redistribute route-maps). A route-map zebra needs (for
//   `ip protocol ... route-map`, `ip import-table ... route-map`) needs "-d zebra".
// - Exec commands: `clear bgp`, `clear ip bgp` and `show bgp`/`show ip bgp`/
//   `show route-map`/`show ip[v6] prefix-list` go to bgpd, other `show` commands to zebra.
// A line no rule places fails the whole call before anything is sent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace twinrail::frr {

enum class FrrDaemon : uint8_t { Zebra, Bgpd };
std::string daemonName(FrrDaemon daemon);  // "zebra", "bgpd"

// The daemon of a top-level configuration line ("no " allowed), nullopt when the line is
// not one this channel knows as top-level (then it continues the current block).
std::optional<FrrDaemon> configLineOwner(std::string_view line);
// Whether a top-level line opens a node (router, route-map, interface, vrf).
bool opensConfigNode(std::string_view line);
// The daemon of an exec command (show, clear), nullopt when none is known.
std::optional<FrrDaemon> execCommandOwner(std::string_view command);

// Commands for one daemon, sent in order on its connection. The session ends a script
// that leaves the daemon in a config node with `end`.
struct VtyScript {
    FrrDaemon daemon = FrrDaemon::Zebra;
    std::vector<std::string> lines;
};
struct VtyRunPlan {
    std::vector<VtyScript> scripts;
    std::string error;  // non-empty: nothing may be sent
};
VtyRunPlan planVtyRun(const std::vector<std::string>& vtyshArgs);

// zebra's and bgpd's `show running-config` as one text in vtysh's shape ("Current
// configuration:", stanzas separated by "!", "end"): identical stanzas once (frr version,
// hostname, a route-map defined in both), zebra's first.
std::string mergeRunningConfigs(const std::string& zebra, const std::string& bgpd);

}  // namespace twinrail::frr
