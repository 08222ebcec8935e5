// The model of the lab's load-balancing run (bench/lb_bench.cpp) against its results
// (bench/results/lb.json). The plan: 4 servers x 2 GPUs, leaves of 4 downlinks and 4
// uplinks, 4 spines per plane, every link at one speed; the NICs send on plane 1 only.
//   permutation: each NIC behind p1-leaf1 sends one flow to a NIC behind p1-leaf2; job time
//       against the ideal (lab, median of 6 runs: ECMP 2.09x, static 1.03x, pathqd 2.04x).
//   degraded: p1-spine1 -> p1-leaf2 at a quarter, 4 flows per NIC, iperf3 -P 4 -n (bytes
//       pooled over a NIC's flows); goodput against max-flow (3 + 1/4 links):
//       lab ECMP 0.84, static 0.33, pathqd 0.96.
// Within 15%: the model's median over seeds against the lab's median over hash draws.
#include <gtest/gtest.h>

#include <iostream>

#include "twinrail/sim/failure.h"
#include "twinrail/sim/simulate.h"

namespace sim = twinrail::sim;
namespace plan = twinrail::plan;

namespace {

constexpr double kBytes = 25e6;
constexpr int kSeeds = 101;
// TCP hands a finished flow's share to the others: the links are shared again as NICs end.
constexpr int kRounds = 8;

struct LabModel {
    plan::Plan p;
    sim::Fabric fabric;
    std::vector<sim::Transfer> transfers;
    double portGbps = 0;
};

LabModel labModel() {
    plan::Request r;
    r.gpus = 8;
    r.gpusPerServer = 2;
    r.leafModel = {"lab-8x200G", 8, 200, {1}};
    r.spinesPerPlane = 4;
    r.lb = plan::Request::Lb::Static;
    LabModel m;
    m.p = std::get<plan::Plan>(plan::buildPlan(r));
    m.fabric = std::get<sim::Fabric>(sim::buildFabric(m.p));
    std::vector<int> senders, receivers;
    for (size_t n = 0; n < m.fabric.nics.size(); ++n) {
        const auto& nic = m.fabric.nics[n];
        for (int port : nic.ports) {
            const auto& np = m.fabric.nicPorts[static_cast<size_t>(port)];
            if (np.plane != 1) {
                sim::Failure off{sim::Failure::Kind::NicPort, nic.name + "/port2", 0};
                EXPECT_TRUE(
                    std::holds_alternative<std::monostate>(sim::applyFailure(m.fabric, off)));
                continue;
            }
            m.portGbps = np.gbps;
            const std::string& leaf = m.fabric.switches[static_cast<size_t>(np.leaf)].name;
            if (leaf == "p1-leaf1") senders.push_back(static_cast<int>(n));
            if (leaf == "p1-leaf2") receivers.push_back(static_cast<int>(n));
        }
    }
    EXPECT_EQ(senders.size(), 4u);
    EXPECT_EQ(receivers.size(), 4u);
    for (size_t i = 0; i < senders.size(); ++i)
        m.transfers.push_back({senders[i], receivers[(i + 1) % receivers.size()], kBytes});
    return m;
}

std::string spinePortToward(const plan::Plan& p, const std::string& spine,
                            const std::string& leaf) {
    for (const auto& port : p.findSwitch(spine)->ports)
        if (port.peer == leaf) return spine + "/" + port.name;
    return "";
}

// Median job time over seeds, in the model's seconds.
double medianJob(const LabModel& m, sim::Mode mode, int qps) {
    std::vector<double> jobs;
    for (int seed = 1; seed <= kSeeds; ++seed) {
        sim::RoutingOptions o;
        o.mode = mode;
        o.qps = qps;
        o.seed = static_cast<uint64_t>(seed);
        jobs.push_back(sim::simulateSeed(m.fabric, m.transfers, o, sim::ByteSplit::Pooled, kRounds)
                           .jobSeconds);
    }
    return sim::statOf(jobs).median;
}

void expectWithin15(double model, double lab, const char* what) {
    EXPECT_NEAR(model / lab, 1.0, 0.15) << what << ": model " << model << ", lab " << lab;
}

}  // namespace

struct LabFigure {
    sim::Mode mode;
    double lab;
};

TEST(SimLab, PermutationJobAgainstIdealMatchesTheLab) {
    LabModel m = labModel();
    double ideal = kBytes * 8 / (m.portGbps * 1e9);
    // lb.json "permutation": 1 / ratio_to_ideal
    for (auto [mode, lab] : {LabFigure{sim::Mode::Ecmp, 1 / 0.47934548250436926},
                             LabFigure{sim::Mode::Static, 1 / 0.9752938560388246},
                             LabFigure{sim::Mode::Wcmp, 1 / 0.48967507855000353}}) {
        double model = medianJob(m, mode, 1) / ideal;
        std::cout << "permutation " << sim::modeName(mode) << ": model " << model << "x ideal, lab "
                  << lab << "x\n";
        expectWithin15(model, lab, sim::modeName(mode));
    }
}

TEST(SimLab, DegradedSpinePathGoodputAgainstMaxFlowMatchesTheLab) {
    LabModel m = labModel();
    std::string port = spinePortToward(m.p, "p1-spine1", "p1-leaf2");
    ASSERT_FALSE(port.empty());
    sim::Failure quarter{sim::Failure::Kind::Degrade, port, 0.25};
    ASSERT_TRUE(std::holds_alternative<std::monostate>(sim::applyFailure(m.fabric, quarter)));
    double maxFlow = 3.25 * m.portGbps;  // three spine paths whole, one at a quarter
    double bits = kBytes * 8 * static_cast<double>(m.transfers.size());
    // lb.json "degraded": ratio_to_max_flow
    for (auto [mode, lab] : {LabFigure{sim::Mode::Ecmp, 0.8386480249537623},
                             LabFigure{sim::Mode::Static, 0.33345621889700144},
                             LabFigure{sim::Mode::Wcmp, 0.9627449012428315}}) {
        double model = bits / medianJob(m, mode, 4) / 1e9 / maxFlow;
        std::cout << "degraded " << sim::modeName(mode) << ": model " << model
                  << " of max-flow, lab " << lab << "\n";
        expectWithin15(model, lab, sim::modeName(mode));
    }
}
