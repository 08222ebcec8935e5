#include "twinrail/sim/verdict.h"

#include <cstdio>

#include "twinrail/sim/failure.h"
#include "twinrail/sim/simulate.h"

namespace twinrail::sim {
namespace {

std::string times(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2fx", v);
    return buf;
}

double medianCompletion(const Fabric& f, const std::vector<Transfer>& t, Mode mode, int seeds) {
    RoutingOptions o;
    o.mode = mode;
    return simulateSeeds(f, t, o, ByteSplit::EvenPerQp, seeds).completionOverIdeal.median;
}

}  // namespace

std::string verdict(const plan::Plan& plan, int seeds) {
    auto built = buildFabric(plan);
    if (auto* e = std::get_if<std::string>(&built)) return "no simulation: " + *e + "\n";
    const Fabric& f = std::get<Fabric>(built);
    auto traffic = makeTraffic(f, Pattern::Permutation, 1e6);
    if (auto* e = std::get_if<std::string>(&traffic)) return "no simulation: " + *e + "\n";
    const auto& t = std::get<std::vector<Transfer>>(traffic);
    std::string out = "simulated (twinrail-sim, permutation, 2 QPs per NIC pair, median of " +
                      std::to_string(seeds) + " hash seeds; 1.00x = every NIC at line rate):\n";
    out += "  under ECMP a permutation takes " + times(medianCompletion(f, t, Mode::Ecmp, seeds)) +
           " the ideal time; static smart routing " +
           times(medianCompletion(f, t, Mode::Static, seeds)) + "; WCMP " +
           times(medianCompletion(f, t, Mode::Wcmp, seeds)) + "; ARS " +
           times(medianCompletion(f, t, Mode::Ars, seeds)) + "; spraying " +
           times(medianCompletion(f, t, Mode::Spray, seeds)) + "\n";
    Mode configured = plan.request.lb == plan::Request::Lb::Static ? Mode::Static : Mode::Ecmp;
    Fabric failed = f;
    if (std::holds_alternative<std::monostate>(
            applyFailure(failed, {Failure::Kind::Leaf, f.switches.front().name, 0}))) {
        double before = medianCompletion(f, t, configured, seeds);
        double after = medianCompletion(failed, t, configured, seeds);
        out += "  a leaf failure (" + f.switches.front().name + ") under " + modeName(configured) +
               " makes it " + times(after / before) + " as long (" + times(after) + " the ideal)\n";
    }
    return out;
}

}  // namespace twinrail::sim
