// arsd's Daemon on fakes: routes mirrored as the kernel changes them, eligibility, pins,
// quality samples feeding bands, a new config, SIGTERM detaching every port.
#include <gtest/gtest.h>

#include <algorithm>

#include "arsd_harness.h"

namespace twinrail::arsd::test {
namespace {

class ArsdDaemon : public ::testing::Test {
  protected:
    Harness h;
    std::unique_ptr<Daemon> d;
    void start(const Config& c = Harness::leafConfig()) {
        d = std::make_unique<Daemon>(h.io, c, h.edges());
        d->start();
    }
    const std::vector<ars::PathNexthop>& at(const char* dst) { return h.dp.routes.at(prefix(dst)); }
};

TEST_F(ArsdDaemon, AttachesEveryPortAfterDetachingALeftoverAndPinsPinnedOnes) {
    start();
    EXPECT_EQ(h.dp.maxFlows, 1024u);
    EXPECT_EQ(h.dp.attached, (std::set<int>{11, 12, 13, 21, 22}));
    EXPECT_EQ(h.dp.pinned, (std::set<int>{21}));
    // A crashed predecessor's filter is taken off before ours goes on.
    auto first = [this](const std::string& call) {
        return std::find(h.dp.calls.begin(), h.dp.calls.end(), call) - h.dp.calls.begin();
    };
    EXPECT_LT(first("leftover 11"), first("attach 11"));
    ASSERT_NE(h.feed, nullptr);
    EXPECT_EQ(h.feed->tables(), (std::set<uint32_t>{254, 255}));
    EXPECT_TRUE(d->ready());  // the fake feed's first snapshot completed in start()
}

TEST_F(ArsdDaemon, RoutesAreMirroredAddedChangedWithdrawnAndRemoved) {
    start();
    auto r = route("10.1.0.0/24", {{11, "169.254.0.1", 1}, {12, "169.254.0.1", 1}});
    h.feed->set(r);
    ASSERT_EQ(at("10.1.0.0/24").size(), 2u);
    EXPECT_EQ(at("10.1.0.0/24")[0].weight, 1u);

    r = route("10.1.0.0/24", {{11, "169.254.0.1", 3}, {12, "169.254.0.1", 1}});
    h.feed->set(r);  // pathqd changed the weights
    EXPECT_EQ(at("10.1.0.0/24")[0].weight, 3u);
    EXPECT_EQ(at("10.1.0.0/24")[1].weight, 1u);

    r = route("10.1.0.0/24", {{12, "169.254.0.1", 1}});
    h.feed->set(r);  // one next hop withdrawn: only the other is left
    ASSERT_EQ(at("10.1.0.0/24").size(), 1u);
    EXPECT_EQ(at("10.1.0.0/24")[0].ifindex, 12);

    h.feed->remove(r);
    EXPECT_EQ(h.dp.routes.count(prefix("10.1.0.0/24")), 0u);
    EXPECT_EQ(d->stats().routesRemoved, 1u);
}

TEST_F(ArsdDaemon, AnUnchangedRouteIsNotWrittenAgain) {
    start();
    auto r = route("10.1.0.0/24", {{11, "169.254.0.1", 1}, {12, "169.254.0.1", 1}});
    h.feed->set(r);
    h.feed->set(r);
    h.feed->resync();
    EXPECT_EQ(std::count(h.dp.calls.begin(), h.dp.calls.end(), "setRoute 10.1.0.0/24"), 1);
}

TEST_F(ArsdDaemon, OnlyArsInterfacesAreEligibleUnlessSprayUsesEveryFabricPort) {
    start();
    h.feed->set(route("10.1.0.0/24", {{11, "169.254.0.1", 1}, {13, "169.254.0.1", 1}}));
    EXPECT_TRUE(at("10.1.0.0/24").empty());  // up3 is not in ARS_INTERFACES

    auto spray = Harness::leafConfig();
    spray.ars.interfaces.clear();
    spray.ars.datapath.mode = ars::AssignMode::PacketRandom;
    spray.ars.selector = ars::NhgSelector::Global;  // what SWITCH_HASH RANDOM means
    d->applyConfig(spray);
    EXPECT_EQ(h.dp.settings.mode, ars::AssignMode::PacketRandom);
    EXPECT_EQ(at("10.1.0.0/24").size(), 2u);  // every multipath route now
    h.counters[13] = {13, 0, 0, 1};
    d->sampleNow();
    h.now += 1'000'000;
    d->sampleNow();
    EXPECT_EQ(h.dp.bands.count(13), 1u);  // and every fabric port sampled
}

TEST_F(ArsdDaemon, PinsFollowTheConfig) {
    start();
    auto c = Harness::leafConfig();
    c.pinned = {"host2"};
    d->applyConfig(c);
    EXPECT_EQ(h.dp.pinned, (std::set<int>{22}));
}

TEST_F(ArsdDaemon, QualitySamplesOfLoadAndQueueFeedTheBands) {
    start();
    const uint64_t bps = 10'000'000'000ULL, periodNs = 1'000'000;
    for (int i = 0; i < 20; ++i) {
        // up1 sends at line rate with a standing queue; up2 is idle.
        h.counters[11] = {11, static_cast<uint64_t>(i) * bps / 8 * periodNs / 1'000'000'000,
                          500'000, bps};
        h.counters[12] = {12, 0, 0, bps};
        d->sampleNow();
        h.now += periodNs;
    }
    EXPECT_EQ(d->stats().samples, 20u);
    ASSERT_EQ(h.dp.bands.count(11), 1u);
    ASSERT_EQ(h.dp.bands.count(12), 1u);
    EXPECT_LT(h.dp.bands[11], h.dp.bands[12]);
    EXPECT_EQ(h.dp.bands[12], ars::kBestBand);
    EXPECT_EQ(h.dp.bands.count(13), 0u);  // not eligible: not sampled
    EXPECT_EQ(h.dp.rates[11], bps / 8);   // the program's queue estimate drains at it
}

TEST_F(ArsdDaemon, TheSampledBacklogReachesTheDataPathWithItsTime) {
    start();
    h.counters[11] = {11, 0, 500'000, 1'000'000'000};
    h.counters[12] = {12, 0, 0, 1'000'000'000};
    d->sampleNow();
    ASSERT_EQ(h.dp.backlogs.count(11), 1u);
    EXPECT_EQ(h.dp.backlogs[11], std::make_pair(uint64_t{500'000}, h.now));
    EXPECT_EQ(h.dp.backlogs.count(12), 0u);  // empty and never written: nothing to say
    h.now += 1'000'000;
    h.counters[11] = {11, 0, 0, 1'000'000'000};
    d->sampleNow();  // emptied: written once, so the floor does not outlive the queue
    EXPECT_EQ(h.dp.backlogs[11], std::make_pair(uint64_t{0}, h.now));
}

TEST_F(ArsdDaemon, TheTimerSamplesEveryPeriodWithAOneMillisecondFloor) {
    auto c = Harness::leafConfig();
    c.ars.samplingIntervalUs = 10;  // below what software can keep: the floor
    start(c);
    EXPECT_EQ(d->samplingPeriod(), std::chrono::microseconds(1000));
    h.counters[11] = {11, 0, 0, 1};
    h.io.run_for(std::chrono::milliseconds(30));
    EXPECT_GE(d->stats().samples, 3u);
}

TEST_F(ArsdDaemon, ANewModeIdleTimeOrGlobalIsAppliedWithConfigure) {
    start();
    int before = h.dp.configures;
    auto c = Harness::leafConfig();
    c.ars.datapath = {ars::AssignMode::FlowletRandom, 512, true};
    d->applyConfig(c);
    EXPECT_EQ(h.dp.configures, before + 1);
    EXPECT_EQ(h.dp.settings, c.ars.datapath);
    EXPECT_EQ(h.datapathsMade, 1);
    EXPECT_EQ(h.dp.maxFlows, 1024u);
}

TEST_F(ArsdDaemon, ANewMaxFlowsIsANewDatapathGivenEveryPortRouteAndPin) {
    start();
    h.feed->set(route("10.1.0.0/24", {{11, "169.254.0.1", 1}, {12, "169.254.0.1", 1}}));
    auto c = Harness::leafConfig();
    c.ars.maxFlows = 8192;
    h.dp = {};  // what the new one is given
    d->applyConfig(c);
    EXPECT_EQ(h.datapathsMade, 2);
    EXPECT_EQ(h.dp.maxFlows, 8192u);
    EXPECT_EQ(h.dp.attached, (std::set<int>{11, 12, 13, 21, 22}));
    EXPECT_EQ(h.dp.pinned, (std::set<int>{21}));
    EXPECT_EQ(at("10.1.0.0/24").size(), 2u);
    // The old one's filters went first: five detaches before the first attach.
    auto attach = std::find_if(h.dp.calls.begin(), h.dp.calls.end(),
                               [](const std::string& x) { return x.rfind("attach", 0) == 0; });
    EXPECT_EQ(std::count_if(h.dp.calls.begin(), attach,
                            [](const std::string& x) { return x.rfind("detach", 0) == 0; }),
              5);
}

TEST_F(ArsdDaemon, DisabledConfigAttachesNothingAndDisablingDetachesEverything) {
    auto off = Harness::leafConfig();
    off.ars.enabled = false;
    start(off);
    EXPECT_EQ(h.datapathsMade, 0);
    d->applyConfig(Harness::leafConfig());
    EXPECT_EQ(h.dp.attached.size(), 5u);
    d->applyConfig(off);
    EXPECT_TRUE(h.dp.attached.empty());
}

TEST_F(ArsdDaemon, SigtermDetachesEveryPortAndTouchesNoRoute) {
    start();
    h.feed->set(route("10.1.0.0/24", {{11, "169.254.0.1", 1}, {12, "169.254.0.1", 1}}));
    h.dp.calls.clear();
    d->stop();
    EXPECT_TRUE(h.dp.attached.empty());
    EXPECT_EQ(h.dp.calls.size(), 5u);
    for (const auto& call : h.dp.calls) EXPECT_EQ(call.rfind("detach ", 0), 0u) << call;
    EXPECT_TRUE(h.feed->stopped);
}

TEST_F(ArsdDaemon, AMissingPortOrARefusedAttachIsLoggedAndTheRestAttached) {
    auto c = Harness::leafConfig();
    c.ports.insert("ghost");
    h.dp.failAttach = {22};
    start(c);
    EXPECT_EQ(h.dp.attached, (std::set<int>{11, 12, 13, 21}));
    EXPECT_EQ(d->attached().count("host2"), 0u);
}

}  // namespace
}  // namespace twinrail::arsd::test
