// The model's parts on small fabrics: max-min rates, failures and how routing reacts,
// the patterns, and the errors bad input gets.
#include <gtest/gtest.h>

#include "twinrail/sim/failure.h"
#include "twinrail/sim/fairness.h"
#include "twinrail/sim/simulate.h"
#include "twinrail/sim/verdict.h"

namespace sim = twinrail::sim;
namespace plan = twinrail::plan;

namespace {

plan::Plan smallPlan(int planes = 2) {
    plan::Request r;
    r.gpus = 32;
    r.gpusPerServer = 2;
    r.planes = planes;
    r.nicPorts = planes;
    r.leafModel = {"test-16x400G", 16, 400, {1, 2}};
    r.spinesPerPlane = 4;
    return std::get<plan::Plan>(plan::buildPlan(r));
}

sim::Fabric fabricOf(const plan::Plan& p) {
    return std::get<sim::Fabric>(sim::buildFabric(p));
}

sim::Summary run(const sim::Fabric& f, sim::Pattern pattern, sim::Mode mode, int seeds = 5) {
    auto t = std::get<std::vector<sim::Transfer>>(sim::makeTraffic(f, pattern, 1e6));
    sim::RoutingOptions o;
    o.mode = mode;
    return sim::simulateSeeds(f, t, o, sim::ByteSplit::EvenPerQp, seeds);
}

}  // namespace

TEST(SimFairness, MaxMinSharesABottleneckAndGivesTheRestToTheOthers) {
    // Two flows on link 0 (cap 10), one of them also on link 1 (cap 2): 2 and 8.
    std::vector<sim::Link> links{{-1, -1, 10, 10, true, false}, {-1, -1, 2, 2, true, false}};
    sim::RoutedTraffic t;
    t.flows.push_back({0, {0, 1, -1, -1}, -1, 0});
    t.flows.push_back({1, {0, -1, -1, -1}, -1, 0});
    auto rates = sim::maxMinRates(links, t);
    EXPECT_NEAR(rates[0], 2, 1e-9);
    EXPECT_NEAR(rates[1], 8, 1e-9);
}

TEST(SimFairness, ASprayedFlowCountsByItsShareOnEachLink) {
    std::vector<sim::Link> links{{-1, -1, 10, 10, true, false}, {-1, -1, 1, 1, true, false}};
    sim::RoutedTraffic t;
    t.bundles.push_back({{0, 0.5}, {1, 0.5}});  // half over each: link 1 limits it to 2
    t.flows.push_back({0, {-1, -1, -1, -1}, 0, 0});
    auto rates = sim::maxMinRates(links, t);
    EXPECT_NEAR(rates[0], 2, 1e-9);
}

TEST(SimModel, EveryModeAndPatternRunsOnBothPlaneCounts) {
    for (int planes : {1, 2}) {
        auto f = fabricOf(smallPlan(planes));
        for (auto pattern : {sim::Pattern::Permutation, sim::Pattern::AllReduce,
                             sim::Pattern::AllToAll, sim::Pattern::Mix}) {
            for (auto mode : {sim::Mode::Ecmp, sim::Mode::Wcmp, sim::Mode::Static, sim::Mode::Ars,
                              sim::Mode::Spray}) {
                auto s = run(f, pattern, mode, 2);
                EXPECT_GE(s.completionOverIdeal.median, 1 - 1e-9)
                    << planes << " " << sim::patternName(pattern) << " " << sim::modeName(mode);
                EXPECT_EQ(s.unreachableTransfers, 0);
            }
        }
    }
}

TEST(SimModel, SprayingAPermutationRunsAtLineRate) {
    auto f = fabricOf(smallPlan());
    EXPECT_NEAR(run(f, sim::Pattern::Permutation, sim::Mode::Spray).completionOverIdeal.p95, 1,
                1e-9);
}

TEST(SimModel, SeedsReproduceTheSameNumbers) {
    auto f = fabricOf(smallPlan());
    auto a = run(f, sim::Pattern::AllToAll, sim::Mode::Ecmp);
    auto b = run(f, sim::Pattern::AllToAll, sim::Mode::Ecmp);
    EXPECT_EQ(a.completionOverIdeal.median, b.completionOverIdeal.median);
    EXPECT_EQ(a.worstUplinkFlows.p95, b.worstUplinkFlows.p95);
}

TEST(SimModel, ASpineDownLeavesItOutOfEveryPath) {
    auto f = fabricOf(smallPlan());
    ASSERT_TRUE(std::holds_alternative<std::monostate>(
        sim::applyFailure(f, std::get<sim::Failure>(sim::parseFailure("spine:p1-spine1")))));
    auto t =
        std::get<std::vector<sim::Transfer>>(sim::makeTraffic(f, sim::Pattern::Permutation, 1e6));
    auto routed = sim::route(f, t, {});
    int spine = f.switchIds.at("p1-spine1");
    for (const auto& flow : routed.flows) {
        for (int l : flow.links) {
            if (l >= 0) {
                EXPECT_NE(f.links[static_cast<size_t>(l)].to, spine);
            }
        }
    }
    EXPECT_EQ(routed.unreachableTransfers, 0);
}

