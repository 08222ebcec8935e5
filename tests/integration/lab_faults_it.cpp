// Faults an operator meets, on the dual-plane lab with real FRR, Redis and daemons:
// FRR on a leaf or a spine killed or restarted (as watchfrr, a crash or `systemctl
// restart frr` do it). The fabric must put itself back together, with nobody stepping in.
// A switch's Redis gone for a minute while traffic flows and routes change is a minute
// long: bench/soak_bench.cpp checks it.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

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

// The host-port hold (hostrouted's fabric_prefixes) on a leaf that dies and boots again:
// `fail` cuts its links and kills everything on it (Redis, FRR, the daemons) as a power
// loss does; `restore` boots it. At start-up hostrouted holds the host ports it sees come
// up until its kernel has every fabric prefix, so that no server sees carrier from a leaf
// that cannot forward yet.
TEST_F(LabFaults, RebootedLeafHoldsItsHostPortsUntilItHasTheFabricPrefixes) {
    const std::string leaf = "p1-leaf1";
    auto cfg = nlohmann::json::parse(
        lab::run({"cat", lab::PlanLab::stateDir(name_) + "/" + leaf + "/config_db.json"}).out);
    std::vector<std::string> prefixes, hostPorts;
    std::istringstream list(cfg["HOSTROUTED"]["global"].value("fabric_prefixes", ""));
    for (std::string p; std::getline(list, p, ',');) prefixes.push_back(p);
    for (const auto& [port, row] : cfg["HOSTROUTED_INTERFACE"].items()) hostPorts.push_back(port);
    ASSERT_FALSE(prefixes.empty()) << "the planner wrote no fabric_prefixes for " << leaf;
    // Carrier (LOWER_UP): what the NIC on the other end sees, and what a bond acts on.
    auto carrier = [&](const std::string& port) {
        auto out = lab::inNodeRun(name_, leaf, {"ip", "-o", "link", "show", port}).out;
        auto flags = out.substr(0, out.find('>'));
        return flags.find("LOWER_UP") != std::string::npos;
    };
    auto allUp = [&] {
        for (const auto& p : hostPorts)
            if (!carrier(p)) return false;
        return true;
    };
    auto fabricRouted = [&] {
        for (const auto& p : prefixes) {
            if (lab::inNodeRun(name_, leaf, {"ip", "route", "show", p}).out.find("proto bgp") ==
                std::string::npos)
                return false;
        }
        return true;
    };
    auto held = [&] {
        for (const auto& p : hostPorts) {
            if (redisCli(leaf, {"HGET", "HOST_PORT_HOLD_TABLE|" + p, "state"}) != "held\n")
                return false;
        }
        return true;
    };
    // The lab is up: the leaf has its routes, and its host ports are up.
    ASSERT_TRUE(lab::waitUntil([&] { return fabricRouted() && allUp(); }, 60s, 200ms));
    lab::failNode(name_, leaf);
    // Dead: nothing of it runs, and its links are down.
    for (auto s : {lab::Service::Hostrouted, lab::Service::Pathqd, lab::Service::Redis})
        EXPECT_TRUE(lab::servicePids(name_, leaf, s).empty()) << lab::serviceName(s);
    EXPECT_FALSE(allUp());
    // restore returns once the NICs have announced, which they do when their links come
    // up, at the release: the ports are watched meanwhile.
    auto t0 = Clock::now();
    std::string restoreError;
    std::thread restore([this, &leaf, &restoreError] {
        try {
            lab::restoreNode(name_, binaries(), leaf);
        } catch (const std::exception& e) {
            restoreError = e.what();
        }
    });
    std::optional<double> routedAt, releasedAt;
    bool early = false;
    bool heldSeen = false;
    lab::waitUntil(
        [&] {
            // Ports first, routes second: a release observed here happened before the route
            // check begins, so routes installed in between cannot pass for an early release.
            bool upNow = allUp();
            bool routedNow = fabricRouted();
            heldSeen = heldSeen || (!releasedAt && held());
            if (routedNow && !routedAt) routedAt = secondsSince(t0);
            if (upNow && !releasedAt) releasedAt = secondsSince(t0);
            early = early || (upNow && !routedNow && !routedAt);
            return routedAt && releasedAt;
        },
        60s, 50ms);
    restore.join();
    EXPECT_EQ(restoreError, "");
    std::cout << "[figure] leaf restore: fabric prefixes in p1-leaf1's kernel after "
              << routedAt.value_or(-1) << " s, host ports released after "
              << releasedAt.value_or(-1) << " s\n";
    ASSERT_TRUE(releasedAt) << "the host ports were never released\n"
                            << redisCli(leaf, {"HGETALL", "HOST_PORT_HOLD_TABLE|swp1"});
    EXPECT_FALSE(early) << "a host port came up before the leaf had every fabric prefix";
    EXPECT_TRUE(heldSeen) << "the booted hostrouted never recorded its host ports as held";
    EXPECT_EQ(redisCli(leaf, {"HGET", "HOST_PORT_HOLD_TABLE|" + hostPorts[0], "state"}),
              "released\n");
    // The hosts behind the released ports are reachable through both planes again.
    std::string failed;
    bool all = lab::waitUntil(
        [&] { return (failed = pingEveryPlane(name_, lab_->plan())).empty(); }, 60s, 1s);
    std::cout << "[figure] leaf restore: all-to-all through both planes after " << secondsSince(t0)
              << " s\n";
    EXPECT_TRUE(all) << failed;
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
