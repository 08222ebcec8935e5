#include "tour.h"

#include <iostream>
#include <sstream>
#include <thread>

#include "twinrail/lab/fabric.h"
#include "twinrail/lab/lab_status.h"
#include "twinrail/lab/measure.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/shell.h"
#include "twinrail/plan/plan.h"

namespace twinrail::labtool {
namespace {

using namespace std::chrono_literals;
namespace plan = twinrail::plan;

void step(const std::string& title) {
    std::cout << "\n\033[1m== " << title << "\033[0m\n";
}

// The last `n` lines of `text` (as `| tail -n`).
std::string lastLines(const std::string& text, size_t n) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::string out;
    for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i)
        out += lines[i] + "\n";
    return out;
}

// Runs `argv` in the node (no shell) and prints it and its output, or with `tail` only the
// output's last `tail` lines.
std::string run(const std::string& lab, const std::string& node, const lab::Argv& argv,
                size_t tail = 0) {
    std::string out = lab::inNodeRun(lab, node, argv).out;
    std::cout << "[" << node << "]$ " << lab::describe(argv) << "\n"
              << (tail > 0 ? lastLines(out, tail) : out);
    return out;
}

// `ip route show PREFIX` in the node: the route as the kernel has it.
std::string routeOf(const std::string& lab, const std::string& node, const std::string& prefix) {
    return lab::inNodeRun(lab, node, {"ip", "route", "show", prefix}).out;
}

std::string stateDb(const std::string& lab, const std::string& node, const lab::Argv& args) {
    std::string sock = lab::PlanLab::stateDir(lab) + "/" + node + "/redis.sock";
    std::cout << "[" << node << "]$ redis-cli -n 6 " << lab::describe(args) << "\n";
    lab::Argv argv{"redis-cli", "-s", sock, "-n", "6"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::string out = lab::run(argv).out;
    std::cout << out;
    return out;
}

// Kernel weights on `node` for `prefix`, by port.
std::map<std::string, int> weights(const std::string& lab, const std::string& node,
                                   const std::string& prefix) {
    return lab::parseRouteWeights(routeOf(lab, node, prefix));
}

bool failureUnderTraffic(const std::string& lab, const lab::LabBinaries& bins,
                         const std::string& target, const std::vector<lab::FlowPair>& pairs) {
    std::cout << "16 UDP flows per pair (hashed over both planes), a packet every 2 ms;\n"
              << target << " fails 2 s in:\n";
    auto failed = lab::measureDuring(
        lab, bins, pairs, [&lab, &target] { lab::failNode(lab, target); }, 6);
    std::cout << lab::describeMeasurement(failed);
    std::cout << "restoring " << target << " under the same traffic:\n";
    auto restored = lab::measureDuring(
        lab, bins, pairs, [&lab, &bins, &target] { lab::restoreNode(lab, bins, target); }, 6);
    std::cout << lab::describeMeasurement(restored);
    bool ok = true;
    for (const auto* set : {&failed, &restored}) {
        for (const auto& r : *set) {
            ok = ok && !r.contains("error") && r["flows_not_recovered"] == 0;
        }
    }
    return ok;
}

}  // namespace

