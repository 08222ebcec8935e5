// How long a leaf's hosts stay out of their plane when the leaf's FRR restarts, on the
// dual-plane lab: kill -9 of zebra and bgpd (then started again, as watchfrr or systemd
// would), and a clean restart. The baseline, in the same trial, is BGP's own route of
// that leaf (its rail subnet), which can only come back with the sessions; the hosts'
// /32s should follow it at once. Writes bench/results/frr_restart.json.
//
// usage: frr_restart_bench TWINRAIL_LAB HOSTROUTED PATHQD OUT.json [TRIALS]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "twinrail/lab/lab_status.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/shell.h"

namespace lab = twinrail::lab;
namespace plan = twinrail::plan;
using json = nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kLab = "frrb";

bool routed(const std::string& node, const std::string& prefix, const char* must) {
    return lab::inNodeRun(kLab, node, {"ip", "route", "show", prefix}).out.find(must) !=
           std::string::npos;
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return -1;
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(std::lround(p * static_cast<double>(v.size() - 1)))];
}

}  // namespace

static int benchMain(int argc, char** argv) {
    if (argc < 5) {
        std::cerr << "usage: frr_restart_bench TWINRAIL_LAB HOSTROUTED PATHQD OUT.json [TRIALS]\n";
        return 64;
    }
    int trials = argc > 5 ? std::stoi(argv[5]) : 5;
    lab::LabBinaries bins{argv[2], argv[3], argv[1], "twinrail"};
    lab::PlanLab lab(
        kLab, std::get<plan::Plan>(plan::buildPlan(lab::defaultLabRequest(plan::Attach::Routed))),
        bins);
    lab.up();
    json out{{"trials", trials}, {"modes", json::object()}};
    for (auto [name, how] :
         {std::pair{"kill9", lab::FrrRestart::Kill}, std::pair{"clean", lab::FrrRestart::Clean}}) {
        std::vector<double> subnet, hosts, lag;
        for (int t = 0; t < trials; ++t) {
            auto t0 = Clock::now();
            lab::restartFrr(kLab, "p1-leaf1", how);
            double s = -1, h = -1;
            lab::waitUntil(
                [&] {
                    double at = std::chrono::duration<double>(Clock::now() - t0).count();
                    if (s < 0 && routed("p1-leaf2", "10.128.0.0/24", "proto bgp")) s = at;
                    if (h < 0 && routed("p1-leaf2", "10.128.0.2/32", "10.128.0.2 ") &&
                        routed("p1-leaf2", "10.128.0.3/32", "10.128.0.3 "))
                        h = at;
                    return s >= 0 && h >= 0;
                },
                120s, 50ms);
            std::cout << name << " trial " << t << ": subnet " << s << " s, hosts " << h << " s"
                      << std::endl;
            subnet.push_back(s);
            hosts.push_back(h);
            lag.push_back(h < 0 || s < 0 ? -1 : h - s);
            lab::waitUntil([] { return lab::labStatus(kLab).value("healthy", false); }, 90s, 1s);
        }
        out["modes"][name] = {{"subnet_back_s", subnet},
                              {"hosts_back_s", hosts},
                              {"hosts_after_subnet_s", lag},
                              {"hosts_back_p50_s", percentile(hosts, 0.5)},
                              {"hosts_back_max_s", percentile(hosts, 1.0)},
                              {"hosts_after_subnet_p50_s", percentile(lag, 0.5)},
                              {"hosts_after_subnet_max_s", percentile(lag, 1.0)},
                              {"never_back", std::count(hosts.begin(), hosts.end(), -1.0)}};
    }
    lab::PlanLab::down(kLab);
    std::ofstream(argv[4]) << out.dump(2) << "\n";
    std::cout << out.dump(2) << "\n";
    return 0;
}

int main(int argc, char** argv) {
    try {
        return benchMain(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "frr_restart_bench: " << e.what() << "\n";
    } catch (...) {
        std::cerr << "frr_restart_bench: unknown exception\n";
    }
    return 70;
}
