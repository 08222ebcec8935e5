// The load-balancing benchmark's lab: setup and the modes (lb_lab.h). One job: lb_job.cpp.
#include "lb_lab.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <stdexcept>
#include <thread>

#include "lb_util.h"
#include "twinrail/lab/process.h"
#include "twinrail/lab/shell.h"
#include "twinrail/plan/outputs.h"

namespace twinrail::bench::lb {

using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

// ARS_OBJECT flowlet_idle_time's range (SONiC's Local ARS, libs/ars config.cpp).
constexpr uint32_t kIdleMinUs = 2, kIdleMaxUs = 2047;

// The fields `after` writes differently in the rows `before` has too: {table: {key:
// {field: value}}}. Both are config_db.json objects.
json changedFields(const json& before, const json& after) {
    json out = json::object();
    for (const auto& [table, rows] : after.items()) {
        if (!before.contains(table)) continue;
        for (const auto& [key, row] : rows.items()) {
            const json was = before[table].value(key, json::object());
            for (const auto& [field, value] : row.items()) {
                if (was.value(field, json()) != value) out[table][key][field] = value;
            }
        }
    }
    return out;
}

// Removes from `cfg` every field `fields` names (changedFields' shape).
void eraseFields(json& cfg, const json& fields) {
    for (const auto& [table, rows] : fields.items()) {
        for (const auto& [key, row] : rows.items()) {
            if (!cfg.contains(table) || !cfg[table].contains(key)) continue;
            for (const auto& [field, value] : row.items()) cfg[table][key].erase(field);
        }
    }
}

plan::Request::Lb lbFor(Steer s) {
    switch (s) {
        case Steer::Ars:
            return plan::Request::Lb::Ars;
        case Steer::ArsGlobal:
            return plan::Request::Lb::ArsGlobal;
        case Steer::Spray:
            return plan::Request::Lb::Spray;
        case Steer::None:
            break;
    }
    return plan::Request::Lb::Ecmp;
}

}  // namespace

LbLab::LbLab(plan::Plan p, lab::LabBinaries bins, std::string probe, int queueMs)
    : p_(std::move(p)), bins_(std::move(bins)), probe_(std::move(probe)), queueMs_(queueMs) {
    // The planner's own rows for each --lb, so the benchmark switches to exactly what
    // `twinrail-lab up --lb ...` would have built: the tables an ECMP plan lacks, and the
    // fields it writes differently in rows both have (ars-global's PATHQD|global
    // max_penalty).
    plan::Request base = p_.request;
    base.lb = plan::Request::Lb::Ecmp;
    const auto ecmp = std::get<plan::Plan>(plan::buildPlan(base));
    for (Steer s : {Steer::Ars, Steer::ArsGlobal, Steer::Spray}) {
        plan::Request r = base;
        r.lb = lbFor(s);
        const auto withLb = std::get<plan::Plan>(plan::buildPlan(r));
        for (const auto* sw : plane1()) {
            json before = plan::configDb(ecmp, *ecmp.findSwitch(sw->name));
            json after = plan::configDb(withLb, *withLb.findSwitch(sw->name));
            json tables = json::object();
            for (const auto& [table, rows] : after.items())
                if (!before.contains(table)) tables[table] = rows;
            steerTables_[sw->name][s] = tables;
            steerFields_[sw->name][s] = changedFields(before, after);
        }
    }
}

std::vector<const plan::Switch*> LbLab::plane1() const {
    std::vector<const plan::Switch*> out;
    for (const auto& sw : p_.switches)
        if (sw.plane == 1) out.push_back(&sw);
    return out;
}

void LbLab::shape(const std::string& node, const std::string& port, double mbit) const {
    lab::inNodeRun(kLab, node,
                   {"tc", "qdisc", "replace", "dev", port, "root", "tbf", "rate",
                    std::to_string(static_cast<int>(mbit * 1000)) + "kbit", "burst", "32kb",
                    "latency", std::to_string(queueMs_) + "ms"});
}

void LbLab::shapeDegraded(bool degraded) const {
    shape("p1-spine1", degradedPort_, degraded ? kDegradedMbit : kMbit);
}

