// Failover in the dual-plane lab: how long flows go silent when a plane's leaf or a NIC's
// plane port fails, and when it comes back, against the same flows with nothing failing
// (this machine's own scheduling noise), all in one run.
//
// usage: lab_failover_bench <twinrail-lab> <hostrouted> <pathqd> <out.json> [trials]
// Each event: 3 flow pairs (remote -> attached NIC, attached -> remote, attached -> attached
// through the other plane) of 16 UDP flows, a packet every 2 ms per flow. The figure per
// event is the longest silence of any flow of any pair.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>

#include "twinrail/lab/lab_status.h"
#include "twinrail/lab/measure.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/shell.h"

namespace lab = twinrail::lab;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

struct Series {
    std::vector<double> gaps;
    int notRecovered = 0;
    int runs = 0;
};

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    auto at = static_cast<size_t>(std::lround(q * static_cast<double>(v.size() - 1)));
    return v[std::min(v.size() - 1, at)];
}

json summary(const Series& s) {
    return {{"runs", s.runs},
            {"p50_ms", quantile(s.gaps, 0.5)},
            {"p95_ms", quantile(s.gaps, 0.95)},
            {"max_ms", s.gaps.empty() ? 0 : *std::max_element(s.gaps.begin(), s.gaps.end())},
            {"flows_not_recovered", s.notRecovered},
            {"gaps_ms", s.gaps}};
}

void record(Series& s, const json& reports) {
    double worst = 0;
    for (const auto& r : reports) {
        if (r.contains("error")) throw std::runtime_error(r.dump());
        worst = std::max(worst, r["max_gap_ms"].get<double>());
        s.notRecovered += r["flows_not_recovered"].get<int>();
    }
    s.gaps.push_back(worst);
    ++s.runs;
}

}  // namespace

static int benchMain(int argc, char** argv) {
    if (argc < 5) {
        std::cerr << "usage: lab_failover_bench <twinrail-lab> <hostrouted> <pathqd> <out.json> "
                     "[trials]\n";
        return 64;
    }
    lab::LabBinaries bins{argv[2], argv[3], argv[1]};
    const std::string out = argv[4];
    const int trials = argc > 5 ? std::stoi(argv[5]) : 5;
    const std::string name = "b" + std::to_string(getpid() % 100000);
    auto built = twinrail::plan::buildPlan(lab::defaultLabRequest(twinrail::plan::Attach::Routed));
    lab::PlanLab l(name, std::get<twinrail::plan::Plan>(built), bins);
    const std::vector<lab::FlowPair> pairs{
        {"srv1-nic2", "srv1-nic1"}, {"srv1-nic1", "srv1-nic2"}, {"srv2-nic1", "srv1-nic1"}};
    std::map<std::string, Series> series;
    try {
        l.up();
        for (int t = 0; t < trials; ++t) {
            for (const std::string target : {"p1-leaf1", "srv1-nic1:port1"}) {
                std::string kind = target == "p1-leaf1" ? "leaf" : "nic_port";
                record(series["baseline"], lab::measureDuring(
                                               name, bins, pairs, [] {}, 5));
                record(
                    series[kind + "_fail"],
                    lab::measureDuring(
                        name, bins, pairs, [&name, &target] { lab::failNode(name, target); }, 5));
                record(series[kind + "_restore"],
                       lab::measureDuring(
                           name, bins, pairs,
                           [&name, &bins, &target] { lab::restoreNode(name, bins, target); }, 5));
                if (!lab::waitUntil([&name] { return lab::labStatus(name)["healthy"].get<bool>(); },
                                    60s, 1s))
                    throw std::runtime_error("the lab did not heal after " + target);
                std::cerr << "trial " << t + 1 << " " << kind << ": fail "
                          << series[kind + "_fail"].gaps.back() << " ms, restore "
                          << series[kind + "_restore"].gaps.back() << " ms, baseline "
                          << series["baseline"].gaps.back() << " ms\n";
            }
        }
    } catch (const std::exception& e) {
        std::cerr << "lab_failover_bench: " << e.what() << "\n";
        lab::PlanLab::down(name);
        return 70;
    }
    lab::PlanLab::down(name);
    json result{{"bench", "lab_failover"},
                {"trials", trials},
                {"flows_per_pair", 16},
                {"interval_ms", 2},
                {"pairs", json::array()}};
    for (const auto& p : pairs) result["pairs"].push_back(p.from + " -> " + p.to);
    for (const auto& [k, s] : series) result[k] = summary(s);
    double base = std::max(1.0, result["baseline"]["p50_ms"].get<double>());
    for (const char* k : {"leaf_fail", "leaf_restore", "nic_port_fail", "nic_port_restore"})
        result["ratio_p50_to_baseline"][k] = result[k]["p50_ms"].get<double>() / base;
    std::ofstream(out) << result.dump(2) << "\n";
    std::cout << result.dump(2) << "\n";
    return 0;
}

int main(int argc, char** argv) {
    try {
        return benchMain(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "lab_failover_bench: " << e.what() << "\n";
    } catch (...) {
        std::cerr << "lab_failover_bench: unknown exception\n";
    }
    return 70;
}
