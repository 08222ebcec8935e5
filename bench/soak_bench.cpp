// Two minute-long scenarios that were namespace tests, moved out of CI (the project's rule:
// long scenarios in bench/, never a weaker check). Each checks what its test checked, for
// as long:
//   pathqd-steady-load (was PathqdFabric.SteadyLoadCausesNoRouteMapChanges): the
//       dual-spine fabric, every fabric link shaped to 100 Mbit/s and s1 -> l2 to 40,
//       pathqd on every switch, 32 iperf3 flows from h1 to h2. Once l1's weights have moved
//       (s1 under 45% of h2's subnet) and 5 s more, 60 s of steady load change nothing:
//       s1's publishes and level_changes stay the same, while it samples all along (over
//       500 samples) and the load still runs.
//   redis-gone (was LabFaults.RedisGoneForAMinuteUnderLoadChangesNoRouting): the bond lab,
//       p1-leaf1's and p1-spine1's Redis killed, 60 s of flows srv1-nic1 <-> srv2-nic1
//       while srv1-nic1:port1 fails for 5 s and comes back. Every flow recovers and the host
//       is routed through the port again; once Redis is back, STATE_DB matches table 10 and
//       PATH_QUALITY_TABLE is republished within 15 s, every daemon still runs, and the lab
//       leaves nothing behind.
// Prints PASS or FAIL per scenario with its figures, writes them to OUT.json, and exits 1
// when any check failed.
//
// usage: soak_bench TWINRAIL_LAB HOSTROUTED PATHQD OUT.json [pathqd-steady-load|redis-gone]
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "bench_util.h"
#include "pathqd_lab.h"
#include "twinrail/lab/fabric.h"
#include "twinrail/lab/measure.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/process.h"
#include "twinrail/lab/redis_server.h"
#include "twinrail/lab/shell.h"
#include "twinrail/plan/plan.h"

namespace lab = twinrail::lab;
namespace plan = twinrail::plan;
using json = nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kLab = "soakr";  // redis-gone's lab

double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A counter as a number when it reads as one, else the text it read.
json counter(const std::string& text) {
    try {
        return std::stoll(text);
    } catch (const std::exception&) {
        return text;
    }
}

// One scenario's outcome. A failed check is recorded; the scenario goes on (a test's
// EXPECT) or, when the caller returns on false, stops there (its ASSERT).
struct Outcome {
    json figures = json::object();
    std::vector<std::string> failures;
    bool check(bool ok, const std::string& what) {
        if (!ok) failures.push_back(what);
        return ok;
    }
};

// ---- pathqd-steady-load: the dual-spine fabric of tests/integration/pathqd_lab.h ----

constexpr const char* kH2Net = "10.2.2.0/24";

class PathqdSteadyLoad : twinrail::it::PathqdLab {
  public:
    explicit PathqdSteadyLoad(std::string pathqd) : pathqd_(std::move(pathqd)) {}
    ~PathqdSteadyLoad() { removeFabric(keepLogs_); }
    PathqdSteadyLoad(const PathqdSteadyLoad&) = delete;
    PathqdSteadyLoad& operator=(const PathqdSteadyLoad&) = delete;

    void run(Outcome& o) {
        keepLogs_ = true;  // until every check passed
        buildFabric("SteadyLoadCausesNoRouteMapChanges");
        startPathqd(o, "s1", "downlink", true);
        startPathqd(o, "s2", "downlink", false);
        startPathqd(o, "l1", "uplink", true);
        startPathqd(o, "l2", "uplink", false);
        lab::shapePort(*fabric_, "s1", "swp2", 40);
        startLoad(600, 32);  // many flows, as in training traffic: no path ever runs empty
        // Let the levels settle under load, then count FRR batches over 60 s.
        bool settled = lab::waitUntil([this] { return share("l1", kH2Net, "swp1") < 45.0; }, 15s);
        o.figures["l1_share_via_s1_percent"] = share("l1", kH2Net, "swp1");
        if (!o.check(settled, "l1 did not give s1 under 45% of h2's subnet within 15 s")) return;
        std::this_thread::sleep_for(5s);
        std::string before = stat("s1", "publishes");
        std::string changesBefore = stat("s1", "level_changes");
        auto t0 = Clock::now();
        std::this_thread::sleep_for(60s);
        o.figures["steady_s"] = secondsSince(t0);
        if (!o.check(load_->running(), "the load stopped early: " + load_->log())) return;
        std::string after = stat("s1", "publishes");
        std::string changesAfter = stat("s1", "level_changes");
        std::string samples = stat("s1", "samples");
        o.figures["s1_publishes_before"] = counter(before);
        o.figures["s1_publishes_after"] = counter(after);
        o.figures["s1_level_changes_before"] = counter(changesBefore);
        o.figures["s1_level_changes_after"] = counter(changesAfter);
        o.figures["s1_samples"] = counter(samples);
        o.check(after == before,
                "s1 published under steady load: publishes " + before + " -> " + after);
        o.check(changesAfter == changesBefore,
                "s1's levels changed under steady load: level_changes " + changesBefore + " -> " +
                    changesAfter);
        // It was sampling all along.
        o.check(std::stoll(samples) > 500, "s1 took " + samples + " samples, not over 500");
        keepLogs_ = !o.failures.empty();
    }

