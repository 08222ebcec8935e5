// hostrouted's configuration, parsed from the config_db.json shape that both the file
// and CONFIG_DB produce:
//   HOSTROUTED|global            daemon-wide settings (all optional)
//   HOSTROUTED_INTERFACE|<name>  host-facing ports; <name> may be a glob ("Ethernet*")
//   UPLINK_PIN|<downlink>        static smart routing: the uplink this downlink's
//                                traffic leaves through (uplink_pins.h)
//   HOSTROUTED_BINDING|<ip>      where a planned host's address may be (binding_config.h)
//   HOSTROUTED_UNFREEZE|<ip>     an operator's request to thaw a frozen address
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "binding_config.h"
#include "notice_config.h"
#include "twinrail/common/ip.h"
#include "twinrail/service/config_fields.h"

namespace twinrail::hostrouted {

// Where hostrouted runs: plain Linux (it owns the host ports' proxy settings), or SONiC,
// where intfmgrd and ndppd own them (hostrouted reads, warns, and writes none of them).
enum class Platform { Linux, Sonic };
// How host routes reach BGP: zebra's `ip import-table`; bgpd's `redistribute
// table-direct` (FRR >= 9.1); or STATE_DB ADVERTISE_NETWORK_TABLE rows for SONiC's
// bgpcfgd, which renders them as `network` statements.
enum class Advertise { ImportTable, TableDirect, NetworkTable };
std::string_view platformName(Platform p);
std::string_view advertiseName(Advertise a);

struct Config {
    uint32_t routeTable = 10;     // IPv4 host routes; zebra `ip import-table`
    uint8_t routeProtocol = 201;  // marks our routes; also IPv6 routes in the main table
    bool ipv4 = true;
    bool ipv6 = true;
    // EVPN multihoming (es_attachment.h): the managed interfaces are SVIs whose bridges
    // hold Ethernet-segment ports, and FRR's EVPN view is read every evpnPollInterval.
    bool evpnMh = false;
    bool acceptEvpn = true;  // route the hosts the ES peer learned (evpn_mh only)
    std::chrono::milliseconds evpnPollInterval{100};
    std::string evpnVty;  // zebra's vty socket; empty: zebra.vty in FRR's run directory
    // The ES peer over the AUX link, for the detour of hosts whose ES port is down here
    // (es_attachment.h); no peer, no detour. The detour routes live in their own table,
    // looked up at evpnDetourPriority + 1 by everything that did not come in over the AUX
    // link (at evpnDetourPriority: AUX ingress goes straight to main, so never loops).
    std::string evpnPeer;
    std::string evpnPeerInterface;
    uint32_t evpnDetourTable = 990;
    uint32_t evpnDetourPriority = 900;
    bool manageFrr = false;
    bool proxyArp = false;
    bool proxyNd = false;
    std::chrono::milliseconds keepalive{3000};  // 0 turns probing off
    std::chrono::milliseconds holdtime{9000};
    uint32_t maxRoutes = 16384;
    uint32_t maxRoutesPerPort = 1024;
    double routeRate = 2000.0;  // new routes per second
    uint32_t routeBurst = 4000;
    std::chrono::seconds auditInterval{300};  // periodic full re-dump and reconcile
    // Checks that zebra imported and advertises every host route (frr_audit.h); 0 = only
    // after an FRR restart.
    std::chrono::seconds frrAuditInterval{10};
    std::vector<std::string> interfaces;            // names or glob patterns
    std::map<std::string, std::string> uplinkPins;  // downlink -> uplink
    uint32_t pinTableBase = 1000;
    uint32_t pinRulePriority = 1000;
    double pinMinWeightRatio = 0.5;
    // Trust (binding_config.h, host_registry.h): where each planned host may be, how often
    // a learned one may move before it freezes, and the operator's thaw requests.
    HostBindings bindings;
    uint32_t moveLimit = 5;
    std::chrono::seconds moveWindow{180};
    UnfreezeRequests unfreeze;
    Platform platform = Platform::Linux;
    Advertise advertise = Advertise::ImportTable;
    // The host-port hold (port_hold.h): the prefixes a healthy leaf has from the fabric
    // (none: the hold is off), and how long a partial set keeps the host ports down.
    std::vector<IpPrefix> fabricPrefixes;
    std::chrono::seconds holdMax{60};
    // Fast notices (notice_config.h): a host port's loss told at once, beside BGP.
    NoticeConfig notices;

    bool managesInterface(const std::string& ifname) const;
    bool operator==(const Config&) const = default;
};

using ConfigError = service::ConfigError;

std::variant<Config, ConfigError> parseConfig(const nlohmann::json& configDb);

// Only settings that cannot change under a running daemon without moving every route.
std::variant<std::monostate, ConfigError> checkRuntimeChange(const Config& running,
                                                             const Config& next);

}  // namespace twinrail::hostrouted
