// pathqd's orchestration against fakes of every edge (tests/fakes): counters in, FRR
// route-maps and STATE_DB rows out; FRR restarts, kernel route events, config changes,
// Redis outages and FRR answers of the wrong shape. No root, no socket, no FRR, no Redis:
// each test drives the io_context for a few tens of milliseconds, with periods of a few ms.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "daemon.h"
#include "twinrail/frr/running_config.h"
#include "twinrail_fakes/frr.h"
#include "twinrail_fakes/kernel.h"
#include "twinrail_fakes/pathqd_edges.h"
#include "twinrail_fakes/redis.h"

namespace twinrail::pathqd {
namespace {

using namespace std::chrono_literals;
using Path = std::vector<std::string>;

constexpr const char* kRow1 = "PATH_QUALITY_TABLE|swp1";
constexpr const char* kIn1 = "route-map TWINRAIL-PQ-IN-swp1 permit 10";
const Path kAttach1{"router bgp 65000", "address-family ipv4 unicast",
                    "neighbor swp1 route-map TWINRAIL-PQ-IN-swp1 in"};

Path inBandwidth(int level) {
    return {kIn1, "set extcommunity bandwidth " + std::to_string(level)};
}

PortConfig downlink() {
    PortConfig p;
    p.role = Role::Downlink;
    return p;
}

netlink::KernelRoute route(const char* dst, uint8_t protocol, uint32_t w1, uint32_t w2) {
    netlink::KernelRoute r;
    r.dst = *IpPrefix::parse(dst);
    r.table = 254;
    r.protocol = protocol;
    r.nexthops = {{1, IpAddr{}, w1, false}, {2, IpAddr{}, w2, false}};
    return r;
}

long num(const std::string& text) {
    return text.empty() ? -1 : std::stol(text);
}

class PathqdDaemon : public ::testing::Test {
  protected:
    PathqdDaemon() {
        // 100 Mb/s links against a 100 Mb/s reference in 20 levels: idle is 20, a link at
        // capacity (congestion 1, max_penalty 0.25 off) is 15.
        cfg.sampleInterval = 5ms;
        cfg.model.referenceBps = 100e6;
        cfg.model.levels = 20;
        cfg.model.smoothing = 1ms;
        cfg.model.minHold = 0ms;
        cfg.model.raiseHold = 0ms;
        cfg.ipv6 = false;
        cfg.probePort = 0;
        cfg.weightsInterval = 5ms;
        cfg.weightAuditInterval = 0s;
        cfg.bgpPeersInterval = 0ms;
        cfg.ports["swp1"] = downlink();
        options.periods = {.stats = 10ms,
                           .frrAuditEvery = 1'000'000,  // only restarts and changes re-read FRR
                           .frrBurst = 5ms,
                           .frrBurstFor = 30ms,
                           .frrRetry = 10ms,
                           .auditAfterRestart = 5ms,
                           .bgpPeersFirstRead = 5ms};
        counters.ports["swp1"] = {.ifindex = 1};
        frr.configure({"router bgp 65000"});
    }

    void start() {
        Edges e;
        e.counters = std::move(countersOwned_);
        e.frr = std::move(frrOwned_);
        e.stateDb = std::move(redisOwned_);
        e.routeFeed = [this](std::set<uint32_t> tables, netlink::RouteFeed::OnChange onChange) {
            auto f = std::make_unique<fakes::FakeRouteFeed>(std::move(tables), std::move(onChange));
            routes = f.get();
            return f;
        };
        e.probes = [this](uint16_t port) {
            auto p = std::make_unique<fakes::FakeLinkProbes>(port);
            probes = p.get();
            return p;
        };
        e.intReports = [this](uint16_t port, IntMapping mapping, IntTrust trust) {
            auto c =
                std::make_unique<fakes::FakeIntReports>(port, std::move(mapping), std::move(trust));
            ints = c.get();
            return c;
        };
        e.ifName = [](int ifindex) { return "swp" + std::to_string(ifindex); };
        e.routeWriter = [this] { return std::make_unique<fakes::RouteWriterInto>(kernelTable); };
        daemon = std::make_unique<Daemon>(io, cfg, options, std::move(e));
        daemon->start();
    }

