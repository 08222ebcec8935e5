// pathqd's configuration, parsed from the config_db.json shape that both the file and
// CONFIG_DB produce:
//   PATHQD|global          daemon-wide settings (all optional)
//   PATHQD_PORT|<port>     fabric ports: role uplink (leaf -> spine) or downlink
//                          (spine -> leaf), optional capacity and INT port id
// Every name that later reaches vtysh, the kernel or a log line (port keys, the INT
// interface, neighbors) is checked with twinrail::names where it enters.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "twinrail/common/ip.h"

#include "twinrail/quality/quality.h"
#include "twinrail/service/config_fields.h"

namespace twinrail::pathqd {

using ConfigError = service::ConfigError;

enum class Role { Uplink, Downlink };
const char* roleName(Role r);

struct PortConfig {
    Role role = Role::Uplink;
    std::optional<double> capacityBps;  // for ports without a speed (veth) or to cap it
    std::optional<uint16_t> intPortId;  // egress port id in INT metadata
    // The switch at the far end (the planner writes it): ports to the same neighbor are
    // parallel links, weighted together (frr_policy.h). Empty: the port alone.
    std::string neighbor;
    bool operator==(const PortConfig&) const = default;
};

enum class CounterKind { Linux, Sonic };

// Where the weight audit reads the weights in force: the kernel's multipath routes, or
// on SONiC APPL_DB ROUTE_TABLE and ASIC_DB's next-hop-group members (what the ASIC
// forwards by; forwarding_weights.h).
enum class WeightAuditSource { Kernel, Sonic };

// Who may send INT reports when `int_sources` is not set: this host only. The kernel
// drops packets from the wire that claim a loopback source (martians), so these cannot
// be forged from another switch; an INT sink elsewhere must be listed.
std::vector<IpPrefix> defaultIntSources();

// sonic_release "master" (SONiC's development branch): after every YYYYMM release.
inline constexpr int kSonicMasterRelease = 999912;

struct Config {
    std::chrono::milliseconds sampleInterval{100};
    quality::Params model;
    CounterKind source = CounterKind::Linux;
    bool publish = true;            // write FRR route-maps (downlink ports)
    bool ipv4 = true, ipv6 = true;  // address families the route-maps attach in
    uint16_t probePort = 50411;     // 0: no latency probes / no level exchange
    std::chrono::milliseconds peerReportTimeout{10000};
    uint16_t intPort = 0;               // 0: no INT collector
    std::optional<uint32_t> intNodeId;  // accept INT hops of this node only
    double intLatencyUnitNs = 1;        // hop latency unit
    double intQueueUnitBytes = 1;       // queue occupancy unit (cell size)
    double intUtilScale = 1000;         // egress tx util: value / scale = fraction
    // INT datagrams are accepted only from these sources (the address each datagram was
    // received from, checked before it is parsed): an unlisted sender could otherwise move
    // a link's weight or hide real congestion.
    std::vector<IpPrefix> intSources = defaultIntSources();
    std::string intInterface;  // non-empty: INT accepted only when received on this port
    std::chrono::milliseconds weightsInterval{1000};
    // Kernel multipath weights against BGP's link bandwidths (weight_audit.h); 0 = off.
    std::chrono::seconds weightAuditInterval{30};
    bool weightAuditRepair = false;  // delete diverged routes for zebra (CAP_NET_ADMIN)
    WeightAuditSource weightAuditSource = WeightAuditSource::Kernel;
    // YYYYMM, or kSonicMasterRelease: the FRR-to-APPL_DB weight rule (sonic_weight_rules.h)
    int sonicRelease = 202505;
    // BGP_PEER_STATE_TABLE refresh, in whole seconds from the config; 0 = off.
    std::chrono::milliseconds bgpPeersInterval{10000};
    std::map<std::string, PortConfig> ports;
    bool operator==(const Config&) const;
};

std::variant<Config, ConfigError> parseConfig(const nlohmann::json& configDb);

}  // namespace twinrail::pathqd
