// What `twinrail show ...` prints, computed from Redis rows without any I/O: a table for
// people and JSON for scripts, from the same rows.
#pragma once

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace twinrail::cli {

using Fields = std::map<std::string, std::string>;

struct Row {
    std::string key;  // without the table prefix: "10.1.1.10", "swp1", "global"
    Fields fields;
};

struct View {
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows;
    nlohmann::json json = nlohmann::json::array();
};

struct HostFilter {
    std::string interface;  // empty: all
    int family = 0;         // 0 both, 4, 6
};

View hostRoutesView(const std::vector<Row>& rows, const HostFilter& filter);
View pathQualityView(const std::vector<Row>& rows);
View weightsView(const std::vector<Row>& rows);
// Static smart routing: each downlink's pinned uplink, pinned or fallen back (and why).
View uplinkPinsView(const std::vector<Row>& rows);
// One column per daemon, one row per counter.
View statsView(const std::map<std::string, Fields>& statsByDaemon);
// CONFIG_DB rows of the daemons' tables: TABLE|key -> fields.
View configView(const std::map<std::string, Fields>& rows);

// A daemon publishes its stats row every second with "updated" (UTC, ISO 8601). Returns
// why its state cannot be trusted (no row: not running or never connected; an old row:
// stopped), or nullopt when it is fresh.
std::optional<std::string> staleness(const std::string& daemon, const std::optional<Fields>& stats,
                                     std::chrono::system_clock::time_point now,
                                     std::chrono::seconds maxAge = std::chrono::seconds(10));

std::string renderTable(const View& view);

}  // namespace twinrail::cli