TEST(SimModel, ANicPortDownMovesItsQpsToTheOtherPlane) {
    auto f = fabricOf(smallPlan());
    const std::string port = f.nics[0].name + "/port1";
    ASSERT_TRUE(std::holds_alternative<std::monostate>(
        sim::applyFailure(f, std::get<sim::Failure>(sim::parseFailure("nicport:" + port)))));
    auto t =
        std::get<std::vector<sim::Transfer>>(sim::makeTraffic(f, sim::Pattern::Permutation, 1e6));
    auto routed = sim::route(f, t, {});
    EXPECT_EQ(routed.unreachableTransfers, 0);
    int down = f.nicPortIds.at(port);
    for (const auto& flow : routed.flows)
        EXPECT_NE(flow.links[0], f.nicPorts[static_cast<size_t>(down)].toLeaf);
    // Its NIC now sends at half its line rate: the job takes twice the ideal.
    EXPECT_NEAR(run(f, sim::Pattern::Permutation, sim::Mode::Spray).completionOverIdeal.median, 2,
                1e-6);
}

TEST(SimModel, ALeafDownInOnePlaneLeavesTheOther) {
    auto f = fabricOf(smallPlan());
    ASSERT_TRUE(std::holds_alternative<std::monostate>(
        sim::applyFailure(f, std::get<sim::Failure>(sim::parseFailure("leaf:p1-leaf1")))));
    auto s = run(f, sim::Pattern::Permutation, sim::Mode::Spray);
    EXPECT_EQ(s.unreachableTransfers, 0);
    EXPECT_NEAR(s.completionOverIdeal.median, 2, 1e-6);
}

TEST(SimModel, WcmpWeighsADegradedUplinkDown) {
    auto f = fabricOf(smallPlan());
    ASSERT_TRUE(std::holds_alternative<std::monostate>(sim::applyFailure(
        f, std::get<sim::Failure>(sim::parseFailure("degrade:p1-leaf1/uplink1:0.25")))));
    int degraded = f.switches[static_cast<size_t>(f.switchIds.at("p1-leaf1"))].uplinks[0];
    auto t = std::get<std::vector<sim::Transfer>>(sim::makeTraffic(f, sim::Pattern::AllToAll, 1e6));
    auto flowsOnIt = [&](sim::Mode mode) {
        int n = 0;
        for (uint64_t seed = 1; seed <= 20; ++seed) {
            sim::RoutingOptions o;
            o.mode = mode;
            o.seed = seed;
            for (const auto& flow : sim::route(f, t, o).flows) n += flow.links[1] == degraded;
        }
        return n;
    };
    int ecmp = flowsOnIt(sim::Mode::Ecmp), wcmp = flowsOnIt(sim::Mode::Wcmp);
    EXPECT_GT(ecmp, 0);
    // level 8 of 32 against the others' 32: about a quarter of ECMP's share
    EXPECT_LT(wcmp * 2, ecmp);
}

TEST(SimModel, BadFailureSpecsAreNamed) {
    for (const char* spec : {"", "cable:x", "link", "link:p1-leaf1", "degrade:p1-leaf1/swp1",
                             "degrade:p1-leaf1/swp1:2", "degrade:p1-leaf1/swp1:x", "leaf:a:0.5"}) {
        auto f = sim::parseFailure(spec);
        ASSERT_TRUE(std::holds_alternative<std::string>(f)) << spec;
        EXPECT_NE(std::get<std::string>(f).find("--fail"), std::string::npos);
    }
    auto f = fabricOf(smallPlan());
    for (const char* spec : {"leaf:p1-spine1", "spine:p9-spine1", "link:p1-leaf1/swp99",
                             "link:p1-leaf1/uplink99", "nicport:srv1/nic1/port9"}) {
        auto applied = sim::applyFailure(f, std::get<sim::Failure>(sim::parseFailure(spec)));
        ASSERT_TRUE(std::holds_alternative<std::string>(applied)) << spec;
    }
}

TEST(SimModel, SinglePlaneOfTheSameNicsIsThePlannersOwn) {
    auto one = sim::withPlanes(smallPlan(), 1);
    ASSERT_TRUE(std::holds_alternative<plan::Plan>(one));
    auto f = fabricOf(std::get<plan::Plan>(one));
    EXPECT_EQ(f.planes, 1);
    EXPECT_EQ(f.nicPorts[0].gbps, 400);
    EXPECT_EQ(f.nics[0].lineGbps, 400);
}

TEST(SimModel, TheVerdictNamesEveryModeAndTheLeafFailure) {
    std::string text = sim::verdict(smallPlan(), 2);
    for (const char* part : {"under ECMP", "static smart routing", "WCMP", "ARS", "spraying",
                             "a leaf failure (p1-leaf1)"})
        EXPECT_NE(text.find(part), std::string::npos) << part << " in\n" << text;
}
