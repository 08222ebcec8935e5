// pathqd at a 16k-GPU plane's route count, on the dual-plane lab: N /32s are added to
// p1-leaf1's table 10 (what hostrouted fills), zebra imports them and BGP carries them to
// p1-leaf2 over both spines. Then, for 30 s of steady state: the CPU of p1-leaf2's pathqd
// and its PATH_WEIGHT_TABLE rows; beside it, in the same run and the same namespace, the
// CPU of the bare kernel dump pathqd used to take every second (the old design), and how
// long one such dump takes. Writes bench/results/pathqd_scale.json.
//
// usage: pathqd_scale TWINRAIL_LAB HOSTROUTED PATHQD OUT.json [SIZES, e.g. 16384,100000]
#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "bench_util.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/shell.h"
#include "twinrail/netlink/link_stats.h"

namespace lab = twinrail::lab;
namespace plan = twinrail::plan;
using json = nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

using twinrail::bench::processCpuSeconds;
using twinrail::bench::threadCpuSeconds;

namespace {

constexpr const char* kLab = "pqsc";
constexpr auto kWindow = 30s;
constexpr auto kSlice = 10s;  // pathqd's CPU per slice, with the route events in it
constexpr int kSlices = 6;

size_t count(const std::string& text) {
    size_t n = 0;
    for (char c : text) {
        if (c < '0' || c > '9') break;
        n = n * 10 + static_cast<size_t>(c - '0');
    }
    return n;
}

size_t leaf2Stat(const std::string& field) {
    return count(
        lab::inNodeRun(kLab, "p1-leaf2",
                       {"redis-cli", "-s", lab::PlanLab::stateDir(kLab) + "/p1-leaf2/redis.sock",
                        "-n", "6", "HGET", "PATHQD_STATS|global", field})
            .out);
}

size_t bgpRoutes(const std::string& node) {
    // The lines that start with a destination (not a nexthop line of a multipath route).
    std::istringstream lines(
        lab::inNodeRun(kLab, node, {"ip", "-4", "route", "show", "proto", "bgp"}).out);
    size_t n = 0;
    for (std::string line; std::getline(lines, line);)
        n += !line.empty() && line[0] >= '0' && line[0] <= '9';
    return n;
}

// N /32s in 10.200.0.0/15 in p1-leaf1's table 10 (one `ip -batch`), or removed again.
void hostRoutes(size_t n, bool add) {
    std::string path = "/tmp/" + std::string(kLab) + "-routes.batch";
    std::ofstream f(path);
    for (size_t i = 0; i < n; ++i) {
        f << "route " << (add ? "add" : "del") << " 10." << (200 + i / 65536) << "."
          << (i / 256) % 256 << "." << i % 256 << "/32 dev swp1 table 10 proto static\n";
    }
    f.close();
    lab::inNodeRun(kLab, "p1-leaf1", {"ip", "-batch", path});
    std::remove(path.c_str());
}

// The bare dump, once a second for the window, from inside p1-leaf2's namespace.
json bareDump() {
    int original = open("/proc/self/ns/net", O_RDONLY);
    int target =
        open(("/var/run/netns/" + lab::PlanLab::nsPrefix(kLab) + "p1-leaf2").c_str(), O_RDONLY);
    setns(target, CLONE_NEWNET);
    close(target);
    double cpu0 = threadCpuSeconds(), dumpMs = 0;
    size_t routes = 0;
    int dumps = 0;
    for (auto end = Clock::now() + kWindow; Clock::now() < end; ++dumps) {
        auto t0 = Clock::now();
        routes = 0;
        for (int family : {AF_INET, AF_INET6})
            routes += twinrail::netlink::dumpRouteWeights(family, 186).size();
        dumpMs += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        std::this_thread::sleep_until(t0 + 1s);
    }
    double cpu = threadCpuSeconds() - cpu0;
    setns(original, CLONE_NEWNET);
    close(original);
    double secs = std::chrono::duration<double>(kWindow).count();
    return {{"cpu_pct", 100 * cpu / secs}, {"dump_ms", dumpMs / dumps}, {"routes", routes}};
}

}  // namespace