bool runTour(const std::string& lab, const lab::LabBinaries& bins, const plan::Plan& plan) {
    const bool bond = plan.request.attach == plan::Attach::Bond;
    bool ok = true;
    // A SONiC-layout lab's switch ports are EthernetN: the plan's names mapped.
    const nlohmann::json sonic = lab::labSonicRecord(lab);
    auto port = [&sonic](const std::string& node, const std::string& planPort) {
        return lab::labPortName(sonic, node, planPort);
    };
    const std::string spinePort = port("p1-spine1", "swp1");
    const std::string viaSpine1 = port("p1-leaf2", "swp3");
    const std::string viaSpine2 = port("p1-leaf2", "swp4");
    step("The lab: every switch runs FRR, Redis, pathqd (and hostrouted on leaves)");
    auto status = lab::labStatus(lab);
    std::cout << lab::statusTable(status);
    ok = ok && status["healthy"].get<bool>();

    step(
        "Host routes: srv1-nic1 (10.128.0.2) announced itself on both ports; each plane's leaf "
        "made it a /32");
    // SONiC's layout learns the host on the rail's VLAN (the SVI), not on the port.
    if (sonic.is_null()) {
        run(lab, "p1-leaf1", {"ip", "neigh", "show", "dev", "swp1"});
    } else {
        run(lab, "p1-leaf1", {"ip", "neigh", "show", "10.128.0.2"});
        run(lab, "p1-leaf1", {"bridge", "fdb", "show", "dynamic"});
    }
    run(lab, "p1-leaf1", {"ip", "route", "show", "table", "10"});
    run(lab, "p2-leaf1", {"ip", "route", "show", "table", "10"});
    step("Each plane carries it to the other rail's leaf, over both of that plane's spines");
    run(lab, "p1-leaf2", {"ip", "route", "show", "10.128.0.2"});
    run(lab, "p2-leaf2", {"ip", "route", "show", "10.128.0.2"});
    if (bond) {
        step(
            "srv2-nic1 (same rail) has no routing protocol: one address on bond0, the gateway, "
            "flows hashed over port1 (plane 1) and port2 (plane 2)");
        run(lab, "srv2-nic1", {"ip", "-br", "addr", "show", "bond0"});
        run(lab, "srv2-nic1", {"ip", "route"});
        run(lab, "srv2-nic1", {"ping", "-c2", "-i0.2", "-q", "10.128.0.2"}, 2);
    } else {
        step("srv1-nic2 routes to it over both planes (port1 = plane 1, port2 = plane 2)");
        run(lab, "srv1-nic2", {"ip", "route", "show", "10.128.0.2"});
        run(lab, "srv1-nic2", {"ping", "-c2", "-i0.2", "-q", "10.128.0.2"}, 2);
    }

    step(
        "WCMP: p1-leaf2's weights toward p1-leaf1's hosts, then p1-spine1's port to p1-leaf1 drops "
        "to a quarter of its speed");
    std::cout << "before: " << routeOf(lab, "p1-leaf2", "10.128.0.2");
    lab::inNodeRun(lab, "p1-spine1",
                   {"tc", "qdisc", "replace", "dev", spinePort, "root", "tbf", "rate", "2500mbit",
                    "burst", "1mb", "latency", "1ms"});
    auto t0 = std::chrono::steady_clock::now();
    // A quarter of the capacity gives p1-spine1 about a fifth of the traffic (level 8 of 32
    // against about 29): wait for its share to fall under a third.
    bool moved = lab::waitUntil(
        [&lab, &viaSpine1, &viaSpine2] {
            auto w = weights(lab, "p1-leaf2", "10.128.0.2");
            return w.size() == 2 && w[viaSpine1] * 3 < w[viaSpine1] + w[viaSpine2];
        },
        30s, 250ms);
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - t0);
    std::cout << "after " << took.count() << " ms: " << routeOf(lab, "p1-leaf2", "10.128.0.2");
    std::cout << (moved ? "p1-leaf2 now sends under a third of that traffic through p1-spine1 (" +
                              viaSpine1 + ")\n"
                        : "WEIGHTS DID NOT MOVE (unexpected)\n");
    ok = ok && moved;
    lab::inNodeRun(lab, "p1-spine1", {"tc", "qdisc", "del", "dev", spinePort, "root"});

    step("STATE_DB (Redis DB 6) on the switches, as an operator reads it");
    stateDb(lab, "p1-leaf1", {"--no-raw", "HGETALL", "HOST_ROUTE_TABLE|10.128.0.2"});
    stateDb(lab, "p1-spine1", {"--no-raw", "HGETALL", "PATH_QUALITY_TABLE|" + spinePort});
    stateDb(lab, "p1-leaf2", {"KEYS", "PATH_WEIGHT_TABLE|*"});

    step("The same through the operator CLI: `twinrail show ...` (table, or --json)");
    auto cli = [&lab, &bins](const std::string& node, const lab::Argv& args) {
        lab::Argv argv{bins.twinrail, "--redis-socket",
                       lab::PlanLab::stateDir(lab) + "/" + node + "/redis.sock"};
        argv.insert(argv.end(), args.begin(), args.end());
        std::cout << "[" << node << "]$ twinrail " << lab::describe(args) << "\n";
        auto r = lab::run(argv);
        std::cout << r.out << r.err;
        return r.rc;
    };
    ok = cli("p1-leaf1", {"show", "host-routes"}) == 0 && ok;
    ok = cli("p1-spine1", {"show", "path-quality"}) == 0 && ok;
    ok = cli("p1-leaf2", {"--json", "show", "weights"}) == 0 && ok;

    const std::vector<lab::FlowPair> pairs{
        {"srv1-nic2", "srv1-nic1"}, {"srv1-nic1", "srv1-nic2"}, {"srv2-nic1", "srv1-nic1"}};
    // Bond: with planesteer (the demo runs it) every flow recovers too; without it, the
    // flows remote senders hash into the plane that lost srv1-nic1 stay dead (the failure
    // matrix).
    step("A leaf fails: p1-leaf1 (plane 1, rail 1) loses every link");
    ok = failureUnderTraffic(lab, bins, "p1-leaf1", pairs) && ok;
    step("A NIC port fails: srv1-nic1's plane-1 port goes down");
    ok = failureUnderTraffic(lab, bins, "srv1-nic1:port1", pairs) && ok;
    return ok;
}

}  // namespace twinrail::labtool
