// STATE_DB rows hostrouted publishes (schema: proto/hostrouted_state.schema.json).
#pragma once

#include <chrono>
#include <string>
#include "es_sync.h"

#include "host_registry.h"
#include "import_auditor.h"
#include "prober.h"
#include "refused_claims.h"
#include "twinrail/netlink/monitor.h"
#include "twinrail/redis/client.h"
#include "uplink_pinner.h"

namespace twinrail::hostrouted {

inline constexpr const char* kHostRouteTable = "HOST_ROUTE_TABLE";
inline constexpr const char* kStatsTable = "HOST_ROUTE_STATS";
// Hosts seen on a managed port outside its subnets: a NIC cabled to another rail's leaf.
inline constexpr const char* kForeignTable = "HOST_FOREIGN_TABLE";
// Claims refused (refused_claims.h): HOST_CLAIM_TABLE|<ip>|<port>.
inline constexpr const char* kClaimTable = "HOST_CLAIM_TABLE";

std::string wallClock(TimePoint steady, TimePoint steadyNow,
                      std::chrono::system_clock::time_point wallNow);

// `port`: the member port behind an SVI the host sits on; empty when the host's interface
// is the port itself.
redis::Fields hostRow(const HostRecord& rec, const std::string& ifname, const std::string& port,
                      TimePoint now, std::chrono::system_clock::time_point wallNow);
redis::Fields claimRow(const RefusedClaim& c, TimePoint now,
                       std::chrono::system_clock::time_point wallNow);

// What HOST_ROUTE_STATS|global shows, gathered by the daemon.
struct StatsView {
    RegistryStats registry;
    size_t routes = 0, hosts = 0, pending = 0;
    ProberStats prober;
    netlink::MonitorStats monitor;
    AuditStats audit;
    uint64_t configRejected = 0, redisErrors = 0;
    size_t foreignHosts = 0;
    std::string frrConfig;
    std::optional<PinnerStats> pins;  // with UPLINK_PIN only
    std::optional<netlink::RouteWatchStats> routeWatch;
    std::optional<EsSyncStats> esSync;  // with evpn_mh only
    size_t esPeerHosts = 0;
    uint64_t claimsRefused = 0;                  // every refused claim, counted
    size_t claims = 0;                           // (address, port) pairs in HOST_CLAIM_TABLE
    uint64_t guardApplied = 0, guardFailed = 0;  // kernel ARP/ND guard updates
};
redis::Fields statsRow(const StatsView& v, const std::string& updated);

}  // namespace twinrail::hostrouted
