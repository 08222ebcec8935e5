// Load balancing, every mode on one lab and one run: static ECMP, static smart routing
// (uplink pins), pathqd's WCMP, and both. The plan: 4 servers x 2 GPUs, leaves with 4
// downlinks and 4 uplinks, 4 spines per plane (one link per leaf-spine pair), every plane-1
// fabric and host port shaped to 100 Mbit/s; the bonded NICs send on plane 1 only (their
// second ports down), so plane 1 is the fabric under test. Real FRR, hostrouted, pathqd.
//
//  permutation: every NIC behind p1-leaf1 sends one TCP flow of 25 MB to a different NIC
//      behind p1-leaf2 (a collective's step). Job completion time (the last flow), and the
//      max/mean load of p1-leaf1's uplinks.
//  degraded: p1-spine1 -> p1-leaf2 at a quarter of its rate; 4 flows per NIC, the same
//      permutation. Goodput (all bytes / job time) against max-flow (3 x 100 + 25 Mbit/s).
// Ratios to ECMP and to the ideal, from the same run. Writes JSON and a gnuplot plot.
//
// usage: lb_bench TWINRAIL_LAB HOSTROUTED PATHQD OUT.json [REPS]
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "bench_util.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/process.h"
#include "twinrail/lab/shell.h"

namespace lab = twinrail::lab;
namespace plan = twinrail::plan;
using json = nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kLab = "lbb";
constexpr double kMbit = 100, kDegradedMbit = 25;
constexpr int kBytes = 25 * 1000 * 1000;

