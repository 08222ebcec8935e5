// twinrail-sim: a plan's fabric under one traffic pattern and one load-balancing mode, as
// max-min fair flow rates over seeds (docs/simulation.md). See `twinrail-sim --help`.
#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "twinrail/common/sysexits.h"
#include "twinrail/common/tool_main.h"
#include "twinrail/plan/plan.h"
#include "twinrail/sim/failure.h"
#include "twinrail/sim/simulate.h"

namespace sim = twinrail::sim;
namespace plan = twinrail::plan;
using twinrail::UsageError;

namespace {

constexpr const char* kUsage =
    R"(usage: twinrail-sim --plan PLAN.json --pattern P --mode M [options]

A flow-level model of the plan's fabric: every QP's path as the switches hash it, max-min
fair rates on the plan's links, and the job's completion against every NIC at line rate.

  --plan FILE          plan.json as twinrail-plan writes it
  --pattern P          permutation | allreduce | alltoall | mix
  --mode M             ecmp | wcmp | static | ars | spray
  --planes 1|2         the same NICs in 1 or 2 planes          [the plan's]
  --fail KIND:WHAT[:F] link:SW/PORT, degrade:SW/PORT:F, spine:NAME, leaf:NAME,
                       nicport:SRV/NIC/PORT (PORT may be uplinkN); repeatable
  --seeds N            hash seeds 1..N                               [20]
  --qps N              QPs per NIC pair, spread over the planes       [2]
  --hash linux|asic    linux: hash-threshold, a seed per switch;
                       asic: modulo, one seed on every switch       [linux]
  --split even|pooled  a transfer's bytes: even per QP (NCCL) or pooled (iperf3 -P) [even]
  --rounds N           share the links again as the first QPs end, up to N
                       allocations (1: the first allocation's rates to the end) [1]
  --json               one JSON object instead of the table
)";

struct Options {
    std::string planFile;
    sim::Pattern pattern = sim::Pattern::Permutation;
    sim::RoutingOptions routing;
    std::optional<int> planes;
    std::vector<sim::Failure> failures;
    int seeds = 20;
    int rounds = sim::kDefaultRounds;
    sim::ByteSplit split = sim::ByteSplit::EvenPerQp;
    bool json = false;
};

int intArg(const std::string& flag, const std::string& v, int lo, int hi) {
    size_t used = 0;
    int n = 0;
    try {
        n = std::stoi(v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != v.size() || n < lo || n > hi) {
        throw UsageError{flag + " " + v + ": expected a whole number " + std::to_string(lo) + ".." +
                         std::to_string(hi)};
    }
    return n;
}

Options parse(int argc, char** argv) {
    Options o;
    bool havePattern = false, haveMode = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw UsageError{a + " needs a value"};
            return argv[++i];
        };
        if (a == "--plan") {
            o.planFile = value();
        } else if (a == "--pattern") {
            std::string v = value();
            auto p = sim::parsePattern(v);
            if (!p) {
                throw UsageError{"--pattern " + v +
                                 ": not permutation, allreduce, alltoall or mix"};
            }
            o.pattern = *p;
            havePattern = true;
        } else if (a == "--mode") {
            std::string v = value();
            auto m = sim::parseMode(v);
            if (!m) throw UsageError{"--mode " + v + ": not ecmp, wcmp, static, ars or spray"};
            o.routing.mode = *m;
            haveMode = true;
        } else if (a == "--planes") {
            o.planes = intArg(a, value(), 1, 2);
        } else if (a == "--fail") {
            auto f = sim::parseFailure(value());
            if (auto* e = std::get_if<std::string>(&f)) throw UsageError{*e};
            o.failures.push_back(std::get<sim::Failure>(f));
        } else if (a == "--seeds") {
            o.seeds = intArg(a, value(), 1, 10000);
        } else if (a == "--qps") {
            o.routing.qps = intArg(a, value(), 1, 256);
        } else if (a == "--hash") {
            std::string v = value();
            if (v != "linux" && v != "asic")
                throw UsageError{"--hash " + v + ": not linux or asic"};
            o.routing.layout = v == "linux" ? sim::HashLayout::Threshold : sim::HashLayout::Modulo;
        } else if (a == "--split") {
            std::string v = value();
            if (v != "even" && v != "pooled")
                throw UsageError{"--split " + v + ": not even or pooled"};
            o.split = v == "even" ? sim::ByteSplit::EvenPerQp : sim::ByteSplit::Pooled;
        } else if (a == "--rounds") {
            o.rounds = intArg(a, value(), 1, 1000);
        } else if (a == "--json") {
            o.json = true;
        } else {
            throw UsageError{"unknown argument " + a};
        }
    }
    if (o.planFile.empty()) throw UsageError{"--plan is required"};
    if (!havePattern) throw UsageError{"--pattern is required"};
    if (!haveMode) throw UsageError{"--mode is required"};
    return o;
}

plan::Plan readPlan(const std::string& file) {
    std::ifstream in(file);
    if (!in) throw twinrail::ConfigFileError(file + ": cannot be read");
    auto j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded()) throw twinrail::ConfigFileError(file + ": not a JSON plan file");
    auto p = plan::planFromJson(j);
    if (auto* e = std::get_if<plan::SizingError>(&p))
        throw twinrail::ConfigFileError(file + ": " + e->message);
    return std::get<plan::Plan>(std::move(p));
}

