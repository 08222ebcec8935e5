// Static smart routing on the lab (`twinrail-lab up --lb static`): real FRR, real
// hostrouted. Traffic that enters p1-leaf1 on a downlink leaves through the uplink the
// plan pins it to, seen in the uplinks' tx counters; it falls back to multipath when that
// uplink fails and returns when it comes back; hostrouted's restart leaves it in place;
// without the pins the same traffic spreads over both uplinks (the control: the counters
// can tell the two apart).
#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "lab_fixture.h"
#include "twinrail/lab/measure.h"

namespace twinrail::it {
namespace {

using namespace std::chrono_literals;

class LabLb : public ::testing::Test {
  protected:
    void SetUp() override {
        if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
        lab::PlanLab::down(name_);
    }
    void TearDown() override {
        lab::PlanLab::down(name_);
        EXPECT_TRUE(leftovers(name_).empty());
    }

    uint64_t txPackets(const std::string& node, const std::string& port) const {
        auto r = lab::inNodeRun(name_, node,
                                {"cat", "/sys/class/net/" + port + "/statistics/tx_packets"});
        return r.rc == 0 ? std::stoull(r.out) : 0;
    }
    // A field of a STATE_DB row on `node`.
    std::string stateField(const std::string& node, const std::string& key,
                           const std::string& field) const {
        auto r = lab::inNodeRun(
            name_, node,
            {"redis-cli", "-s", lab::PlanLab::stateDir(name_) + "/" + node + "/redis.sock", "-n",
             "6", "HGET", key, field});
        return r.out.empty() ? "" : r.out.substr(0, r.out.size() - 1);
    }
    std::string pinField(const std::string& leaf, const std::string& downlink,
                         const std::string& field) const {
        return stateField(leaf, "UPLINK_PIN_TABLE|" + downlink, field);
    }
    std::string rules(const std::string& leaf) const {
        return lab::inNodeRun(name_, leaf, {"ip", "rule", "show", "pref", "1000"}).out;
    }
    // srv1-nic1 -> srv1-nic2 (p1-leaf1 downlink swp1 to p1-leaf2, across the spines),
    // 16 flows both ways for `seconds`, `event` after 2 s: {uplink -> tx packets} on
    // p1-leaf1 and the flows' report.
    std::pair<std::map<std::string, uint64_t>, nlohmann::json> run(
        int seconds, const std::function<void()>& event = [] {}) {
        std::map<std::string, uint64_t> before{{"swp3", txPackets("p1-leaf1", "swp3")},
                                               {"swp4", txPackets("p1-leaf1", "swp4")}};
        auto reports =
            lab::measureDuring(name_, binaries(), {{"srv1-nic1", "srv1-nic2"}}, event, seconds);
        std::cout << lab::describeMeasurement(reports);
        std::map<std::string, uint64_t> delta;
        for (const auto& [port, n] : before) delta[port] = txPackets("p1-leaf1", port) - n;
        std::cout << "[figure] p1-leaf1 uplink tx packets: swp3 " << delta["swp3"] << ", swp4 "
                  << delta["swp4"] << "\n";
        return {delta, reports[0]};
    }

