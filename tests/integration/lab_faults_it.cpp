// Faults an operator meets, on the dual-plane lab with real FRR, Redis and daemons:
// FRR on a leaf or a spine killed or restarted (as watchfrr, a crash or `systemctl
// restart frr` do it), and a switch's Redis gone for a minute while traffic flows and
// routes change. The fabric must put itself back together, with nobody stepping in.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "lab_fixture.h"
#include "twinrail/lab/measure.h"

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
    std::set<std::string> tableHosts(const std::string& node) {
        std::set<std::string> out;
        std::istringstream in(
            lab::inNodeRun(name_, node, {"ip", "route", "show", "table", "10"}).out);
        for (std::string line; std::getline(in, line);) out.insert(line.substr(0, line.find(' ')));
        return out;
    }
    // Hosts STATE_DB says are routed.
    std::set<std::string> stateHosts(const std::string& node) {
        std::set<std::string> out;
        std::istringstream in(redisCli(node, {"--scan", "--pattern", "HOST_ROUTE_TABLE|*"}));
        for (std::string key; std::getline(in, key);) {
            auto bar = key.find('|');
            if (bar == std::string::npos) continue;
            if (redisCli(node, {"HGET", key, "state"}) == "installed\n")
                out.insert(key.substr(bar + 1));
        }
        return out;
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

// Redis is a side channel: with a switch's Redis gone for a minute, traffic flows, a NIC
// port fails and comes back and its routes follow, and once Redis is back its state
// tables are republished to match the kernel.
TEST_F(LabFaults, RedisGoneForAMinuteUnderLoadChangesNoRouting) {
    for (const char* node : {"p1-leaf1", "p1-spine1"})
        ASSERT_TRUE(lab::stopService(name_, node, lab::Service::Redis, SIGKILL));
    auto event = [this] {
        lab::failNode(name_, "srv1-nic1:port1");
        std::this_thread::sleep_for(5s);
        lab::restoreNode(name_, binaries(), "srv1-nic1:port1");
    };
    auto t0 = Clock::now();
    auto reports = lab::measureDuring(
        name_, binaries(), {{"srv2-nic1", "srv1-nic1"}, {"srv1-nic1", "srv2-nic1"}}, event, 60);
    std::cout << lab::describeMeasurement(reports);
    for (const auto& r : reports) {
        ASSERT_FALSE(r.contains("error")) << r.dump();
        EXPECT_EQ(r["flows_not_recovered"], 0) << r.dump();
    }
    // The port came back while Redis was down: the host is routed through it again.
    EXPECT_TRUE(
        lab::waitUntil([this] { return tableHosts("p1-leaf1").count(kHosts[0]) > 0; }, 15s));
    EXPECT_GE(secondsSince(t0), 60.0);
    for (const char* node : {"p1-leaf1", "p1-spine1"})
        lab::startService(name_, binaries(), node, lab::Service::Redis);
    EXPECT_TRUE(
        lab::waitUntil([this] { return stateHosts("p1-leaf1") == tableHosts("p1-leaf1"); }, 15s))
        << "STATE_DB does not match table 10 after Redis came back";
    EXPECT_TRUE(lab::waitUntil(
        [this] {
            return redisCli("p1-spine1", {"EXISTS", "PATH_QUALITY_TABLE|swp1"}) == "1\n";
        },
        15s));
    for (const char* node : {"p1-leaf1", "p1-spine1"}) {
        EXPECT_FALSE(lab::servicePids(name_, node, lab::Service::Pathqd).empty()) << node;
    }
    EXPECT_FALSE(lab::servicePids(name_, "p1-leaf1", lab::Service::Hostrouted).empty());
}

}  // namespace
}  // namespace twinrail::it
