// planesteer's configuration, in the config_db.json shape the other daemons read (a
// server has no CONFIG_DB: it comes from a file the planner writes):
//   PLANESTEER|global         interval_ms (200), misses (3), max_peers (4096)
//   PLANESTEER_BOND|<bond>    ports: "<port1>,<port2>" (the bond's two ports)
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "steer_policy.h"
#include "twinrail/service/config_fields.h"

namespace twinrail::planesteer {

struct Config {
    SteerParams steer;
    size_t maxPeers = 4096;
    std::map<std::string, std::vector<std::string>> bonds;  // bond -> its ports
    bool operator==(const Config&) const = default;
};

std::variant<Config, service::ConfigError> parseConfig(const nlohmann::json& doc);

}  // namespace twinrail::planesteer
