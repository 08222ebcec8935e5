// Faults an operator meets, on the dual-plane lab with real FRR, Redis and daemons:
// FRR on a leaf or a spine killed or restarted (as watchfrr, a crash or `systemctl
// restart frr` do it). The fabric must put itself back together, with nobody stepping in.
// A switch's Redis gone for a minute while traffic flows and routes change is a minute
// long: bench/soak_bench.cpp checks it.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

#include "lab_fixture.h"

namespace twinrail::it {
namespace {

namespace plan = twinrail::plan;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

class LabFaults : public ::testing::Test {
  protected:
    void SetUp() override {
        auto p = plan::buildPlan(lab::defaultLabRequest());
        ASSERT_TRUE(std::holds_alternative<plan::Plan>(p));
        lab_ = std::make_unique<lab::PlanLab>(name_, std::get<plan::Plan>(p), binaries());
        lab_->up();
    }
    void TearDown() override {
        lab::PlanLab::down(name_);
        EXPECT_TRUE(leftovers(name_).empty());
    }
    bool routed(const std::string& node, const std::string& host) {
        auto out = lab::inNodeRun(name_, node, {"ip", "route", "show", host + "/32"}).out;
        return out.rfind(host + " ", 0) == 0;
    }
    std::string redisCli(const std::string& node, const lab::Argv& args) {
        lab::Argv argv{"redis-cli", "-s",
                       lab::PlanLab::stateDir(name_) + "/" + node + "/redis.sock", "-n", "6"};
        argv.insert(argv.end(), args.begin(), args.end());
        return lab::inNodeRun(name_, node, argv).out;
    }

    std::string name_ = labName("f");
    std::unique_ptr<lab::PlanLab> lab_;
};

// p1-leaf1's hosts as p1-leaf2 sees them, and p1-leaf1's rail subnet: BGP's own route,
// which comes back with the sessions and is the floor for the hosts.
constexpr const char* kHosts[] = {"10.128.0.2", "10.128.0.3"};
constexpr const char* kLeaf1Subnet = "10.128.0.0/24";

TEST_F(LabFaults, FrrRestartOnALeafBringsItsHostsBackByThemselves) {
    struct Case {
        const char* name;
        lab::FrrRestart how;
    };
    // Service last: from then on watchfrr supervises the instance.
    const Case cases[] = {{"kill -9 zebra and bgpd", lab::FrrRestart::Kill},
                          {"clean restart", lab::FrrRestart::Clean},
                          {"systemctl restart frr (frrinit.sh)", lab::FrrRestart::Service}};
    for (const auto& c : cases) {
        auto t0 = Clock::now();
        lab::restartFrr(name_, "p1-leaf1", c.how);
        std::optional<double> subnetBack, hostsBack;
        auto back = [&] {
            if (!subnetBack &&
                lab::inNodeRun(name_, "p1-leaf2", {"ip", "route", "show", kLeaf1Subnet})
                        .out.find("proto bgp") != std::string::npos)
                subnetBack = secondsSince(t0);
            if (!hostsBack && routed("p1-leaf2", kHosts[0]) && routed("p1-leaf2", kHosts[1]))
                hostsBack = secondsSince(t0);
            return subnetBack && hostsBack;
        };
        bool ok = lab::waitUntil(back, 90s, 100ms);
        std::cout << "[figure] " << c.name << ": p1-leaf1's subnet back on p1-leaf2 after "
                  << subnetBack.value_or(-1) << " s, its hosts after " << hostsBack.value_or(-1)
                  << " s\n";
        ASSERT_TRUE(ok) << c.name << ": p1-leaf1's hosts never came back on p1-leaf2\n"
                        << redisCli("p1-leaf1", {"HGETALL", "HOST_ROUTE_STATS|global"});
        // The hosts follow BGP's own routes: the audit repairs within its 2 s burst.
        EXPECT_LE(*hostsBack - *subnetBack, 10.0) << c.name;
        // The NICs' own sessions to the leaf re-form too: every NIC reaches every other
        // through each plane again.
        std::string failed;
        bool all = lab::waitUntil(
            [&] { return (failed = pingEveryPlane(name_, lab_->plan())).empty(); }, 60s, 1s);
        std::cout << "[figure] " << c.name << ": all-to-all through both planes after "
                  << secondsSince(t0) << " s\n";
        EXPECT_TRUE(all) << c.name << ":\n" << failed;
    }
    auto stats = redisCli("p1-leaf1", {"HGETALL", "HOST_ROUTE_STATS|global"});
    EXPECT_NE(stats.find("frr_audit\nok"), std::string::npos) << stats;
}

// pathqd's route-maps are run-time config that a restarted bgpd does not have: they are
// put back at once, not at the next periodic audit.
TEST_F(LabFaults, FrrRestartOnASpineGetsPathqdRouteMapsBack) {
    auto hasRouteMaps = [this] {
        auto cfg = lab::run({"vtysh", "-N", lab::PlanLab::nsPrefix(name_) + "p1-spine1", "-c",
                             "show running-config"})
                       .out;
        return cfg.find("neighbor swp1 route-map TWINRAIL-PQ-OUT-swp1 out") != std::string::npos;
    };
    ASSERT_TRUE(lab::waitUntil(hasRouteMaps, 20s, 200ms));
    for (auto how : {lab::FrrRestart::Kill, lab::FrrRestart::Clean}) {
        auto t0 = Clock::now();
        lab::restartFrr(name_, "p1-spine1", how);
        bool ok = lab::waitUntil(hasRouteMaps, 30s, 100ms);
        std::cout << "[figure] spine FRR " << (how == lab::FrrRestart::Kill ? "kill -9" : "clean")
                  << " restart: pathqd route-maps back after " << secondsSince(t0) << " s\n";
        EXPECT_TRUE(ok);
    }
    EXPECT_TRUE(
        lab::waitUntil([this] { return pingEveryPlane(name_, lab_->plan()).empty(); }, 30s, 1s));
}

}  // namespace
}  // namespace twinrail::it
