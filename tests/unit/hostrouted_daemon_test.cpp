// hostrouted's orchestration against fakes of its edges (tests/fakes): no root, no
// namespaces, no FRR or Redis processes. Each test plays kernel events, frames, FRR
// restarts or Redis outages into a real Daemon and checks what it wrote to each edge.
// The real edges' contracts are tested in tests/integration (netlink_it, arp_guard_it,
// redis_auth_it, hostrouted_*_it).
#include "hostrouted_harness.h"

using namespace twinrail;
using namespace twinrail::hostrouted;
using namespace twinrail::hostrouted::fixture;

namespace {

using HostroutedDaemon = HostroutedHarness;

TEST_F(HostroutedDaemon, ANeighborOnAManagedPortBecomesAHostRouteInItsTable) {
    startDaemon(configOf(baseConfig()));
    kernel->setNeighbor(neighbor(kSwp1, "10.0.1.10", kHostA));
    settle();
    ASSERT_EQ(routes->routedVia(ip("10.0.1.10")), kSwp1);
    EXPECT_EQ(routes->routes[ip("10.0.1.10")].table, 10U);
    EXPECT_EQ(routes->routes[ip("10.0.1.10")].protocol, 201);
    EXPECT_EQ(stateField("HOST_ROUTE_TABLE|10.0.1.10", "ifname"), "swp1");
    // The uplink is not managed: a neighbor there is not a host.
    kernel->setNeighbor(neighbor(kUplink, "10.0.1.77", kHostB));
    settle();
    EXPECT_EQ(routes->routedVia(ip("10.0.1.77")), 0);
}

TEST_F(HostroutedDaemon, StartAdoptsAPreviousRunsRoutesAndRemovesOnlyTheGoneHosts) {
    seedNeighbors = {neighbor(kSwp1, "10.0.1.10", kHostA)};
    leftoverRoutes = {{ip("10.0.1.10"), kSwp1, 10, 201, 0, 0},
                      {ip("10.0.1.99"), kSwp1, 10, 201, 0, 0}};
    startDaemon(configOf(baseConfig()));
    EXPECT_EQ(routes->routedVia(ip("10.0.1.10")), kSwp1);
    EXPECT_EQ(routes->routedVia(ip("10.0.1.99")), 0) << "host gone while we were down";
    // The live host's route was adopted as it was, not rewritten (no traffic hit).
    EXPECT_EQ(routes->writes, 1U) << "only the removal";
    // SONiC's warm-boot finalizer waits for this (the manifest says reconciles: true).
    EXPECT_EQ(stateField("WARM_RESTART_TABLE|hostrouted", "state"), "reconciled");
}

TEST_F(HostroutedDaemon, APortGoingDownWithdrawsItsHostsAtOnceAndUpAsksForASnapshot) {
    seedNeighbors = {neighbor(kSwp1, "10.0.1.10", kHostA), neighbor(kSwp2, "10.0.2.10", kHostB)};
    startDaemon(configOf(baseConfig()));
    ASSERT_EQ(routes->routedVia(ip("10.0.1.10")), kSwp1);
    kernel->setLink(link(kSwp1, "swp1", false));
    settle(1ms);
    EXPECT_EQ(routes->routedVia(ip("10.0.1.10")), 0);
    EXPECT_EQ(routes->routedVia(ip("10.0.2.10")), kSwp2) << "the other port's host stays";
    EXPECT_TRUE(kernel->requested().empty());
    kernel->setLink(link(kSwp1, "swp1", true));
    settle(300ms);  // the snapshot request is debounced (200 ms)
    ASSERT_EQ(kernel->requested().size(), 1U);
    EXPECT_EQ(kernel->requested()[0], "port swp1 up");
    kernel->runSnapshots();
    settle();
    EXPECT_EQ(routes->routedVia(ip("10.0.1.10")), kSwp1);
}

TEST_F(HostroutedDaemon, ASnapshotSweepsHostsTheEventStreamLost) {
    seedNeighbors = {neighbor(kSwp1, "10.0.1.10", kHostA), neighbor(kSwp1, "10.0.1.11", kHostB)};
    startDaemon(configOf(baseConfig()));
    ASSERT_EQ(routes->routedVia(ip("10.0.1.11")), kSwp1);
    kernel->removeNeighborSilently(kSwp1, ip("10.0.1.11"));  // ENOBUFS: the event was lost
    kernel->setNeighborSilently(neighbor(kSwp2, "10.0.2.20", kHostB));
    settle();
    EXPECT_EQ(routes->routedVia(ip("10.0.1.11")), kSwp1) << "nothing told the daemon yet";
    kernel->snapshotNow();
    settle();
    EXPECT_EQ(routes->routedVia(ip("10.0.1.11")), 0);
    EXPECT_EQ(routes->routedVia(ip("10.0.2.20")), kSwp2);
    EXPECT_EQ(routes->routedVia(ip("10.0.1.10")), kSwp1);
}

TEST_F(HostroutedDaemon, AnAbortedSnapshotSweepsNothingAndKeepsThePortsAddresses) {
    seedNeighbors = {neighbor(kSwp1, "10.0.1.10", kHostA)};
    startDaemon(configOf(baseConfig()));
    kernel->removeNeighborSilently(kSwp1, ip("10.0.1.10"));
    kernel->abortNextSnapshot();
    kernel->snapshotNow();
    settle();
    EXPECT_EQ(routes->routedVia(ip("10.0.1.10")), kSwp1) << "partial data must not withdraw";
    // The addresses survived the abort: a new host in the subnet is still accepted.
    kernel->setNeighbor(neighbor(kSwp1, "10.0.1.12", kHostB));
    settle();
    EXPECT_EQ(routes->routedVia(ip("10.0.1.12")), kSwp1);
    kernel->snapshotNow();  // a whole one does sweep
    settle();
    EXPECT_EQ(routes->routedVia(ip("10.0.1.10")), 0);
}

TEST_F(HostroutedDaemon, AKernelRefusalIsRetriedNotBelievedInstalled) {
    startDaemon(configOf(baseConfig()));
    routes->failNext[ip("10.0.1.10")] = ENETUNREACH;
    kernel->setNeighbor(neighbor(kSwp1, "10.0.1.10", kHostA));
    settle();
    EXPECT_EQ(routes->routedVia(ip("10.0.1.10")), 0);
    EXPECT_NE(stateField("HOST_ROUTE_TABLE|10.0.1.10", "state"), "installed");
    routes->failNext.clear();
    kernel->snapshotNow();
    settle();  // seen again: written again
    EXPECT_EQ(routes->routedVia(ip("10.0.1.10")), kSwp1);
}

TEST_F(HostroutedDaemon, KeepaliveProbesSilentHostsAndWithdrawsThemAfterTheHoldtime) {
    auto cfg = configOf(baseConfig());
    cfg.keepalive = 40ms;
    cfg.holdtime = 120ms;
    seedNeighbors = {neighbor(kSwp1, "10.0.1.10", kHostA, NUD_STALE),
                     neighbor(kSwp1, "10.0.1.11", kHostB, NUD_STALE)};
    startDaemon(cfg);
    ASSERT_EQ(routes->routedVia(ip("10.0.1.10")), kSwp1);
    // 10.0.1.10 answers every probe, from its own MAC; 10.0.1.11 never does.
    for (int i = 0; i < 10; ++i) {
        settle(30ms);
        prober->heard(kSwp1, ip("10.0.1.10"), kHostA);
    }
    EXPECT_GE(prober->probesTo(ip("10.0.1.11")), 1U);
    EXPECT_EQ(prober->sent.front().ourIp, ip("10.0.1.1")) << "probes come from our address";
    EXPECT_EQ(routes->routedVia(ip("10.0.1.10")), kSwp1);
    EXPECT_EQ(routes->routedVia(ip("10.0.1.11")), 0);
}

TEST_F(HostroutedDaemon, AClaimOnAPortTheAddressIsNotBoundToIsRefusedAndPublished) {
    auto doc = baseConfig();
    doc["HOSTROUTED_BINDING"] = {{"10.0.1.10", {{"ifname", "swp1"}}}};
    startDaemon(configOf(doc));
    // swp1 is the bound port: the ARP/ND guard goes on it, through tc.
    bool guarded = false;
    for (const auto& argv : tc->runs) {
        guarded |=
            argv.size() > 5 && argv[0] == kTcProgram && argv[1] == "filter" && argv[4] == "swp1";
    }
    EXPECT_TRUE(guarded);
    kernel->setNeighbor(neighbor(kSwp1, "10.0.1.10", kHostA));
    settle();
    ASSERT_EQ(routes->routedVia(ip("10.0.1.10")), kSwp1);
    // Another server claims the address from swp2, with its own MAC.
    kernel->setNeighbor(neighbor(kSwp2, "10.0.1.10", kHostB));
    prober->heard(kSwp2, ip("10.0.1.10"), kHostB);
    settle(100ms);
    EXPECT_EQ(routes->routedVia(ip("10.0.1.10")), kSwp1) << "the victim keeps its traffic";
    EXPECT_TRUE(stateField("HOST_CLAIM_TABLE|10.0.1.10|swp2", "reason").has_value());
    EXPECT_EQ(stateField("HOST_CLAIM_TABLE|10.0.1.10|swp2", "mac"), formatMac(kHostB));
}

TEST_F(HostroutedDaemon, ProxyArpIsWrittenForManagedPortsOnlyAndItsDelayRestored) {
    auto doc = baseConfig();
    doc["HOSTROUTED"]["global"]["proxy_arp"] = "true";
    startDaemon(configOf(doc));
    EXPECT_EQ(sysctl.read("net/ipv4/conf/swp1/proxy_arp"), "1");
    EXPECT_EQ(sysctl.read("net/ipv4/neigh/swp1/proxy_delay"), "0");
    EXPECT_EQ(sysctl.read("net/ipv4/conf/uplink/proxy_arp"), "0");
    doc["HOSTROUTED"]["global"]["proxy_arp"] = "false";
    daemon->applyConfig(configOf(doc));
    settle(300ms);
    kernel->runSnapshots();
    settle();
    EXPECT_EQ(sysctl.read("net/ipv4/conf/swp1/proxy_arp"), "0");
    EXPECT_EQ(sysctl.read("net/ipv4/neigh/swp1/proxy_delay"), "80") << "the port's own value";
}

TEST_F(HostroutedDaemon, ABadRuntimeConfigIsRejectedAndTheRunningOneKept) {
    seedNeighbors = {neighbor(kSwp1, "10.0.1.10", kHostA)};
    startDaemon(configOf(baseConfig()));
    auto doc = baseConfig();
    doc["HOSTROUTED"]["global"]["route_table"] = "20";  // would move every route
    daemon->applyConfig(configOf(doc));
    settle(300ms);
    EXPECT_TRUE(kernel->requested().empty()) << "nothing re-evaluated";
    EXPECT_EQ(routes->routes[ip("10.0.1.10")].table, 10U);
    settle(1100ms);  // the stats row carries the count
    EXPECT_EQ(stateField("HOST_ROUTE_STATS|global", "config_rejected"), "1");
    // A good config that drops the port withdraws its hosts, after one re-evaluation.
    auto none = baseConfig();
    none["HOSTROUTED_INTERFACE"] = {{"swp2", json::object()}};
    daemon->applyConfig(configOf(none));
    settle(300ms);
    ASSERT_EQ(kernel->requested(), std::vector<std::string>{"config change"});
    kernel->runSnapshots();
    settle();
    EXPECT_EQ(routes->routedVia(ip("10.0.1.10")), 0);
}

TEST_F(HostroutedDaemon, FrrLinesAreAddedAndAddedAgainAfterBgpdRestartsWithoutThem) {
    auto doc = baseConfig();
    doc["HOSTROUTED"]["global"]["manage_frr"] = "true";
    DaemonOptions options;
    options.frrRecheckDelay = 10ms;
    startDaemon(configOf(doc), options);
    const std::vector<std::string> redistribute{"router bgp 65101", "address-family ipv4 unicast",
                                                "redistribute table 10"};
    ASSERT_TRUE(frr->has(redistribute));
    ASSERT_TRUE(frr->watching());
    frr->loseConfig();  // a restart with a saved config that lacks our lines
    frr->configure({"router bgp 65101"});
    frr->restart("bgpd");
    settle(100ms);
    EXPECT_TRUE(frr->has(redistribute));
    // Without manage_frr the daemon only reports: it never writes FRR's config.
    frr->loseConfig();
    frr->configure({"router bgp 65101"});
    doc["HOSTROUTED"]["global"]["manage_frr"] = "false";
    daemon->applyConfig(configOf(doc));
    settle(100ms);
    EXPECT_FALSE(frr->has(redistribute));
    settle(1100ms);
    EXPECT_EQ(stateField("HOST_ROUTE_STATS|global", "frr_config"), "missing");
}

TEST_F(HostroutedDaemon, RedisComingBackGetsEveryRowAgain) {
    seedNeighbors = {neighbor(kSwp1, "10.0.1.10", kHostA)};
    startDaemon(configOf(baseConfig()));
    ASSERT_TRUE(stateField("HOST_ROUTE_TABLE|10.0.1.10", "ifname").has_value());
    redis->setUp(false);
    redis->hashes.clear();  // a Redis restarted without persistence
    kernel->setNeighbor(neighbor(kSwp2, "10.0.2.10", kHostB));
    settle();
    EXPECT_EQ(routes->routedVia(ip("10.0.2.10")), kSwp2) << "routing never waits for Redis";
    redis->setUp(true);
    settle(200ms);
    EXPECT_EQ(stateField("HOST_ROUTE_TABLE|10.0.1.10", "ifname"), "swp1");
    EXPECT_EQ(stateField("HOST_ROUTE_TABLE|10.0.2.10", "ifname"), "swp2");
}

TEST_F(HostroutedDaemon, StopLeavesEveryRouteAndGuardInPlace) {
    auto doc = baseConfig();
    doc["HOSTROUTED_BINDING"] = {{"10.0.1.10", {{"ifname", "swp1"}}}};
    seedNeighbors = {neighbor(kSwp1, "10.0.1.10", kHostA), neighbor(kSwp2, "10.0.2.10", kHostB)};
    startDaemon(configOf(doc));
    size_t tcRuns = tc->runs.size();
    size_t writes = routes->writes;
    daemon->stop();  // the destructor stops it the same way
    settle();        // anything already queued runs to its end
    EXPECT_EQ(routes->writes, writes);
    EXPECT_EQ(routes->routes.size(), 2U);
    EXPECT_EQ(tc->runs.size(), tcRuns) << "no filter removed: a restart must not open the port";
}

}  // namespace