  private:
    void startPathqd(Outcome& o, const std::string& node, const std::string& role, bool withRedis) {
        auto& d = launchPathqd(pathqd_, node, config(role), withRedis);
        // READY=1, as systemd waits for it.
        o.check(d.waitReady(10s), node + ": pathqd not ready within 10 s: " + d.log());
    }

    std::string pathqd_;
    bool keepLogs_ = false;
};

// ---- redis-gone: the dual-plane lab, as tests/integration/lab_faults_it.cpp builds it ----

// srv1-nic1's address, one of p1-leaf1's hosts: behind the port that fails and comes back.
constexpr const char* kHost = "10.128.0.2";

std::string redisCli(const std::string& node, const lab::Argv& args) {
    lab::Argv argv{"redis-cli", "-s", lab::PlanLab::stateDir(kLab) + "/" + node + "/redis.sock",
                   "-n", "6"};
    argv.insert(argv.end(), args.begin(), args.end());
    return lab::inNodeRun(kLab, node, argv).out;
}

std::set<std::string> tableHosts(const std::string& node) {
    std::set<std::string> out;
    std::istringstream in(lab::inNodeRun(kLab, node, {"ip", "route", "show", "table", "10"}).out);
    for (std::string line; std::getline(in, line);) out.insert(line.substr(0, line.find(' ')));
    return out;
}

// Hosts STATE_DB says are routed.
std::set<std::string> stateHosts(const std::string& node) {
    std::set<std::string> out;
    std::istringstream in(redisCli(node, {"--scan", "--pattern", "HOST_ROUTE_TABLE|*"}));
    for (std::string key; std::getline(in, key);) {
        auto bar = key.find('|');
        if (bar == std::string::npos) continue;
        if (redisCli(node, {"HGET", key, "state"}) == "installed\n")
            out.insert(key.substr(bar + 1));
    }
    return out;
}

// Redis is a side channel: with a switch's Redis gone for a minute, traffic flows, a NIC
// port fails and comes back and its routes follow, and once Redis is back its state
// tables are republished to match the kernel.
void redisGone(const lab::LabBinaries& bins, Outcome& o) {
    auto p = plan::buildPlan(lab::defaultLabRequest());
    if (!o.check(std::holds_alternative<plan::Plan>(p), "the default lab plan did not build"))
        return;
    lab::PlanLab lab(kLab, std::get<plan::Plan>(p), bins);
    lab.up();
    for (const char* node : {"p1-leaf1", "p1-spine1"}) {
        if (!o.check(lab::stopService(kLab, node, lab::Service::Redis, SIGKILL),
                     std::string(node) + ": its Redis was not running"))
            return;
    }
    auto event = [&bins] {
        lab::failNode(kLab, "srv1-nic1:port1");
        std::this_thread::sleep_for(5s);
        lab::restoreNode(kLab, bins, "srv1-nic1:port1");
    };
    auto t0 = Clock::now();
    auto reports = lab::measureDuring(
        kLab, bins, {{"srv2-nic1", "srv1-nic1"}, {"srv1-nic1", "srv2-nic1"}}, event, 60);
    std::cout << lab::describeMeasurement(reports);
    o.figures["flow_reports"] = reports;
    int notRecovered = 0;
    for (const auto& r : reports) {
        if (!o.check(!r.contains("error"), "flow report: " + r.dump())) return;
        notRecovered += r["flows_not_recovered"].get<int>();
        o.check(r["flows_not_recovered"] == 0, "flows not recovered: " + r.dump());
    }
    o.figures["flows_not_recovered"] = notRecovered;
    // The port came back while Redis was down: the host is routed through it again.
    o.check(lab::waitUntil([] { return tableHosts("p1-leaf1").count(kHost) > 0; }, 15s),
            std::string("p1-leaf1 does not route ") + kHost + " again within 15 s");
    double redisGoneFor = secondsSince(t0);
    o.figures["redis_gone_s"] = redisGoneFor;
    o.check(redisGoneFor >= 60.0,
            "Redis was gone for " + std::to_string(redisGoneFor) + " s, not a minute");
    for (const char* node : {"p1-leaf1", "p1-spine1"})
        lab::startService(kLab, bins, node, lab::Service::Redis);
    auto back = Clock::now();
    bool matched =
        lab::waitUntil([] { return stateHosts("p1-leaf1") == tableHosts("p1-leaf1"); }, 15s);
    o.figures["state_db_matches_table10_after_s"] = matched ? secondsSince(back) : -1;
    o.check(matched, "STATE_DB does not match table 10 15 s after Redis came back");
    bool republished = lab::waitUntil(
        [] {
            return redisCli("p1-spine1", {"EXISTS", "PATH_QUALITY_TABLE|swp1"}) == "1\n";
        },
        15s);
    o.figures["path_quality_republished_after_s"] = republished ? secondsSince(back) : -1;
    o.check(republished, "p1-spine1 has no PATH_QUALITY_TABLE|swp1 15 s after Redis came back");
    for (const char* node : {"p1-leaf1", "p1-spine1"}) {
        o.check(!lab::servicePids(kLab, node, lab::Service::Pathqd).empty(),
                std::string(node) + ": pathqd is gone");
    }
    o.check(!lab::servicePids(kLab, "p1-leaf1", lab::Service::Hostrouted).empty(),
            "p1-leaf1: hostrouted is gone");
}