nlohmann::json statJson(const sim::Stat& s) {
    return {{"median", s.median}, {"p95", s.p95}};
}

int run(const Options& o) {
    auto start = std::chrono::steady_clock::now();
    plan::Plan given = readPlan(o.planFile);
    auto shaped = sim::withPlanes(given, o.planes.value_or(given.request.planes));
    if (auto* e = std::get_if<std::string>(&shaped)) throw twinrail::ConfigFileError(*e);
    auto built = sim::buildFabric(std::get<plan::Plan>(shaped));
    if (auto* e = std::get_if<std::string>(&built))
        throw twinrail::ConfigFileError(o.planFile + ": " + *e);
    sim::Fabric fabric = std::get<sim::Fabric>(std::move(built));
    for (const auto& f : o.failures) {
        auto applied = sim::applyFailure(fabric, f);
        if (auto* e = std::get_if<std::string>(&applied)) throw std::invalid_argument(*e);
    }
    constexpr double kBytesPerNic = 64.0 * 1024 * 1024;  // ratios do not depend on it
    auto traffic = sim::makeTraffic(fabric, o.pattern, kBytesPerNic);
    if (auto* e = std::get_if<std::string>(&traffic)) throw std::invalid_argument(*e);
    const auto& transfers = std::get<std::vector<sim::Transfer>>(traffic);
    sim::Summary s = sim::simulateSeeds(fabric, transfers, o.routing, o.split, o.seeds, o.rounds);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    double rssMb = static_cast<double>(usage.ru_maxrss) / 1024.0;
    if (o.json) {
        nlohmann::json out{{"pattern", sim::patternName(o.pattern)},
                           {"mode", sim::modeName(o.routing.mode)},
                           {"planes", fabric.planes},
                           {"gpus", fabric.nics.size()},
                           {"seeds", s.seeds},
                           {"rounds", o.rounds},
                           {"qps", o.routing.qps},
                           {"split", o.split == sim::ByteSplit::Pooled ? "pooled" : "even"},
                           {"transfers", transfers.size()},
                           {"completion_over_ideal", statJson(s.completionOverIdeal)},
                           {"oversubscribed_uplink_share", statJson(s.oversubscribedUplinkShare)},
                           {"worst_uplink_flows", statJson(s.worstUplinkFlows)},
                           {"max_over_mean_link_load", statJson(s.maxOverMeanLinkLoad)},
                           {"unreachable_transfers", s.unreachableTransfers},
                           {"seconds", seconds},
                           {"max_rss_mb", rssMb}};
        std::cout << out.dump(2) << "\n";
        return twinrail::exitcode::kOk;
    }
    std::cout << fabric.nics.size() << " NICs, " << fabric.planes << " plane(s), "
              << sim::patternName(o.pattern) << ", " << sim::modeName(o.routing.mode) << ", "
              << s.seeds << " seeds (" << transfers.size() << " transfers)\n";
    auto row = [](const char* name, const sim::Stat& st) {
        std::cout << "  " << std::left << std::setw(30) << name << std::right << std::fixed
                  << std::setprecision(3) << std::setw(9) << st.median << std::setw(9) << st.p95
                  << "\n";
    };
    std::cout << "  " << std::left << std::setw(30) << "" << std::right << std::setw(9) << "median"
              << std::setw(9) << "p95"
              << "\n";
    row("completion / ideal", s.completionOverIdeal);
    row("over-subscribed uplinks", s.oversubscribedUplinkShare);
    row("worst uplink, flows", s.worstUplinkFlows);
    row("max / mean uplink load", s.maxOverMeanLinkLoad);
    if (s.unreachableTransfers > 0)
        std::cout << "  " << s.unreachableTransfers << " transfers have no path (left out)\n";
    std::cout << std::setprecision(2) << "  " << seconds << " s, " << rssMb << " MB\n";
    return twinrail::exitcode::kOk;
}

}  // namespace

int main(int argc, char** argv) {
    return twinrail::toolMain(argc, argv, "twinrail-sim", kUsage,
                              [&] { return run(parse(argc, argv)); });
}
