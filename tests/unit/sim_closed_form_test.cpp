// The model against closed forms (issue 23). On a CX864E-N leaf (128 x 200G down, 64 x 400G
// up), a full permutation with one flow per NIC port hashes 128 flows into 64 uplinks:
// each uplink's count is Binomial(128, 1/64), an uplink is over-subscribed with 3 or more
// (P = 0.3233), and the worst of the fabric's uplinks is the maximum of that many draws:
// median 8 at 2k GPUs (2,048 uplinks: P(max <= 8) = 0.665), 9 at 16k (16,384 uplinks:
// P(max <= 8) = 0.038, P(max <= 9) = 0.547).
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>

#include "twinrail/sim/simulate.h"

namespace sim = twinrail::sim;
namespace plan = twinrail::plan;

namespace {

sim::Fabric cx864Fabric(int gpus) {
    plan::Request r;
    r.gpus = gpus;
    r.leafModel = *plan::findModel("CX864E-N");
    auto built = plan::buildPlan(r);
    EXPECT_TRUE(std::holds_alternative<plan::Plan>(built));
    return std::get<sim::Fabric>(sim::buildFabric(std::get<plan::Plan>(built)));
}

std::vector<sim::Transfer> permutation(const sim::Fabric& f) {
    return std::get<std::vector<sim::Transfer>>(
        sim::makeTraffic(f, sim::Pattern::Permutation, 1e6));
}

// The most flows on one leaf uplink, from the routes alone (the rates do not change it).
double worstUplink(const sim::Fabric& f, const std::vector<sim::Transfer>& t, uint64_t seed) {
    sim::RoutingOptions o;
    o.seed = seed;
    auto routed = sim::route(f, t, o);
    std::vector<int> count(f.links.size(), 0);
    for (const auto& flow : routed.flows) ++count[static_cast<size_t>(flow.links[1])];
    int worst = 0;
    for (size_t l = 0; l < f.links.size(); ++l)
        if (f.links[l].leafUplink) worst = std::max(worst, count[l]);
    return worst;
}

}  // namespace

TEST(SimClosedForm, TwoKPermutationOverSubscribesAThirdOfTheUplinks) {
    auto f = cx864Fabric(2048);
    auto t = permutation(f);
    sim::RoutingOptions o;  // ECMP, Linux hash-threshold, 2 QPs: one per NIC port
    sim::Summary s = sim::simulateSeeds(f, t, o, sim::ByteSplit::EvenPerQp, 100);
    std::cout << "2k, 100 seeds: over-subscribed " << s.oversubscribedUplinkShare.median << " (p95 "
              << s.oversubscribedUplinkShare.p95 << "), worst uplink " << s.worstUplinkFlows.median
              << " (p95 " << s.worstUplinkFlows.p95 << "), job " << s.completionOverIdeal.median
              << "x ideal\n";
    EXPECT_NEAR(s.oversubscribedUplinkShare.median, 0.323, 0.01);
    EXPECT_NEAR(s.worstUplinkFlows.median, 8, 1);
    // The slowest QP shares a 400G uplink with the worst uplink's others: worst / 2 of ideal.
    EXPECT_GE(s.completionOverIdeal.median, 3.5);
    EXPECT_EQ(s.unreachableTransfers, 0);
}

TEST(SimClosedForm, SixteenKWorstUplinkCarriesNineFlows) {
    auto f = cx864Fabric(16384);
    ASSERT_EQ(f.nics.size(), 16384u);
    auto t = permutation(f);
    std::vector<double> worst;
    for (uint64_t seed = 1; seed <= 15; ++seed) worst.push_back(worstUplink(f, t, seed));
    EXPECT_NEAR(sim::statOf(worst).median, 9, 1);
    sim::RoutingOptions o;
    sim::Summary s = sim::simulateSeeds(f, t, o, sim::ByteSplit::EvenPerQp, 2);
    std::cout << "16k: worst uplink " << sim::statOf(worst).median
              << " (15 seeds), over-subscribed " << s.oversubscribedUplinkShare.median
              << " (2 seeds)\n";
    EXPECT_NEAR(s.oversubscribedUplinkShare.median, 0.323, 0.01);
}

TEST(SimClosedForm, StaticPinsAndSprayingLeaveNoUplinkOverSubscribed) {
    auto f = cx864Fabric(2048);
    auto t = permutation(f);
    for (sim::Mode m : {sim::Mode::Static, sim::Mode::Spray, sim::Mode::Ars}) {
        sim::RoutingOptions o;
        o.mode = m;
        sim::Summary s = sim::simulateSeeds(f, t, o, sim::ByteSplit::EvenPerQp, 3);
        EXPECT_EQ(s.oversubscribedUplinkShare.p95, 0) << sim::modeName(m);
        EXPECT_NEAR(s.maxOverMeanLinkLoad.median, 1, 1e-6) << sim::modeName(m);
    }
}