static int benchMain(int argc, char** argv) {
    if (argc < 5) {
        std::cerr << "usage: pathqd_scale TWINRAIL_LAB HOSTROUTED PATHQD OUT.json [SIZES]\n";
        return 64;
    }
    std::vector<size_t> sizes;
    std::stringstream list(argc > 5 ? argv[5] : "16384,100000");
    for (std::string s; std::getline(list, s, ',');) sizes.push_back(std::stoul(s));
    lab::LabBinaries bins{argv[2], argv[3], argv[1], "twinrail"};
    lab::PlanLab l(kLab, std::get<plan::Plan>(plan::buildPlan(lab::defaultLabRequest())), bins);
    l.up();
    size_t base = bgpRoutes("p1-leaf2");
    json out{{"window_s", std::chrono::duration<double>(kWindow).count()},
             {"sizes", json::array()}};
    for (size_t n : sizes) {
        auto t0 = Clock::now();
        hostRoutes(n, true);
        bool arrived = lab::waitUntil([&] { return bgpRoutes("p1-leaf2") >= base + n; }, 600s, 1s);
        double propagation = std::chrono::duration<double>(Clock::now() - t0).count();
        std::this_thread::sleep_for(30s);  // weights written, rows published, quiet again
        auto pids = lab::servicePids(kLab, "p1-leaf2", lab::Service::Pathqd);
        // Slices of steady state: those without route events give pathqd's own cost; a
        // slice with events is FRR re-advertising every route after some level changed
        // (the lab's probes, starved of CPU, move levels now and then), and gives the cost
        // of one event.
        json slices = json::array();
        double quietCpu = -1, eventCpu = 0;
        size_t eventCount = 0;
        for (int i = 0; i < kSlices; ++i) {
            size_t e0 = leaf2Stat("route_events");
            double c0 = pids.empty() ? 0 : processCpuSeconds(pids[0]);
            std::this_thread::sleep_for(kSlice);
            double c = (pids.empty() ? 0 : processCpuSeconds(pids[0])) - c0;
            size_t e = leaf2Stat("route_events") - e0;
            double pctSlice = 100 * c / std::chrono::duration<double>(kSlice).count();
            slices.push_back({{"cpu_pct", pctSlice}, {"route_events", e}});
            if (e == 0) quietCpu = quietCpu < 0 ? pctSlice : std::min(quietCpu, pctSlice);
            if (e > 1000) {
                eventCpu += c;
                eventCount += e;
            }
        }
        double cpu = 0;
        for (const auto& s : slices) cpu += s["cpu_pct"].get<double>() / kSlices;
        cpu = cpu * std::chrono::duration<double>(kWindow).count() / 100;  // as over kWindow
        std::string sock = lab::PlanLab::stateDir(kLab) + "/p1-leaf2/redis.sock";
        auto keys = lab::run({"redis-cli", "-s", sock, "-n", "6", "--scan", "--pattern",
                              "PATH_WEIGHT_TABLE|*"})
                        .out;
        auto rows = static_cast<size_t>(std::count(keys.begin(), keys.end(), '\n'));
        json bare = bareDump();
        double pct = 100 * cpu / std::chrono::duration<double>(kWindow).count();  // mean
        json row{{"routes", n},
                 {"arrived", arrived},
                 {"propagation_s", propagation},
                 {"pathqd_cpu_pct", pct},
                 {"weight_rows", rows},
                 {"slices", slices},
                 {"quiet_cpu_pct", quietCpu},
                 {"cpu_us_per_route_event",
                  eventCount > 0 ? 1e6 * eventCpu / static_cast<double>(eventCount) : -1},
                 {"bare_dump_per_second", bare},
                 {"ratio_to_bare_dump",
                  bare["cpu_pct"].get<double>() > 0 ? pct / bare["cpu_pct"].get<double>() : 0}};
        std::cout << row.dump() << "\n";
        out["sizes"].push_back(row);
        hostRoutes(n, false);
        lab::waitUntil([&] { return bgpRoutes("p1-leaf2") <= base; }, 600s, 1s);
    }
    lab::PlanLab::down(kLab);
    std::ofstream(argv[4]) << out.dump(2) << "\n";
    return 0;
}

int main(int argc, char** argv) {
    return twinrail::bench::labMain("pathqd_scale", kLab,
                                    [argc, argv] { return benchMain(argc, argv); });
}
