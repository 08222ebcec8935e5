// planesteer's configuration, in the config_db.json shape the other daemons read (a
// server has no CONFIG_DB: it comes from a file the planner writes):
//   PLANESTEER|global       interval_ms (200), misses (3), active_interval_ms (20),
//                           active_window_ms (1000), max_active_peers (64),
//                           max_onlink_peers (1024),
//                           max_remote_peers (3072), remote_idle_s (30),
//                           sample_one_in (64, a power of two); max_peers (older
//                           configs) is the default of both peer caps
//   Each bond keeps its on-link and its remote peers in budgets of their own
//   (peer_budget.h): a flood of one kind cannot push out the other.
//   PLANESTEER_BOND|<bond>  ports: "<port1>,<port2>" (the bond's two ports);
//                           gateway, fabric (both or neither): the rail gateway and the
//                           fabric's aggregate, to steer peers on other rails too;
//                           planes: "<plane of port1>,<plane of port2>" ("1,2");
//                           notice_keys: "<plane>:<64 hex digits>,...": the bond
//                           address's receiver key of each plane (proto/fnn_wire.md)
//   PLANESTEER|global       notice_port (0: no fast notices): the UDP port they come to
//   PLANESTEER_NOTICE|<plane>  senders: the loopbacks of the plane's switches
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "steer_policy.h"
#include "twinrail/fnn/keys.h"
#include "twinrail/service/config_fields.h"

namespace twinrail::planesteer {

struct BondConfig {
    std::vector<std::string> ports;
    std::optional<IpAddr> gateway;
    std::optional<IpPrefix> fabric;
    std::vector<uint8_t> planes{1, 2};       // the plane of each port
    std::map<uint8_t, fnn::Key> noticeKeys;  // by plane: this bond's receiver keys
    bool operator==(const BondConfig&) const = default;
};

struct Config {
    SteerParams steer;
    size_t maxOnlinkPeers = 1024;         // the bond's neighbors (its rail's subnet)
    size_t maxRemotePeers = 3072;         // peers on other rails, sampled from traffic
    std::chrono::seconds remoteIdle{30};  // a peer on another rail not seen for this long goes
    uint32_t sampleOneIn = 64;            // outgoing packets sampled to learn those peers
    // Peers sent to this recently are probed at steer.activeInterval, at most this many.
    std::chrono::milliseconds activeWindow{1000};
    size_t maxActivePeers = 64;
    uint16_t noticePort = 0;                            // 0: fast notices off
    std::map<uint8_t, std::set<IpAddr>> noticeSenders;  // by plane: its switches
    std::map<std::string, BondConfig> bonds;
    bool operator==(const Config&) const = default;
};

std::variant<Config, service::ConfigError> parseConfig(const nlohmann::json& doc);

}  // namespace twinrail::planesteer