double median(std::vector<double> v) {
    if (v.empty()) return -1;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct Bench {
    plan::Plan p;
    lab::LabBinaries bins;
    std::vector<std::string> senders, receivers;  // NIC nodes behind p1-leaf1 / p1-leaf2
    std::map<std::string, std::string> address;   // NIC node -> address
    std::vector<std::string> uplinks;             // p1-leaf1's, in port order
    std::string degradedPort;                     // p1-spine1's port toward p1-leaf2

    std::vector<const plan::Switch*> plane1() const {
        std::vector<const plan::Switch*> out;
        for (const auto& sw : p.switches)
            if (sw.plane == 1) out.push_back(&sw);
        return out;
    }

    void shape(const std::string& node, const std::string& port, double mbit) const {
        lab::inNodeRun(kLab, node,
                       {"tc", "qdisc", "replace", "dev", port, "root", "tbf", "rate",
                        std::to_string(static_cast<int>(mbit * 1000)) + "kbit", "burst", "32kb",
                        "latency", "100ms"});
    }

    void setUp() {
        for (const auto& srv : p.servers) {
            for (const auto& nic : srv.nics) {
                std::string node = lab::PlanLab::nicNode(srv, nic);
                address[node] = nic.address;
                for (const auto& port : nic.ports) {
                    if (port.plane != 1) lab::failNode(kLab, node + ":" + port.name);
                    if (port.plane == 1) shape(node, port.name, kMbit);
                }
                (nic.rail == 1 ? senders : receivers).push_back(node);
            }
        }
        for (const auto* sw : plane1()) {
            for (const auto& port : sw->ports) {
                shape(sw->name, port.name, kMbit);
                if (sw->name == "p1-leaf1" && port.role == plan::PortRole::Uplink)
                    uplinks.push_back(port.name);
                if (sw->name == "p1-spine1" && port.peer == "p1-leaf2") degradedPort = port.name;
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
        for (const auto& r : receivers)
            lab::inNodeRun(kLab, r, {"iperf3", "-s", "-D", "-p", "5201"});
    }

    template <typename F>
    void editConfig(const std::string& node, F edit) const {
        std::string path = lab::PlanLab::stateDir(kLab) + "/" + node + "/config_db.json";
        json cfg;
        std::ifstream(path) >> cfg;
        edit(cfg);
        std::ofstream(path) << cfg.dump(2);
    }

    void signalService(const std::string& node, lab::Service s, int sig) const {
        for (pid_t pid : lab::servicePids(kLab, node, s)) ::kill(pid, sig);
    }

    // The mode: pins on the leaves or not, pathqd running or stopped (its route-maps stay,
    // with the levels of healthy links: every path equal, as ECMP).
    void mode(bool pins, bool pathqd) const {
        for (const auto* sw : plane1()) {
            if (!sw->spine) {
                editConfig(sw->name, [sw, pins](json& cfg) {
                    cfg.erase("UPLINK_PIN");
                    if (!pins) return;
                    for (const auto& port : sw->ports) {
                        if (port.role == plan::PortRole::Host)
                            cfg["UPLINK_PIN"][port.name] = {{"uplink", port.pinnedUplink}};
                    }
                });
                signalService(sw->name, lab::Service::Hostrouted, SIGHUP);
            }
            bool running = !lab::servicePids(kLab, sw->name, lab::Service::Pathqd).empty();
            if (pathqd && !running) lab::startService(kLab, bins, sw->name, lab::Service::Pathqd);
            if (!pathqd && running) {
                lab::stopService(kLab, sw->name, lab::Service::Pathqd, SIGTERM);
                if (sw->spine) detachPathqd(*sw);
            }
            if (pathqd && running) signalService(sw->name, lab::Service::Pathqd, SIGHUP);
        }
        std::this_thread::sleep_for(6s);  // pins in place, levels published and settled
    }

    // Static ECMP: pathqd stopped leaves its route-maps (and the last levels) in place, so
    // they are detached here: no link-bandwidth anywhere, FRR's plain multipath. pathqd
    // attaches them again when it starts.
    void detachPathqd(const plan::Switch& sw) const {
        lab::Argv argv{"vtysh",
                       "-N",
                       lab::PlanLab::nsPrefix(kLab) + sw.name,
                       "-d",
                       "bgpd",
                       "-c",
                       "configure terminal",
                       "-c",
                       "router bgp " + std::to_string(sw.asn)};
        for (const char* af : {"ipv4", "ipv6"}) {
            argv.insert(argv.end(), {"-c", std::string("address-family ") + af + " unicast"});
            for (const auto& port : sw.ports) {
                argv.insert(argv.end(), {"-c",
                                         "no neighbor " + port.name + " route-map TWINRAIL-PQ-IN-" +
                                             port.name + " in",
                                         "-c",
                                         "no neighbor " + port.name +
                                             " route-map TWINRAIL-PQ-OUT-" + port.name + " out"});
            }
            argv.insert(argv.end(), {"-c", "exit-address-family"});
        }
        argv.insert(argv.end(), {"-c", "end", "-c", "clear bgp ipv4 unicast * soft", "-c",
                                 "clear bgp ipv6 unicast * soft"});
        lab::run(argv, 60s);
    }

    std::map<std::string, double> uplinkBytes() const {
        std::map<std::string, double> out;
        for (const auto& u : uplinks) {
            out[u] =
                std::stod(lab::inNodeRun(kLab, "p1-leaf1",
                                         {"cat", "/sys/class/net/" + u + "/statistics/tx_bytes"})
                              .out);
        }
        return out;
    }

    // Each UPLINK_PIN_TABLE row of the Redis at `sock`: "<key> <uplink> <state> <routes_v4>
    // <reason>", one a line.
    static std::string pins(const std::string& sock) {
        std::string out;
        std::istringstream keys(lab::run({"redis-cli", "-s", sock, "-n", "6", "--scan", "--pattern",
                                          "UPLINK_PIN_TABLE|*"})
                                    .out);
        for (std::string key; std::getline(keys, key);) {
            std::istringstream fields(lab::run({"redis-cli", "-s", sock, "-n", "6", "HMGET", key,
                                                "uplink", "state", "routes_v4", "reason"})
                                          .out);
            out += key;
            for (std::string f; std::getline(fields, f);)
                if (!f.empty()) out += " " + f;
            out += "\n";
        }
        return out;
    }

    // One job: sender i -> receiver i+1, `streams` TCP flows each; {job_s, load_max_over_mean}.
    json job(int streams) const {
        auto before = uplinkBytes();
        std::vector<std::string> files;
        auto t0 = Clock::now();
        {
            // Every sender at once, each iperf3's report (and errors) in its own file.
            std::vector<lab::ChildProcess> clients;
            for (size_t i = 0; i < senders.size(); ++i) {
                std::string dst = address.at(receivers[(i + 1) % receivers.size()]);
                std::string file =
                    "/tmp/" + std::string(kLab) + "-job" + std::to_string(i) + ".json";
                files.push_back(file);
                std::remove(file.c_str());
                clients.emplace_back(lab::inNamespace(lab::PlanLab::nsPrefix(kLab) + senders[i],
                                                      {"iperf3", "-J", "-c", dst, "-p", "5201",
                                                       "-P", std::to_string(streams), "-n",
                                                       std::to_string(kBytes)}),  // -n: all streams
                                     file);
            }
            auto deadline = Clock::now() + 120s;
            for (auto& c : clients) {
                c.wait(std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::max(Clock::duration::zero(), deadline - Clock::now())));
            }
        }  // any still running is stopped
        double job = std::chrono::duration<double>(Clock::now() - t0).count();
        auto after = uplinkBytes();
        double most = 0, sum = 0;
        for (const auto& [u, b] : after) {
            most = std::max(most, b - before[u]);
            sum += b - before[u];
        }
        double slowest = 0;
        bool failed = false;
        for (const auto& f : files) {
            json r = json::parse(std::ifstream(f), nullptr, false);
            if (r.is_discarded() || r.contains("error") || !r.contains("end")) {
                failed = true;
                continue;
            }
            slowest = std::max(slowest, r["end"]["sum_received"]["seconds"].get<double>());
            std::remove(f.c_str());
        }
        double mean = sum / static_cast<double>(uplinks.size());
        return {{"job_s", failed ? job : slowest},
                {"wall_s", job},
                {"failed", failed},
                {"load_max_over_mean", mean > 0 ? most / mean : 0}};
    }

    json runMode(const std::string& name, int reps, int streams) const {
        std::vector<double> jobs, loads;
        json samples = json::array();
        for (int i = 0; i < reps; ++i) {
            json j = job(streams);
            samples.push_back(j);
            jobs.push_back(j["job_s"].get<double>());
            loads.push_back(j["load_max_over_mean"].get<double>());
            std::this_thread::sleep_for(1s);
        }
        double total = static_cast<double>(kBytes) * 8 * static_cast<double>(senders.size());
        std::string sock = lab::PlanLab::stateDir(kLab) + "/p1-leaf1/redis.sock";
        json out{
            {"mode", name},
            {"samples", samples},
            {"p1_leaf1_rules",
             lab::inNodeRun(kLab, "p1-leaf1", {"ip", "rule", "show", "pref", "1000"}).out},
            {"p1_leaf1_pins", pins(sock)},
            {"p1_leaf1_route_to_first_receiver",
             lab::inNodeRun(kLab, "p1-leaf1", {"ip", "route", "show", address.at(receivers[1])})
                 .out},
            {"median_job_s", median(jobs)},
            {"median_goodput_mbps", total / median(jobs) / 1e6},
            {"median_load_max_over_mean", median(loads)}};
        std::cout << name << ": " << out["median_job_s"] << " s, load max/mean "
                  << out["median_load_max_over_mean"] << "\n";
        return out;
    }
};

struct Mode {
    const char* name;
    bool pins, pathqd;
};
constexpr Mode kModes[] = {{"ecmp", false, false},
                           {"static", true, false},
                           {"pathqd", false, true},
                           {"static+pathqd", true, true}};

void plot(const json& out, const std::string& base) {
    std::ofstream dat(base + ".dat");
    dat << "# mode permutation_job_ratio_to_ideal degraded_goodput_ratio_to_maxflow\n";
    for (size_t i = 0; i < out["permutation"].size(); ++i) {
        dat << "\"" << out["permutation"][i]["mode"].get<std::string>() << "\" "
            << out["permutation"][i]["ratio_to_ideal"].get<double>() << " "
            << out["degraded"][i]["ratio_to_max_flow"].get<double>() << "\n";
    }
    dat.close();  // gnuplot reads it below
    std::ofstream gp(base + ".gp");
    gp << "set terminal pngcairo size 900,420\nset output '" << base << ".png'\n"
       << "set style data histograms\nset style histogram clustered gap 1\n"
       << "set style fill solid 0.8 border -1\nset yrange [0:1.35]\nset grid y\n"
       << "set key top center horizontal\nset title 'Load balancing, 4x4 leaf, 100 Mbit/s links "
          "(median "
          "of the jobs)'\n"
       << "plot '" << base << ".dat' using 2:xtic(1) title 'permutation: ideal / job time', "
       << "'' using 3 title 'one spine path at 1/4: goodput / max-flow'\n";
    gp.close();
    lab::run({"gnuplot", base + ".gp"});
}

}  // namespace

static int benchMain(int argc, char** argv) {
    if (argc < 5) {
        std::cerr << "usage: lb_bench TWINRAIL_LAB HOSTROUTED PATHQD OUT.json [REPS]\n";
        return 64;
    }
    int reps = argc > 5 ? std::stoi(argv[5]) : 6;
    plan::Request r = lab::defaultLabRequest();
    r.gpus = 8;
    r.leafModel = {"lab-8x200G", 8, 200, {1}};
    r.spinesPerPlane = 4;
    r.lb = plan::Request::Lb::Static;
    Bench b;
    b.p = std::get<plan::Plan>(plan::buildPlan(r));
    b.bins = {argv[2], argv[3], argv[1], "twinrail"};
    lab::PlanLab l(kLab, b.p, b.bins);
    l.up();
    b.setUp();
    json out{{"reps", reps},
             {"link_mbps", kMbit},
             {"bytes_per_nic", kBytes},
             {"permutation", json::array()},
             {"degraded", json::array()}};
    double ideal = kBytes * 8.0 / (kMbit * 1e6);
    for (const auto& m : kModes) {
        b.mode(m.pins, m.pathqd);
        json res = b.runMode(m.name, reps, 1);
        res["ratio_to_ideal"] = ideal / res["median_job_s"].get<double>();
        out["permutation"].push_back(res);
    }
    double maxFlow = (3 * kMbit + kDegradedMbit) * 1e6;
    for (const auto& m : kModes) {
        b.shape("p1-spine1", b.degradedPort, kMbit);
        b.mode(m.pins, m.pathqd);  // the modes start healthy: ECMP's levels stay equal
        b.shape("p1-spine1", b.degradedPort, kDegradedMbit);
        std::this_thread::sleep_for(m.pathqd ? 8s : 2s);  // pathqd sees it and publishes
        json res = b.runMode(m.name, reps, 4);
        res["ratio_to_max_flow"] = res["median_goodput_mbps"].get<double>() * 1e6 / maxFlow;
        out["degraded"].push_back(res);
    }
    for (const char* pattern : {"permutation", "degraded"}) {
        double ecmp = out[pattern][0]["median_job_s"].get<double>();
        for (auto& m : out[pattern])
            m["job_ratio_to_ecmp"] = m["median_job_s"].get<double>() / ecmp;
    }
    out["ideal_job_s"] = ideal;
    out["max_flow_mbps"] = maxFlow / 1e6;
    lab::PlanLab::down(kLab);
    std::string path = argv[4];
    std::ofstream(path) << out.dump(2) << "\n";
    plot(out, path.substr(0, path.rfind('.')));
    return 0;
}

int main(int argc, char** argv) {
    return twinrail::bench::labMain("lb_bench", kLab,
                                    [argc, argv] { return benchMain(argc, argv); });
}