void LbLab::setUp() {
    for (const auto& srv : p_.servers) {
        for (const auto& nic : srv.nics) {
            std::string node = lab::PlanLab::nicNode(srv, nic);
            address_[node] = nic.address;
            for (const auto& port : nic.ports) {
                if (port.plane != 1) lab::failNode(kLab, node + ":" + port.name);
                if (port.plane == 1) shape(node, port.name, kMbit);
            }
            (nic.rail == 1 ? senders_ : receivers_).push_back(node);
        }
    }
    for (const auto* sw : plane1()) {
        for (const auto& port : sw->ports) {
            shape(sw->name, port.name, kMbit);
            if (sw->name == "p1-leaf1" && port.role == plan::PortRole::Uplink)
                uplinks_.push_back(port.name);
            if (sw->name == "p1-spine1" && port.peer == "p1-leaf2") degradedPort_ = port.name;
        }
    }
    // pathqd's levels in the lab's scale: 100 Mbit/s is a full link.
    for (const auto* sw : plane1()) {
        editConfig(sw->name, [](json& cfg) {
            cfg["PATHQD"]["global"]["reference_mbps"] = "100";
            cfg["PATHQD"]["global"]["min_hold_ms"] = "2000";
            cfg["PATHQD"]["global"]["raise_hold_ms"] = "5000";
        });
    }
    for (const auto* sw : plane1()) signalService(sw->name, lab::Service::Pathqd, SIGHUP);
    // One iperf3 server per sender on every receiver: all-to-all runs them at once.
    for (const auto& r : receivers_) {
        for (int i = 0; i < kIperfPorts; ++i)
            lab::inNodeRun(kLab, r, {"iperf3", "-s", "-D", "-p", std::to_string(5201 + i)});
    }
}

template <typename F>
void LbLab::editConfig(const std::string& node, F edit) const {
    std::string path = lab::PlanLab::stateDir(kLab) + "/" + node + "/config_db.json";
    json cfg;
    std::ifstream(path) >> cfg;
    edit(cfg);
    // Whole or not at all: a daemon told to re-read (SIGHUP) by an earlier edit may be
    // reading now, and a half-written file is a bad config it refuses, keeping the old one
    // (a mode's pins left in place under the next mode, as happened).
    const std::string tmp = path + ".tmp";
    std::ofstream(tmp) << cfg.dump(2);
    if (::rename(tmp.c_str(), path.c_str()) != 0)
        throw std::runtime_error("renaming " + tmp + ": " + std::strerror(errno));
}

void LbLab::signalService(const std::string& node, lab::Service s, int sig) const {
    for (pid_t pid : lab::servicePids(kLab, node, s)) ::kill(pid, sig);
}

void LbLab::detachPathqd(const plan::Switch& sw) const {
    detachPathqdRouteMaps(kLab, sw);
}

// Pins on a leaf: each host port to its planned uplink (static smart routing), or every
// host port to the uplink toward p1-spine2 (single path: one uplink, one spine, and not the
// spine whose link the degraded pattern thins).
void LbLab::setPins(const plan::Switch& sw, bool pins, bool singlePath) const {
    std::string one;
    for (const auto& port : sw.ports)
        if (port.role == plan::PortRole::Uplink && port.peer == "p1-spine2") one = port.name;
    editConfig(sw.name, [&sw, pins, singlePath, &one](json& cfg) {
        cfg.erase("UPLINK_PIN");
        if (!pins && !singlePath) return;
        for (const auto& port : sw.ports) {
            if (port.role == plan::PortRole::Host)
                cfg["UPLINK_PIN"][port.name] = {{"uplink", singlePath ? one : port.pinnedUplink}};
        }
    });
    signalService(sw.name, lab::Service::Hostrouted, SIGHUP);
}

