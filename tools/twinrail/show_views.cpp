#include "show_views.h"

#include <ctime>

#include "twinrail/common/table.h"

namespace twinrail::cli {
namespace {

std::string field(const Fields& f, const std::string& name, const std::string& missing = "-") {
    auto it = f.find(name);
    return it == f.end() || it->second.empty() ? missing : it->second;
}

nlohmann::json asJson(const Row& r, const std::string& keyName) {
    nlohmann::json j = {{keyName, r.key}};
    for (const auto& [k, v] : r.fields) j[k] = v;
    return j;
}

// "2026-11-29T20:14:18.984Z" or "2026-11-29T20:14:18Z" -> time point (UTC).
std::optional<std::chrono::system_clock::time_point> parseIso(const std::string& s) {
    std::tm tm{};
    const char* end = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
    if (end == nullptr) return std::nullopt;
    return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string gbps(const std::string& bps) {
    try {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1f", std::stod(bps) / 1e9);
        return buf;
    } catch (const std::exception&) {
        return "-";
    }
}

// Congestion with the signal that gave it ("0.420 ecn"): what an operator asks first
// when a level is down.
std::string congestion(const Fields& f) {
    std::string value = field(f, "congestion");
    std::string cause = field(f, "congestion_cause", "none");
    return cause == "none" ? value : value + " " + cause;
}

}  // namespace

View hostRoutesView(const std::vector<Row>& rows, const HostFilter& filter) {
    View v;
    v.columns = {"HOST", "INTERFACE", "FAMILY", "MAC", "SOURCE", "ROUTE", "NEIGHBOR", "SINCE"};
    for (const auto& r : rows) {
        const std::string fam = field(r.fields, "family");
        if (!filter.interface.empty() && field(r.fields, "ifname") != filter.interface) continue;
        if (filter.family == 4 && fam != "ipv4") continue;
        if (filter.family == 6 && fam != "ipv6") continue;
        v.rows.push_back({r.key, field(r.fields, "ifname"), fam, field(r.fields, "mac"),
                          field(r.fields, "source"), field(r.fields, "state"),
                          field(r.fields, "neigh_state"), field(r.fields, "since")});
        v.json.push_back(asJson(r, "host"));
    }
    return v;
}

View pathQualityView(const std::vector<Row>& rows) {
    View v;
    v.columns = {"PORT",     "ROLE",       "OPER",       "CAPACITY(G)", "UTIL",
                 "QUEUE(B)", "ECN",        "PAUSE RX/s", "LATENCY(ns)", "CONGESTION",
                 "LEVEL",    "PEER LEVEL", "LAST CHANGE"};
    for (const auto& r : rows) {
        const Fields& f = r.fields;
        // No mark counter on the port: "-", not a ratio of 0 that was never measured.
        std::string ecn = field(f, "ecn_source", "none") == "none" ? "-" : field(f, "ecn_ratio");
        std::string pause = field(f, "pause_rx_pps");
        if (field(f, "pfc_storm") == "true") pause += " STORM";
        v.rows.push_back({r.key, field(f, "role"), field(f, "oper_status"),
                          gbps(field(f, "capacity_bps", "")), field(f, "util"),
                          field(f, "queue_bytes"), ecn, pause, field(f, "latency_ns"),
                          congestion(f), field(f, "level") + "/" + field(f, "levels"),
                          field(f, "peer_level"), field(f, "last_change")});
        v.json.push_back(asJson(r, "port"));
    }
    return v;
}

View weightsView(const std::vector<Row>& rows) {
    View v;
    v.columns = {"GROUP", "NEXT HOPS (port=weight)", "PREFIXES", "SAMPLE"};
    for (const auto& r : rows) {
        v.rows.push_back({r.key, field(r.fields, "nexthops"), field(r.fields, "prefixes"),
                          field(r.fields, "sample")});
        v.json.push_back(asJson(r, "group"));
    }
    return v;
}

View uplinkPinsView(const std::vector<Row>& rows) {
    View v;
    v.columns = {"DOWNLINK", "UPLINK", "TABLE", "STATE", "PINNED PREFIXES", "SINCE", "REASON"};
    for (const auto& r : rows) {
        std::string prefixes = field(r.fields, "routes_v4");
        if (field(r.fields, "routes_v6") != "0" && !field(r.fields, "routes_v6").empty())
            prefixes += " + " + field(r.fields, "routes_v6") + " v6";
        v.rows.push_back({r.key, field(r.fields, "uplink"), field(r.fields, "table"),
                          field(r.fields, "state"), prefixes, field(r.fields, "since"),
                          field(r.fields, "reason")});
        v.json.push_back(asJson(r, "downlink"));
    }
    return v;
}

View statsView(const std::map<std::string, Fields>& statsByDaemon) {
    View v;
    v.columns = {"COUNTER"};
    std::map<std::string, std::vector<std::string>> byCounter;
    size_t col = 0;
    v.json = nlohmann::json::object();
    for (const auto& [daemon, fields] : statsByDaemon) {
        v.columns.push_back(daemon);
        for (const auto& [k, val] : fields) {
            auto& cells = byCounter[k];
            cells.resize(statsByDaemon.size(), "");
            cells[col] = val;
            v.json[daemon][k] = val;
        }
        ++col;
    }
    for (auto& [k, cells] : byCounter) {
        cells.resize(statsByDaemon.size(), "");
        std::vector<std::string> row{k};
        row.insert(row.end(), cells.begin(), cells.end());
        v.rows.push_back(std::move(row));
    }
    return v;
}

View configView(const std::map<std::string, Fields>& rows) {
    View v;
    v.columns = {"KEY", "FIELD", "VALUE"};
    v.json = nlohmann::json::object();
    for (const auto& [key, fields] : rows) {
        v.json[key] = nlohmann::json::object();
        if (fields.empty()) v.rows.push_back({key, "", ""});
        for (const auto& [k, val] : fields) {
            v.rows.push_back({key, k, val});
            v.json[key][k] = val;
        }
    }
    return v;
}

std::optional<std::string> staleness(const std::string& daemon, const std::optional<Fields>& stats,
                                     std::chrono::system_clock::time_point now,
                                     std::chrono::seconds maxAge) {
    if (!stats || stats->empty()) {
        return daemon +
               " has published no state here: it is not running, or writes to another Redis "
               "(systemctl status " +
               daemon + ")";
    }
    auto it = stats->find("updated");
    auto when = it == stats->end() ? std::nullopt : parseIso(it->second);
    if (!when) return daemon + "'s state has no valid \"updated\" time";
    auto age = std::chrono::duration_cast<std::chrono::seconds>(now - *when);
    if (age > maxAge) {
        return daemon + "'s state is " + std::to_string(age.count()) +
               " s old (it refreshes every second): the daemon is not running; what follows is its "
               "last state";
    }
    return std::nullopt;
}

std::string renderTable(const View& view) {
    std::vector<std::vector<std::string>> all{view.columns};
    all.insert(all.end(), view.rows.begin(), view.rows.end());
    return formatTable(all);
}

}  // namespace twinrail::cli