    std::string name_ = labName("l");
};

TEST_F(LabLb, StaticRoutingPinsFallsBackReturnsAndSurvivesRestart) {
    auto built = twinrail::plan::buildPlan(lab::defaultLabRequest());
    ASSERT_TRUE(std::holds_alternative<twinrail::plan::Plan>(built));
    auto plan = std::get<twinrail::plan::Plan>(built);
    plan.request.lb = twinrail::plan::Request::Lb::Static;
    const auto* leaf = plan.findSwitch("p1-leaf1");
    ASSERT_NE(leaf, nullptr);
    for (const auto& p : leaf->ports) {
        if (p.name == "swp1") {
            ASSERT_EQ(p.pinnedUplink, "swp3");
        }
    }
    lab::PlanLab l(name_, plan, binaries());
    ASSERT_NO_THROW(l.up());
    // All of srv1-nic1's traffic through plane 1, so it enters p1-leaf1 on swp1.
    lab::failNode(name_, "srv1-nic1:port2");
    ASSERT_TRUE(lab::waitUntil([&] { return pinField("p1-leaf1", "swp1", "state") == "pinned"; },
                               10s, 100ms))
        << pinField("p1-leaf1", "swp1", "reason");
    EXPECT_NE(rules("p1-leaf1").find("iif swp1 lookup 1000"), std::string::npos);

    // Pinned: swp1's traffic leaves through swp3 only (swp4 sees BGP and probes).
    auto [pinned, r1] = run(5);
    EXPECT_EQ(r1["flows_not_recovered"], 0);
    EXPECT_GT(pinned["swp3"], 5000u);
    EXPECT_LT(pinned["swp4"], pinned["swp3"] / 20) << "pinned traffic leaked onto swp4";

    // swp3 fails under traffic: its traffic falls back to multipath (swp4) at once.
    std::string pinnedRoutes = pinField("p1-leaf1", "swp1", "routes_v4");
    auto [fallen, r2] = run(6, [this] {
        lab::failNode(name_, "p1-leaf1:swp3");
        EXPECT_TRUE(lab::waitUntil(
            [this] { return pinField("p1-leaf1", "swp1", "state") == "fallback"; }, 1s, 10ms));
    });
    EXPECT_EQ(r2["flows_not_recovered"], 0) << r2.dump();
    std::cout << "[figure] fallback: longest silence " << r2["max_gap_ms"] << " ms\n";
    EXPECT_EQ(pinField("p1-leaf1", "swp1", "reason"), "uplink swp3 down");
    EXPECT_GT(fallen["swp4"], 5000u);
    EXPECT_EQ(rules("p1-leaf1").find("iif swp1 "), std::string::npos);

    // swp3 back: pinned again once BGP has routes through it.
    lab::restoreNode(name_, binaries(), "p1-leaf1:swp3");
    ASSERT_TRUE(lab::waitUntil([&] { return pinField("p1-leaf1", "swp1", "state") == "pinned"; },
                               30s, 100ms));
    // Prefix by prefix, as BGP learns them through swp3 again.
    EXPECT_TRUE(lab::waitUntil(
        [&] { return pinField("p1-leaf1", "swp1", "routes_v4") == pinnedRoutes; }, 30s, 100ms))
        << pinField("p1-leaf1", "swp1", "routes_v4") << " of " << pinnedRoutes;
    auto [back, r3] = run(5);
    EXPECT_EQ(r3["flows_not_recovered"], 0);
    EXPECT_LT(back["swp4"], back["swp3"] / 20);

    // hostrouted stopped (SIGTERM) and started: the rules and tables stay, and so does the
    // pinning meanwhile; the new process finds them in place.
    std::string rulesBefore = rules("p1-leaf1");
    auto table = lab::inNodeRun(name_, "p1-leaf1", {"ip", "route", "show", "table", "1000"}).out;
    ASSERT_TRUE(lab::stopService(name_, "p1-leaf1", lab::Service::Hostrouted, SIGTERM));
    EXPECT_EQ(rules("p1-leaf1"), rulesBefore);
    EXPECT_EQ(lab::inNodeRun(name_, "p1-leaf1", {"ip", "route", "show", "table", "1000"}).out,
              table);
    auto [away, r4] = run(4);
    EXPECT_LT(away["swp4"], away["swp3"] / 20) << "not pinned while hostrouted was away";
    // The pinner's lines, oldest first: the new process says its own once its rule dump is
    // in, which may be after READY (the rules stay in place meanwhile).
    auto pinnerLines = [this] {
        std::vector<std::string> lines;
        std::ifstream in(lab::PlanLab::stateDir(name_) + "/p1-leaf1/hostrouted.log");
        for (std::string line; std::getline(in, line);)
            if (line.find("rules in place") != std::string::npos) lines.push_back(line + "\n");
        return lines;
    };
    size_t linesBefore = pinnerLines().size();
    lab::startService(name_, binaries(), "p1-leaf1", lab::Service::Hostrouted);
    EXPECT_EQ(rules("p1-leaf1"), rulesBefore);
    ASSERT_TRUE(lab::waitUntil([&] { return pinnerLines().size() > linesBefore; }, 10s, 50ms))
        << "the restarted hostrouted never read its rules";
    std::string log = pinnerLines().back();
    EXPECT_NE(log.find("2 rules in place"), std::string::npos) << log;
    EXPECT_NE(log.find(" 0 rule writes"), std::string::npos) << log;
    std::cout << "[figure] restart: " << log;
    EXPECT_EQ(pinField("p1-leaf1", "swp1", "state"), "pinned");

    // The control: the pins removed from the config (SIGHUP), the same traffic spreads.
    std::string cfgPath = lab::PlanLab::stateDir(name_) + "/p1-leaf1/config_db.json";
    nlohmann::json cfg;
    std::ifstream(cfgPath) >> cfg;
    cfg.erase("UPLINK_PIN");
    std::ofstream(cfgPath) << cfg.dump(2);
    for (pid_t pid : lab::servicePids(name_, "p1-leaf1", lab::Service::Hostrouted))
        ::kill(pid, SIGHUP);
    ASSERT_TRUE(lab::waitUntil([&] { return rules("p1-leaf1").empty(); }, 5s, 50ms))
        << rules("p1-leaf1");
    auto [ecmp, r5] = run(5);
    uint64_t total = ecmp["swp3"] + ecmp["swp4"];
    EXPECT_GT(ecmp["swp4"], total / 5) << "ECMP did not spread: the counters prove nothing";
    EXPECT_GT(ecmp["swp3"], total / 5);
    EXPECT_EQ(lab::inNodeRun(name_, "p1-leaf1", {"ip", "route", "show", "table", "1000"}).out, "");
}

}  // namespace
}  // namespace twinrail::it