// The switch's ARS rows and fields as the planner writes them for the mode (none for
// Steer::None), the flowlet idle time (or per-packet quality) set; arsd started, told
// (SIGHUP) or stopped to match.
void LbLab::setSteer(const plan::Switch& sw, const Mode& m, uint32_t idleUs) const {
    const auto& all = steerTables_.at(sw.name);
    const auto& allFields = steerFields_.at(sw.name);
    json tables = m.steer == Steer::None ? json::object() : all.at(m.steer);
    json fields = m.steer == Steer::None ? json::object() : allFields.at(m.steer);
    if (tables.contains("ARS_OBJECT")) {
        for (auto& [name, row] : tables["ARS_OBJECT"].items()) {
            row["flowlet_idle_time"] = std::to_string(std::clamp(idleUs, kIdleMinUs, kIdleMaxUs));
            if (m.perPacket) row["assign_mode"] = "per_packet_quality";
        }
    }
    editConfig(sw.name, [&all, &allFields, &tables, &fields](json& cfg) {
        for (const auto& [s, t] : all)
            for (const auto& [table, rows] : t.items()) cfg.erase(table);
        for (const auto& [s, f] : allFields) eraseFields(cfg, f);
        for (const auto& [table, rows] : tables.items()) cfg[table] = rows;
        cfg.merge_patch(fields);
    });
#ifdef TWINRAIL_LAB_HAS_ARSD
    const bool running = !lab::servicePids(kLab, sw.name, lab::Service::Arsd).empty();
    if (!tables.empty() && !running) lab::startService(kLab, bins_, sw.name, lab::Service::Arsd);
    if (!tables.empty() && running) signalService(sw.name, lab::Service::Arsd, SIGHUP);
    if (tables.empty() && running) lab::stopService(kLab, sw.name, lab::Service::Arsd, SIGTERM);
#else
    if (!tables.empty())
        throw std::runtime_error("this build's lab cannot start arsd (lab::Service::Arsd)");
#endif
}

// The mode: pins on the leaves or not, pathqd running or stopped (its route-maps stay,
// with the levels of healthy links: every path equal, as ECMP), ARS rows and arsd.
void LbLab::mode(const Mode& m, uint32_t idleUs) const {
    for (const auto* sw : plane1()) {
        // Pins before the ARS rows: arsd reads UPLINK_PIN too (it never steers a pinned
        // port), and setSteer starts or signals it; the other order left the previous
        // mode's pins in arsd, and ARS after static forwarded like ECMP. Both before
        // pathqd's SIGHUP below, which reads the PATHQD fields setSteer writes.
        if (!sw->spine) setPins(*sw, m.pins, m.singlePath);
        setSteer(*sw, m, idleUs);
        bool running = !lab::servicePids(kLab, sw->name, lab::Service::Pathqd).empty();
        if (m.pathqd && !running) lab::startService(kLab, bins_, sw->name, lab::Service::Pathqd);
        if (!m.pathqd && running) {
            lab::stopService(kLab, sw->name, lab::Service::Pathqd, SIGTERM);
            if (sw->spine) detachPathqd(*sw);
        }
        if (m.pathqd && running) signalService(sw->name, lab::Service::Pathqd, SIGHUP);
    }
    // The fabric is healthy here: every mode starts from equal weights. pathqd raises a
    // level that the previous mode's congestion lowered only after raise_hold_ms, step by
    // step, and global ARS reads those weights as the paths' widths (seen: 7 against 30
    // on p1-leaf1 as the sweep began, after the degraded pattern).
    if (!lab::waitUntil([this] { return equalWeights(); }, 60s, 250ms))
        std::cerr << "lb_bench: p1-leaf1's weights toward p1-leaf2 still unequal after 60 s\n";
    std::this_thread::sleep_for(6s);  // pins in place, levels published and settled
}

// Whether p1-leaf1's route to the first receiver has (nearly) one weight on every next hop,
// within 10%: 24 against 25 stayed for minutes on an idle fabric (likely a level stuck one
// below the top, since fixed in the quality filter), while what this waits out is 7
// against 30 after the degraded pattern.
bool LbLab::equalWeights() const {
    auto out = lab::inNodeRun(kLab, "p1-leaf1",
                              {"ip", "-j", "route", "show", address_.at(receivers_.front())})
                   .out;
    auto routes = json::parse(out, nullptr, false);
    if (!routes.is_array() || routes.empty()) return false;
    std::set<int> weights;
    for (const auto& nh : routes.front().value("nexthops", json::array()))
        weights.insert(nh.value("weight", 1));
    return weights.size() <= 1 || *weights.rbegin() * 10 <= *weights.begin() * 11;
}

}  // namespace twinrail::bench::lb
