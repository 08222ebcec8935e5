// `twinrail-lab status`: what runs in each node of a lab, its BGP sessions, and whether
// every NIC reaches every other NIC, through which planes.
#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "twinrail/ars/config.h"
#include "twinrail/common/table.h"
#include "twinrail/lab/frr_container.h"
#include "twinrail/lab/lab_status.h"
#include "twinrail/lab/reachability.h"
#include "twinrail/lab/shell.h"

namespace twinrail::lab {
namespace {

using json = nlohmann::json;

std::set<std::string> processesIn(const std::string& ns) {
    std::set<std::string> out;
    std::istringstream in(run({"ip", "netns", "pids", ns}).out);
    for (std::string pid; in >> pid;) {
        std::ifstream comm("/proc/" + pid + "/comm");
        std::string name;
        if (std::getline(comm, name)) out.insert(name);
    }
    return out;
}

int lineCount(const std::string& text) {
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

json bgpSessions(const std::string& ns) {
    Argv argv = vtyshFor(ns);
    argv.insert(argv.end(), {"-c", "show bgp summary json"});
    auto j = json::parse(run(argv).out, nullptr, false);
    int up = 0, all = 0;
    int64_t youngest = -1;  // the shortest time any session has been Established
    if (!j.is_discarded() && j.contains("ipv4Unicast") && j["ipv4Unicast"].contains("peers")) {
        for (const auto& [peer, v] : j["ipv4Unicast"]["peers"].items()) {
            ++all;
            if (v.value("state", "") != "Established") continue;
            ++up;
            auto ms = v.value("peerUptimeMsec", int64_t{0});
            youngest = youngest < 0 ? ms : std::min(youngest, ms);
        }
    }
    return {{"established", up}, {"configured", all}, {"youngest_ms", youngest}};
}

namespace {

// Whether the switch's config_db.json enables ARS, so arsd belongs there (lab_services.cpp).
bool arsEnabled(const std::string& lab, const std::string& node) {
    std::ifstream in(PlanLab::stateDir(lab) + "/" + node + "/config_db.json");
    auto db = json::parse(in, nullptr, false);
    if (db.is_discarded()) return false;
    auto parsed = ars::parseArsConfig(db);
    const auto* cfg = std::get_if<ars::ArsConfig>(&parsed);
    return cfg == nullptr || cfg->enabled;
}

}  // namespace

json labStatus(const std::string& name) {
    plan::Plan p = PlanLab::loadPlan(name);
    json out{{"lab", name}, {"switches", json::array()}, {"nics", json::array()}};
    bool healthy = true;
    for (const auto& sw : p.switches) {
        const std::string ns = PlanLab::nsPrefix(name) + sw.name;
        auto procs = processesIn(ns);
        std::vector<std::string> want{"zebra", "bgpd", "redis-server", "pathqd"};
        if (!sw.spine) want.push_back("hostrouted");
        if (arsEnabled(name, sw.name)) want.push_back("arsd");
        json running = json::object();
        for (const auto& w : want) {
            running[w] = procs.count(w) > 0;
            healthy = healthy && procs.count(w) > 0;
        }
        json row{{"name", sw.name},
                 {"role", sw.spine ? "spine" : "leaf"},
                 {"plane", sw.plane},
                 {"processes", running},
                 {"bgp", bgpSessions(ns)}};
        healthy = healthy && row["bgp"]["established"] == row["bgp"]["configured"];
        if (!sw.spine) {
            row["host_routes"] = lineCount(
                inNodeRun(name, sw.name, {"ip", "route", "show", "table", "10", "proto", "201"})
                    .out);
        }
        out["switches"].push_back(row);
    }
    const bool routed = p.request.attach == plan::Attach::Routed;
    out["attach"] = plan::attachName(p.request.attach);
    for (const auto& r : nicReachability(name, p)) {
        healthy = healthy && r.somePlanes == 0 && r.none == 0;
        json row{{"name", r.node},
                 {"address", r.address},
                 {"peers_all_planes", r.allPlanes},
                 {"peers_some_planes", r.somePlanes},
                 {"peers_unreachable", r.none}};
        // A bonded host runs no routing protocol.
        if (routed) row["bgp"] = bgpSessions(PlanLab::nsPrefix(name) + r.node);
        out["nics"].push_back(row);
    }
    out["healthy"] = healthy;
    return out;
}

std::string statusTable(const json& s) {
    auto ratio = [](const json& b) {
        return std::to_string(b["established"].get<int>()) + "/" +
               std::to_string(b["configured"].get<int>());
    };
    std::vector<std::vector<std::string>> sw{
        {"SWITCH", "PLANE", "BGP UP", "HOST ROUTES", "PROCESSES"}};
    for (const auto& r : s["switches"]) {
        std::string procs;
        for (const auto& [k, v] : r["processes"].items())
            procs += (v.get<bool>() ? "" : "!") + k + " ";
        sw.push_back({r["name"], std::to_string(r["plane"].get<int>()), ratio(r["bgp"]),
                      r.contains("host_routes") ? std::to_string(r["host_routes"].get<int>()) : "-",
                      procs});
    }
    std::vector<std::vector<std::string>> nics{
        {"NIC", "ADDRESS", "BGP UP", "PEERS VIA ALL PLANES", "SOME", "NONE"}};
    for (const auto& n : s["nics"]) {
        nics.push_back({n["name"], n["address"], n.contains("bgp") ? ratio(n["bgp"]) : "-",
                        std::to_string(n["peers_all_planes"].get<int>()),
                        std::to_string(n["peers_some_planes"].get<int>()),
                        std::to_string(n["peers_unreachable"].get<int>())});
    }
    return "lab " + s["lab"].get<std::string>() + " (attach " + s.value("attach", "?") +
           "): " + (s["healthy"].get<bool>() ? "healthy" : "DEGRADED") + "\n\n" + formatTable(sw) +
           "(! = not running)\n\n" + formatTable(nics);
}

}  // namespace twinrail::lab
