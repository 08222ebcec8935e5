// arsd's whole configuration: the ARS tables as libs/ars parses them (SONiC's Local ARS
// shape), plus what arsd needs from the rest of the document: the front-panel ports it
// attaches to (PORT), the ports static smart routing pins (UPLINK_PIN keys: packets arriving
// there are never steered) and the fabric ports (PATHQD_PORT, every role but host), which
// packet spray uses when ARS_INTERFACES names none.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <variant>

#include "twinrail/ars/config.h"

namespace twinrail::arsd {

inline constexpr uint32_t kSamplingFloorUs = 1000;  // see Daemon: the software path's floor

struct Config {
    ars::ArsConfig ars;
    std::set<std::string> ports;   // PORT keys: the program goes on each one's ingress
    std::set<std::string> pinned;  // UPLINK_PIN keys
    std::set<std::string> fabric;  // PATHQD_PORT keys, else PORT minus UPLINK_PIN
    bool operator==(const Config&) const = default;
};

// The ports whose quality arsd samples: ARS_INTERFACES, and with the global selector
// (every multipath route, spray's), every fabric port too.
std::set<std::string> sampledPorts(const Config& c);

// An error names the table, key and field: "UPLINK_PIN: must be an object of keys".
std::variant<Config, std::string> parseConfig(const nlohmann::json& doc);

}  // namespace twinrail::arsd