struct Scenario {
    const char* name;
    const char* was;  // the namespace test it replaces
    std::function<void(Outcome&)> run;
};

// The figures that are one value, for the PASS/FAIL line.
std::string describeFigures(const json& figures) {
    std::string out;
    for (const auto& [key, value] : figures.items()) {
        if (value.is_structured()) continue;
        out += (out.empty() ? "" : ", ") + key + " " + value.dump();
    }
    return out;
}

}  // namespace

static int benchMain(int argc, char** argv) {
    if (argc < 5) {
        std::cerr << "usage: soak_bench TWINRAIL_LAB HOSTROUTED PATHQD OUT.json "
                     "[pathqd-steady-load|redis-gone]\n";
        return 64;
    }
    lab::LabBinaries bins{argv[2], argv[3], argv[1], "twinrail"};
    std::string only = argc > 5 ? argv[5] : "";
    const std::vector<Scenario> scenarios = {
        {"pathqd-steady-load", "PathqdFabric.SteadyLoadCausesNoRouteMapChanges",
         [&bins](Outcome& o) { PathqdSteadyLoad(bins.pathqd).run(o); }},
        {"redis-gone", "LabFaults.RedisGoneForAMinuteUnderLoadChangesNoRouting",
         [&bins](Outcome& o) {
             // The lab goes, and must leave nothing behind, however the scenario ended.
             try {
                 redisGone(bins, o);
             } catch (const std::exception& e) {
                 o.failures.push_back(std::string("exception: ") + e.what());
             }
             lab::PlanLab::down(kLab);
             auto left = lab::PlanLab::leftovers(kLab);
             std::string what;
             for (const auto& l : left) what += " " + l;
             o.check(left.empty(), "the lab left behind:" + what);
         }}};
    json report{{"scenarios", json::array()}};
    bool pass = true;
    int ran = 0;
    for (const auto& s : scenarios) {
        if (!only.empty() && only != s.name) continue;
        ++ran;
        std::cout << "== " << s.name << " (was " << s.was << ")" << std::endl;
        Outcome o;
        auto t0 = Clock::now();
        try {
            s.run(o);
        } catch (const std::exception& e) {
            o.failures.push_back(std::string("exception: ") + e.what());
        }
        double seconds = secondsSince(t0);
        bool ok = o.failures.empty();
        pass = pass && ok;
        std::cout << (ok ? "PASS " : "FAIL ") << s.name << " in " << seconds
                  << " s: " << describeFigures(o.figures) << std::endl;
        for (const auto& f : o.failures) std::cout << "  failed: " << f << std::endl;
        report["scenarios"].push_back({{"name", s.name},
                                       {"was", s.was},
                                       {"pass", ok},
                                       {"seconds", seconds},
                                       {"figures", o.figures},
                                       {"failures", o.failures}});
    }
    if (ran == 0) {
        std::cerr << "soak_bench: no scenario named " << only << "\n";
        return 64;
    }
    report["pass"] = pass;
    std::ofstream(argv[4]) << report.dump(2) << "\n";
    std::cout << (pass ? "PASS" : "FAIL") << ": " << ran << " scenarios -> " << argv[4] << "\n";
    return pass ? 0 : 1;
}

int main(int argc, char** argv) {
    return twinrail::bench::labMain("soak_bench", kLab,
                                    [argc, argv] { return benchMain(argc, argv); });
}