    // Runs the loop until `done` (true) or `limit` (false).
    bool runUntil(const std::function<bool()>& done, std::chrono::milliseconds limit = 3s) {
        auto deadline = std::chrono::steady_clock::now() + limit;
        while (!done()) {
            if (std::chrono::steady_clock::now() > deadline) return false;
            if (io.stopped()) io.restart();
            io.run_for(1ms);
        }
        return true;
    }
    void runFor(std::chrono::milliseconds d) {
        runUntil([] { return false; }, d);
    }

    std::string row(const std::string& key, const std::string& field) const {
        auto it = redis.hashes.find(key);
        if (it == redis.hashes.end()) return "";
        auto f = it->second.find(field);
        return f == it->second.end() ? "" : f->second;
    }
    bool hasRow(const std::string& key) const { return redis.hashes.count(key) > 0; }
    std::string stat(const std::string& field) const { return row("PATHQD_STATS|global", field); }
    std::string running() {
        std::optional<std::string> text;
        frr.showRunning([&text](bool, std::string t) { text = std::move(t); });
        runUntil([&text] { return text.has_value(); });
        return text.value_or("");
    }
    // Published, read back and settled: the state every change starts from.
    bool settled(int level) {
        return runUntil([this, level] {
            return row(kRow1, "level") == std::to_string(level) && frr.has(inBandwidth(level)) &&
                   stat("frr_state") == "ok";
        });
    }

    boost::asio::io_context io;
    Config cfg;
    DaemonOptions options;

  private:
    std::unique_ptr<fakes::FakeCounterSource> countersOwned_ =
        std::make_unique<fakes::FakeCounterSource>(io);
    std::unique_ptr<fakes::FakeFrr> frrOwned_ = std::make_unique<fakes::FakeFrr>(io);
    std::unique_ptr<fakes::FakeRedis> redisOwned_ = std::make_unique<fakes::FakeRedis>(io);