namespace twinrail::it {
namespace {

// Kernel weights of `prefix` on `node`, summed per far switch (the plan says which
// uplink goes where).
std::map<std::string, int> weightBySpine(const std::string& lab, const twinrail::plan::Plan& p,
                                         const std::string& node, const std::string& prefix) {
    std::map<std::string, std::string> spineOf;
    for (const auto& port : p.findSwitch(node)->ports)
        if (port.role == twinrail::plan::PortRole::Uplink) spineOf[port.name] = port.peer;
    std::map<std::string, int> out;
    auto text = lab::inNodeRun(lab, node, {"ip", "route", "show", prefix}).out;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        auto dev = line.find(" dev "), w = line.find(" weight ");
        if (dev == std::string::npos) continue;
        std::string port = line.substr(dev + 5, line.find(' ', dev + 5) - dev - 5);
        int weight = w == std::string::npos ? 1 : std::stoi(line.substr(w + 8));
        out[spineOf[port]] += weight;
    }
    return out;
}

double share(const std::map<std::string, int>& w, const std::string& spine) {
    int total = 0;
    for (const auto& [s, v] : w) total += v;
    auto it = w.find(spine);
    return total > 0 && it != w.end() ? 100.0 * it->second / total : -1;
}

}  // namespace

// Two links between every leaf and spine (the seed's tables have 1-32): one of p1-leaf1's
// links to p1-spine1 fails. FARE's rule, per switch: p1-leaf2 reaches p1-leaf1 through
// spine1 with min(its 2 links to spine1, spine1's 1 link left to leaf1) = 1 link and
// through spine2 with 2, so spine1 gets a third; per session it would still get half.
TEST_F(LabLb, ParallelLinksAreWeightedPerSwitchWhenOneFails) {
    twinrail::plan::Request r = lab::defaultLabRequest();
    r.gpus = 8;
    r.leafModel = {"lab-8x200G", 8, 200, {1}};
    r.spinesPerPlane = 2;
    auto built = twinrail::plan::buildPlan(r);
    ASSERT_TRUE(std::holds_alternative<twinrail::plan::Plan>(built))
        << std::get<twinrail::plan::SizingError>(built).message;
    const auto& plan = std::get<twinrail::plan::Plan>(built);
    ASSERT_EQ(plan.sizing.linksPerLeafSpine, 2);
    lab::PlanLab l(name_, plan, binaries());
    ASSERT_NO_THROW(l.up());
    const std::string subnet = plan.subnetFor(1, 1)->prefix;  // behind p1-leaf1
    auto w = [&] { return weightBySpine(name_, plan, "p1-leaf2", subnet); };
    // Every pathqd of the plane has its first policy in FRR: on a spine it goes in chunks,
    // at FRR's pace of seconds per chunk. A failure before that would queue behind them,
    // and the weights would move late (by 11-20 s) for reasons of the start, not the failure.
    for (const char* sw : {"p1-leaf1", "p1-leaf2", "p1-spine1", "p1-spine2"}) {
        ASSERT_TRUE(lab::waitUntil(
            [&] { return stateField(sw, "PATHQD_STATS|global", "frr_state") == "ok"; }, 60s, 500ms))
            << sw << ": " << stateField(sw, "PATHQD_STATS|global", "frr_state");
    }
    // An even split within one level of 32 on a link: a port may publish a few levels low
    // at first, from probes lost while the lab started, and come back after raise_hold.
    auto even = [&] { return w().size() == 2 && std::abs(share(w(), "p1-spine1") - 50.0) <= 2.0; };
    ASSERT_TRUE(lab::waitUntil(even, 40s, 200ms))
        << lab::inNodeRun(name_, "p1-leaf2", {"ip", "route", "show", subnet}).out;
    std::string failed;
    for (const auto& port : plan.findSwitch("p1-leaf1")->ports) {
        if (port.role == twinrail::plan::PortRole::Uplink && port.peer == "p1-spine1")
            failed = port.name;
    }
    auto failedAt = std::chrono::steady_clock::now();
    lab::failNode(name_, "p1-leaf1:" + failed);
    // The session on the failed link is gone at once; the weights follow when p1-spine1's
    // pathqd has rewritten the out-maps of both its links to p1-leaf1 (about 120 route-map
    // lines, which FRR takes 4-5 s for here, and 10-20 s on a loaded machine).
    EXPECT_TRUE(lab::waitUntil(
        [&] {
            double s = share(w(), "p1-spine1");
            return s > 30 && s < 36;
        },
        40s, 200ms))
        << "spine1's share " << share(w(), "p1-spine1") << "%\n"
        << lab::inNodeRun(name_, "p1-leaf2", {"ip", "route", "show", subnet}).out;
    std::cout << "[figure] one of two links leaf1-spine1 down: p1-leaf2 gives spine1 "
              << share(w(), "p1-spine1") << "% of " << subnet
              << " (FARE: 33.3%, per session: 50%) after "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - failedAt).count()
              << " s\n";
    lab::restoreNode(name_, binaries(), "p1-leaf1:" + failed);
    // Even again (a restored link, too, comes back a few levels low, from the probes it lost).
    EXPECT_TRUE(lab::waitUntil(even, 40s, 500ms))
        << lab::inNodeRun(name_, "p1-leaf2", {"ip", "route", "show", subnet}).out;
}

}  // namespace twinrail::it