  protected:
    // The daemon owns them once started.
    fakes::FakeCounterSource& counters = *countersOwned_;
    fakes::FakeFrr& frr = *frrOwned_;
    fakes::FakeRedis& redis = *redisOwned_;
    fakes::FakeRouteFeed* routes = nullptr;
    fakes::FakeLinkProbes* probes = nullptr;
    fakes::FakeIntReports* ints = nullptr;
    fakes::FakeRouteTable kernelTable;
    std::unique_ptr<Daemon> daemon;  // last: goes first, while the loop and fakes exist
};

TEST_F(PathqdDaemon, UtilisationChangeRewritesTheRouteMapAndTheQualityRow) {
    start();
    ASSERT_TRUE(settled(20)) << running();
    size_t before = frr.runs.size();
    counters.ports["swp1"].txBps = 100e6;  // at capacity
    ASSERT_TRUE(runUntil([this] {
        return row(kRow1, "level") == "15" && frr.has(inBandwidth(15));
    })) << running();
    EXPECT_EQ(row(kRow1, "util"), "1.000");
    EXPECT_EQ(row(kRow1, "congestion"), "1.000");
    EXPECT_EQ(row(kRow1, "oper_status"), "up");
    // The level and the metrics at the change ride in the large community.
    auto lines = frr::RunningConfig::parse(running()).linesUnder(
        {kIn1}, "set large-community 65000:1:15 65000:2:1000 ");
    EXPECT_EQ(lines.size(), 1u) << running();
    // One vtysh call, to bgpd only, with the soft refresh after the lines.
    ASSERT_GT(frr.runs.size(), before);
    const auto& args = frr.runs[before];
    ASSERT_GE(args.size(), 4u);
    EXPECT_EQ(args[0], "-d");
    EXPECT_EQ(args[1], "bgpd");
    EXPECT_EQ(args.back(), "clear bgp ipv4 unicast swp1 soft in");
    EXPECT_TRUE(runUntil([this] { return stat("level_changes") == "2"; })) << stat("level_changes");
}

// A lossless link does not drop: it marks and pauses. Half-used (util below the knee, no
// queue), 10% of its packets marked CE is full congestion at the default ecn_ref; with the
// ECN input off the same link keeps its level. Then pauses received, then a storm.
TEST_F(PathqdDaemon, EcnMarksAndPausesLowerTheLevelAndTheRowSaysWhy) {
    counters.ports["swp1"].txBps = 50e6;
    counters.ports["swp1"].ecnShare = 0.0;
    start();
    ASSERT_TRUE(settled(20)) << running();
    EXPECT_EQ(row(kRow1, "ecn_source"), "qdisc");
    EXPECT_EQ(row(kRow1, "congestion_cause"), "none");
    counters.ports["swp1"].ecnShare = 0.2;
    ASSERT_TRUE(runUntil([this] {
        return row(kRow1, "level") == "15" && frr.has(inBandwidth(15));
    })) << running();
    EXPECT_EQ(row(kRow1, "congestion_cause"), "ecn");
    EXPECT_NEAR(std::stod(row(kRow1, "ecn_ratio")), 0.2, 0.05);  // whole packets per 5 ms
    EXPECT_EQ(row(kRow1, "drop_ratio"), "0.0000");
    // The same marks with the input off: back to full, the ratio still shown.
    cfg.model.ecnRefRatio = 0;
    daemon->applyConfig(cfg);
    ASSERT_TRUE(runUntil([this] { return row(kRow1, "level") == "20"; })) << running();
    EXPECT_EQ(row(kRow1, "congestion_cause"), "none");
    EXPECT_NEAR(std::stod(row(kRow1, "ecn_ratio")), 0.2, 0.05);  // whole packets per 5 ms
    // Pauses from the peer at half pfc_ref_pps: congestion 0.5, level 17.5 -> 18 (or 17).
    // (Rates high enough that whole frames per 5 ms period leave a small rounding error.)
    cfg.model.pauseRefPps = 50000;
    daemon->applyConfig(cfg);
    counters.ports["swp1"].pauseRxPps = 25000;
    ASSERT_TRUE(runUntil([this] { return row(kRow1, "congestion_cause") == "pause"; }));
    ASSERT_TRUE(runUntil([this] { return num(row(kRow1, "level")) <= 18; })) << running();
    EXPECT_NEAR(std::stod(row(kRow1, "pause_rx_pps")), 25000, 2500);
    counters.ports["swp1"].pfcStorm = true;
    ASSERT_TRUE(runUntil([this] { return row(kRow1, "level") == "15"; })) << running();
    EXPECT_EQ(row(kRow1, "congestion_cause"), "pfc_storm");
    EXPECT_EQ(row(kRow1, "pfc_storm"), "true");
}

TEST_F(PathqdDaemon, FailedReadsKeepTheLastLevelAndAreCounted) {
    counters.ports["swp1"].txBps = 100e6;
    start();
    ASSERT_TRUE(settled(15)) << running();
    size_t runs = frr.runs.size();
    counters.error = "netlink: no buffer space";
    counters.ports["swp1"].up = false;  // what a read would say: it must not be acted on
    ASSERT_TRUE(runUntil([this] { return num(stat("sample_errors")) >= 5; }));
    EXPECT_EQ(row(kRow1, "level"), "15");
    EXPECT_EQ(row(kRow1, "oper_status"), "up");
    EXPECT_EQ(frr.runs.size(), runs);
    EXPECT_TRUE(frr.has(inBandwidth(15)));
    // Reads work again: the port is down now, and that is published.
    counters.error.clear();
    EXPECT_TRUE(runUntil([this] {
        return row(kRow1, "oper_status") == "down" && row(kRow1, "level") == "0" &&
               frr.has(inBandwidth(1));
    })) << running();
}

TEST_F(PathqdDaemon, BgpdRestartReappliesWhatFrrLost) {
    start();
    ASSERT_TRUE(settled(20));
    ASSERT_TRUE(frr.has(kAttach1));
    frr.loseConfig();  // bgpd starts again from its saved config alone
    frr.configure({"router bgp 65000"});
    frr.restart("staticd");  // not one of ours
    runFor(40ms);
    EXPECT_FALSE(frr.has(kAttach1));
    frr.restart("bgpd");
    EXPECT_TRUE(runUntil([this] { return frr.has(kAttach1) && frr.has(inBandwidth(20)); }))
        << running();
    EXPECT_TRUE(runUntil([this] { return stat("frr_restarts") == "1"; })) << stat("frr_restarts");
    EXPECT_TRUE(frr.watching());
    daemon->stop();
    EXPECT_FALSE(frr.watching());
}

TEST_F(PathqdDaemon, RouteEventsRebuildTheWeightRows) {
    start();
    ASSERT_NE(routes, nullptr);
    EXPECT_EQ(routes->tables(), std::set<uint32_t>{254});
    routes->set(route("10.2.2.0/24", 186, 25, 75));
    routes->set(route("10.2.3.0/24", 186, 25, 75));
    routes->set(route("10.9.0.0/16", 3, 25, 75));  // not BGP's: not shown
    const std::string uneven = "PATH_WEIGHT_TABLE|swp1=25,swp2=75";
    const std::string even = "PATH_WEIGHT_TABLE|swp1=50,swp2=50";
    ASSERT_TRUE(runUntil([&] { return row(uneven, "prefixes") == "2"; }))
        << row(uneven, "prefixes");
    EXPECT_EQ(row(uneven, "nexthops"), "swp1=25 swp2=75");
    EXPECT_EQ(row(uneven, "sample"), "10.2.2.0/24,10.2.3.0/24");
    routes->set(route("10.2.2.0/24", 186, 50, 50));
    ASSERT_TRUE(
        runUntil([&] { return row(even, "prefixes") == "1" && row(uneven, "prefixes") == "1"; }));
    routes->remove(route("10.2.3.0/24", 186, 25, 75));
    EXPECT_TRUE(runUntil([&] { return !hasRow(uneven); }));
    EXPECT_TRUE(hasRow(even));
    // Coalesced per weights_interval_ms: at least the change's and the removal's.
    EXPECT_TRUE(runUntil([this] { return num(stat("weight_rebuilds")) >= 2; }));
}

TEST_F(PathqdDaemon, ConfigNeedingARestartIsRefusedAndTheRunningOneKept) {
    counters.ports["swp2"] = {.ifindex = 2};
    start();
    ASSERT_TRUE(settled(20));
    Config next = cfg;
    next.ports["swp2"] = downlink();
    next.probePort = 4000;  // needs a restart
    daemon->applyConfig(next);
    ASSERT_TRUE(runUntil([this] { return stat("config_rejected") == "1"; }));
    runFor(30ms);
    EXPECT_FALSE(hasRow("PATH_QUALITY_TABLE|swp2"));
    EXPECT_EQ(running().find("TWINRAIL-PQ-IN-swp2"), std::string::npos);
    EXPECT_EQ(stat("ports"), "1");
    // Without it the change goes in: swp2's route-maps are added, swp1's removed.
    next.probePort = cfg.probePort;
    next.ports.erase("swp1");
    daemon->applyConfig(next);
    EXPECT_TRUE(runUntil([this] {
        auto text = running();
        return text.find("TWINRAIL-PQ-IN-swp2") != std::string::npos &&
               text.find("TWINRAIL-PQ-IN-swp1") == std::string::npos &&
               text.find("TWINRAIL-PQ-OUT-swp1") == std::string::npos;
    })) << running();
    EXPECT_TRUE(runUntil(
        [this] { return row("PATH_QUALITY_TABLE|swp2", "level") == "20" && !hasRow(kRow1); }));
    EXPECT_EQ(stat("config_rejected"), "1");
}

TEST_F(PathqdDaemon, RedisDownAndUpRepublishesEveryRow) {
    start();
    ASSERT_TRUE(settled(20));
    redis.setUp(false);
    redis.hashes.clear();                                    // a Redis restarted without its data
    redis.hashes["PATH_QUALITY_TABLE|gone"]["level"] = "3";  // a row nobody owns
    redis.hashes["WARM_RESTART_TABLE|bgp"]["state"] = "reconciled";  // another process's
    size_t sent = redis.commands.size();
    counters.ports["swp1"].txBps = 100e6;
    // Routing does not wait for Redis.
    ASSERT_TRUE(runUntil([this] { return frr.has(inBandwidth(15)); })) << running();
    EXPECT_EQ(redis.commands.size(), sent);
    redis.setUp(true);
    EXPECT_TRUE(runUntil([this] {
        return row(kRow1, "level") == "15" && hasRow("PATHQD_STATS|global") &&
               !hasRow("PATH_QUALITY_TABLE|gone");
    }));
    // Said again to the Redis that forgot it; another process's row is left alone.
    EXPECT_EQ(row("WARM_RESTART_TABLE|pathqd", "state"), "reconciled");
    EXPECT_EQ(row("WARM_RESTART_TABLE|bgp", "state"), "reconciled");
}

TEST_F(PathqdDaemon, TheNeighboursUplinkLevelCapsTheOutboundBandwidth) {
    cfg.probePort = 50411;
    start();
    ASSERT_NE(probes, nullptr);
    EXPECT_EQ(probes->port, 50411);
    EXPECT_TRUE(probes->started);
    // Our level toward the leaf goes out in every probe on the link.
    ASSERT_TRUE(runUntil([this] { return probes->sent.count(1) > 0 && probes->sent[1] == 20; }));
    ASSERT_TRUE(settled(20));
    const Path out10{"route-map TWINRAIL-PQ-OUT-swp1 permit 10", "set extcommunity bandwidth 10"};
    EXPECT_TRUE(frr.has(out10));
    LinkProbes::PortView heard;
    heard.peerLevel = 6;
    heard.peerLevelAt = std::chrono::steady_clock::now();
    probes->views[1] = heard;
    EXPECT_TRUE(runUntil([this] {
        return row(kRow1, "peer_level") == "6" &&
               frr.has(
                   {"route-map TWINRAIL-PQ-OUT-swp1 permit 10", "set extcommunity bandwidth 6"}) &&
               frr.has(
                   {"route-map TWINRAIL-PQ-OUT-swp1 permit 1000", "set extcommunity bandwidth 6"});
    })) << running();
}

// After a restart FRR still holds the policy that counted the leaf's report: the first
// publish waits for that report: the bandwidth toward the leaf is never announced at full
// (10 of 20) and taken back. (No report: TheNeighboursUplinkLevelCapsTheOutboundBandwidth.)
TEST_F(PathqdDaemon, TheFirstPublishWaitsForTheNeighboursReport) {
    cfg.probePort = 50411;
    cfg.sampleInterval = 20ms;  // the wait is 10 periods: 200 ms
    start();
    ASSERT_NE(probes, nullptr);
    runFor(100ms);  // five periods sampled, the leaf not heard yet
    EXPECT_EQ(row(kRow1, "level"), "20");
    EXPECT_TRUE(frr.runs.empty());
    LinkProbes::PortView heard;
    heard.peerLevel = 6;
    heard.peerLevelAt = std::chrono::steady_clock::now();
    probes->views[1] = heard;
    ASSERT_TRUE(runUntil([this] {
        return frr.has(
            {"route-map TWINRAIL-PQ-OUT-swp1 permit 10", "set extcommunity bandwidth 6"});
    })) << running();
    for (const auto& run : frr.runs)
        for (const auto& arg : run) EXPECT_EQ(arg.find("bandwidth 10"), std::string::npos) << arg;
}

TEST_F(PathqdDaemon, IntQueueAndLatencyOverlayTheCounters) {
    cfg.intPort = 6790;
    cfg.ports["swp1"].intPortId = 5;
    start();
    ASSERT_NE(ints, nullptr);
    EXPECT_EQ(ints->port, 6790);
    EXPECT_TRUE(ints->started);
    EXPECT_EQ(ints->mapping.ports.at(5), "swp1");
    EXPECT_EQ(ints->trust.sources, cfg.intSources);
    ASSERT_TRUE(settled(20));
    // 2500 B queued at 100 Mb/s is 200 us, twice queue_ref_us: full congestion.
    IntObservation seen;
    seen.latencySeconds = 30e-6;
    seen.queueBytes = 2500.0;
    ints->observations["swp1"] = seen;
    EXPECT_TRUE(runUntil([this] {
        return row(kRow1, "level") == "15" && row(kRow1, "queue_source") == "int" &&
               row(kRow1, "latency_source") == "int" && frr.has(inBandwidth(15));
    })) << row(kRow1, "level")
        << row(kRow1, "queue_source");
    // A new port id reaches the collector without a restart.
    Config next = cfg;
    next.ports["swp1"].intPortId = 7;
    daemon->applyConfig(next);
    EXPECT_EQ(ints->mapping.ports.count(5), 0u);
    EXPECT_EQ(ints->mapping.ports.at(7), "swp1");
}

TEST_F(PathqdDaemon, UnreachableFrrIsRetriedUntilItAnswers) {
    frr.reachable = false;
    start();
    ASSERT_TRUE(runUntil([this] { return stat("frr_state") == "unreachable"; }));
    EXPECT_TRUE(frr.runs.empty());
    frr.reachable = true;
    EXPECT_TRUE(settled(20)) << running();
}

TEST_F(PathqdDaemon, PublishOffDropsThePublisherWithItsReplyInFlight) {
    counters.ports["swp2"] = {.ifindex = 2};
    start();
    ASSERT_TRUE(settled(20));
    Config next = cfg;
    next.ports["swp2"] = downlink();
    size_t before = frr.runs.size();
    daemon->applyConfig(next);  // a batch goes out at once; its reply is still queued
    ASSERT_GT(frr.runs.size(), before);
    next.publish = false;
    daemon->applyConfig(next);  // the publisher goes; the reply must find nothing
    size_t runs = frr.runs.size();
    counters.ports["swp1"].txBps = 100e6;
    ASSERT_TRUE(runUntil([this] { return row(kRow1, "level") == "15"; }));
    runFor(20ms);
    EXPECT_EQ(frr.runs.size(), runs);
    EXPECT_TRUE(frr.has(inBandwidth(20)));  // FRR is left as it was
    EXPECT_FALSE(frr.has(inBandwidth(15)));
    EXPECT_TRUE(runUntil([this] { return stat("frr_state") == "off"; }));
    next.publish = true;  // back on: a new publisher catches up
    daemon->applyConfig(next);
    EXPECT_TRUE(runUntil([this] { return frr.has(inBandwidth(15)); })) << running();
}

TEST_F(PathqdDaemon, WeightAuditRepairsDivergedRoutesAndSurvivesOddJson) {
    cfg.weightAuditInterval = 3600s;  // only FRR restarts run it here
    cfg.weightAuditRepair = true;
    netlink::HostRoute installed{*IpAddr::parse("10.2.2.0"), 0, 254, 186};
    installed.prefixLen = 24;
    kernelTable.routes[installed.dst] = installed;
    const std::string lookup = "show bgp ipv4 unicast 10.2.2.0/24 json";
    // BGP says 25:75 (FRR 8.4's rule), the kernel forwards 50:50.
    frr.showAnswers[lookup] = R"json({"paths": [
        {"valid": true, "multipath": true, "peer": {"interface": "swp1"},
         "extendedCommunity": {"string": "LB:65000:3125000 (25.000 Mbps)"
}
},
        {"valid": true, "multipath": true, "peer": {"interface": "swp2"},
         "extendedCommunity": {"string": "LB:65000:9375000 (75.000 Mbps)"}}]
})json";
    start();
    routes->set(route("10.2.2.0/24", 186, 50, 50));
    frr.restart("zebra");  // an audit runs soon after FRR restarts
    ASSERT_TRUE(runUntil([this] { return stat("weight_audit") == "diverged"; }))
        << stat("weight_audit");
    EXPECT_EQ(stat("weight_audit_diverged_routes"), "1");
    EXPECT_EQ(stat("weight_audit_repairs"), "1");
    EXPECT_EQ(kernelTable.routes.count(installed.dst), 0u);  // deleted for zebra to reinstall
    // JSON of another shape (a string where bgpd writes a bool) is counted; the loop goes on.
    frr.showAnswers[lookup] = R"({"paths": [{"valid": "yes", "peer": {"interface": 3}}]})";
    frr.restart("zebra");
    ASSERT_TRUE(runUntil([this] {
        return stat("weight_audit") == "unreachable" && stat("weight_audit_errors") == "1";
    })) << stat("weight_audit");
    long samples = num(stat("samples"));
    EXPECT_TRUE(runUntil([this, samples] { return num(stat("samples")) > samples + 3; }));
}

TEST_F(PathqdDaemon, BgpSessionsBecomeRowsAndOddJsonIsCounted) {
    cfg.bgpPeersInterval = 20ms;
    const std::string show = "show bgp neighbors json";
    frr.showAnswers[show] = R"({"swp1": {"bgpState": 5}})";
    start();
    ASSERT_TRUE(runUntil([this] { return num(stat("bgp_peer_errors")) >= 1; }));
    EXPECT_FALSE(hasRow("BGP_PEER_STATE_TABLE|swp1"));
    frr.showAnswers[show] = R"({"swp1": {"bgpState": "Established", "remoteAs": 65101,
        "remoteRouterId": "10.0.0.11", "bgpTimerUpEstablishedEpoch": 1700000000}})";
    const std::string peer = "BGP_PEER_STATE_TABLE|swp1";
    ASSERT_TRUE(runUntil([&] { return row(peer, "state") == "Established"; }));
    EXPECT_EQ(row(peer, "remote_as"), "65101");
    EXPECT_EQ(row(peer, "remote_router_id"), "10.0.0.11");
    EXPECT_EQ(row(peer, "up_since"), "1700000000");
}

}  // namespace
}  // namespace twinrail::pathqd
