// hostrouted as operators run it: state in STATE_DB, Redis outages, CONFIG_DB changes,
// hostile neighbor storms, bad config, and the FRR configuration check.
#include <signal.h>

#include <algorithm>

#include <thread>

#include "hostrouted_fixture.h"

namespace twinrail::it {

constexpr int kStateDb = 6;
constexpr int kConfigDb = 4;

TEST_F(HostroutedFabric, StateDbShowsHostsAndSurvivesRedisRestart) {
    auto& r = redis();
    auto& d =
        startHostrouted({"--config", writeConfig(baseConfig()), "--redis-socket", r.socket()});
    hostSpeaks("h1", "10.1.1.1");
    auto row = [&r](const std::string& ip) {
        return r.cli(kStateDb, {"HGETALL", "HOST_ROUTE_TABLE|" + ip});
    };
    ASSERT_TRUE(waitUntil([&row] { return contains(row("10.1.1.10"), "installed"); }, 10s))
        << d.log();
    auto fields = row("10.1.1.10");
    EXPECT_TRUE(contains(fields, "swp3"));
    EXPECT_TRUE(contains(fields, "ipv4"));
    EXPECT_TRUE(contains(fields, "local"));
    EXPECT_TRUE(contains(fields, "since"));
    EXPECT_TRUE(waitUntil(
        [&r] {
            return contains(r.cli(kStateDb, {"HGET", "HOST_ROUTE_STATS|global", "routes"}), "1");
        },
        5s));
    // h1 answers the keepalive probes (every 0.5 s here), and the replies are counted.
    EXPECT_TRUE(waitUntil(
        [&r] {
            auto replies = r.cli(kStateDb, {"HGET", "HOST_ROUTE_STATS|global", "probe_replies"});
            return !replies.empty() && replies != "0\n" && replies != "\n";
        },
        5s))
        << r.cli(kStateDb, {"HGETALL", "HOST_ROUTE_STATS|global"});
    EXPECT_EQ(r.cli(kStateDb, {"HGET", "HOST_ROUTE_STATS|global", "probe_send_errors"}), "0\n");

    r.stop();
    // Routing does not depend on Redis: a host learned while it is down gets its route.
    exec("l1", {"ip", "neigh", "add", "10.1.1.60", "lladdr", "02:00:00:00:00:60", "dev", "swp3",
                "nud", "permanent"});
    EXPECT_TRUE(waitUntil(
        [this] {
            return routeIn("l2", {"ip", "route", "show", "10.1.1.60"}, "10.1.1.60");
        },
        10s));
    ASSERT_TRUE(d.running());

    r.start();  // empty: everything must be republished
    EXPECT_TRUE(waitUntil(
        [&row] {
            return contains(row("10.1.1.10"), "installed") &&
                   contains(row("10.1.1.60"), "installed");
        },
        10s))
        << d.log();
    // A row nobody owns (left by an older run, or written by hand) is removed when
    // hostrouted resyncs after its connection drops.
    r.cli(kStateDb, {"HSET", "HOST_ROUTE_TABLE|10.1.1.99", "state", "installed"});
    ASSERT_TRUE(contains(row("10.1.1.99"), "installed"));
    r.cli(kStateDb, {"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
    EXPECT_TRUE(waitUntil([&row] { return !contains(row("10.1.1.99"), "state"); }, 10s)) << d.log();
    EXPECT_TRUE(contains(row("10.1.1.10"), "installed"));
    EXPECT_TRUE(d.running());
}

TEST_F(HostroutedFabric, NeighborStormIsCappedCountedAndSurvived) {
    auto& r = redis();
    auto cfg = baseConfig("swp*");
    cfg["HOSTROUTED_INTERFACE"] = {{"swp3", nlohmann::json::object()},
                                   {"swp4", nlohmann::json::object()}};
    cfg["HOSTROUTED"]["global"]["max_routes_per_port"] = "100";
    // The fake hosts below never answer probes; with probing on they would (correctly)
    // be withdrawn after the holdtime. This test is about the caps.
    cfg["HOSTROUTED"]["global"]["keepalive"] = "0";
    auto& d = startHostrouted({"--config", writeConfig(cfg), "--redis-socket", r.socket()});
    // 900 neighbors appear on swp4 at once, as a host ARPing for a /16 would cause (the
    // kernel itself stops creating entries at gc_thresh3, 1024 by default).
    std::string batch;
    for (int i = 0; i < 900; ++i) {
        batch += "neigh add 10.8." + std::to_string(1 + i / 250) + "." +
                 std::to_string(1 + i % 250) +
                 " lladdr 02:00:00:00:" + std::to_string(10 + i / 250) + ":" +
                 std::to_string(10 + i % 80) + " dev swp4 nud reachable\n";
    }
    std::ofstream(dir_ + "/storm.batch") << batch;
    exec("l1", {"ip", "-batch", dir_ + "/storm.batch"});
    ASSERT_TRUE(waitUntil(
        [&r] {
            return r.cli(kStateDb, {"HGET", "HOST_ROUTE_STATS|global", "refused"}) == "800\n";
        },
        15s))
        << r.cli(kStateDb, {"HGETALL", "HOST_ROUTE_STATS|global"});
    auto swp4Routes = exec("l1", {"ip", "route", "show", "table", "10", "dev", "swp4"});
    EXPECT_EQ(std::count(swp4Routes.begin(), swp4Routes.end(), '\n'), 100);
    EXPECT_TRUE(d.running());
    EXPECT_TRUE(contains(d.log(), "refused 800 new hosts")) << d.log();
    // Other ports are unaffected by one port's storm.
    hostSpeaks("h1", "10.1.1.1");
    EXPECT_TRUE(waitUntil(
        [this] {
            return routeIn("l2", {"ip", "route", "show", "10.1.1.10"}, "10.1.1.10");
        },
        10s));
}

TEST_F(HostroutedFabric, BadConfigFileExits78NamingTheField) {
    auto cfg = baseConfig();
    cfg["HOSTROUTED"]["global"]["holdtime"] = "soon";
    lab::ChildProcess bad({"ip", "netns", "exec", fabric_->ns("l1"), HOSTROUTED_BIN, "--config",
                           writeConfig(cfg, "bad.json"), "--no-frr-check"},
                          dir_ + "/bad.log");
    EXPECT_EQ(bad.wait(10s), 78);
    EXPECT_TRUE(contains(bad.log(), "HOSTROUTED|global field holdtime")) << bad.log();
    EXPECT_TRUE(contains(bad.log(), "<3>")) << "errors carry the systemd priority prefix";
}

TEST_F(HostroutedFabric, ConfigDbDrivesTheDaemonLive) {
    auto& r = redis();
    r.cli(kConfigDb,
          {"HSET", "HOSTROUTED|global", "keepalive", "0.5", "holdtime", "2", "manage_frr", "true"});
    r.cli(kConfigDb, {"HSET", "HOSTROUTED_INTERFACE|swp3", "NULL", "NULL"});
    auto& d = startHostrouted({"--redis-socket", r.socket()});
    hostSpeaks("h1", "10.1.1.1");
    ASSERT_TRUE(waitUntil(
        [this] {
            return routeIn("l2", {"ip", "route", "show", "10.1.1.10"}, "10.1.1.10");
        },
        10s))
        << d.log();
    // A bad runtime value is rejected with its key and field; the daemon keeps going.
    r.cli(kConfigDb, {"HSET", "HOSTROUTED|global", "holdtime", "never"});
    EXPECT_TRUE(
        waitUntil([&d] { return contains(d.log(), "HOSTROUTED|global field holdtime"); }, 5s))
        << d.log();
    EXPECT_TRUE(d.running());
    r.cli(kConfigDb, {"HSET", "HOSTROUTED|global", "holdtime", "2"});
    // Removing the port from CONFIG_DB withdraws its host routes, live.
    r.cli(kConfigDb, {"DEL", "HOSTROUTED_INTERFACE|swp3"});
    EXPECT_TRUE(waitUntil(
        [this] {
            return !routeIn("l2", {"ip", "route", "show", "10.1.1.10"}, "10.1.1.10");
        },
        5s))
        << d.log();
    r.cli(kConfigDb, {"HSET", "HOSTROUTED_INTERFACE|swp*", "NULL", "NULL"});
    EXPECT_TRUE(waitUntil(
        [this] {
            hostSpeaks("h1", "10.1.1.1");
            return routeIn("l2", {"ip", "route", "show", "10.1.1.10"}, "10.1.1.10");
        },
        10s))
        << d.log();
}

TEST_F(HostroutedFabric, FrrCheckNamesMissingLinesAndManageAddsOnlyThose) {
    auto cfg = baseConfig();
    cfg["HOSTROUTED"]["global"]["manage_frr"] = "false";
    auto& check = startHostrouted({"--config", writeConfig(cfg, "check.json")}, "l2");
    ASSERT_TRUE(waitUntil([&check] { return contains(check.log(), "set manage_frr=true"); }, 10s))
        << check.log();
    auto log = check.log();
    EXPECT_TRUE(contains(
        log, "FRR config missing (host routes will not be advertised): ip import-table 10"));
    EXPECT_TRUE(contains(log, "router bgp / address-family ipv4 unicast / redistribute table 10"));
    check.stop();
    auto before = fabric_->vtysh("l2", "show running-config");
    cfg["HOSTROUTED"]["global"]["manage_frr"] = "true";
    auto& manage = startHostrouted({"--config", writeConfig(cfg, "manage.json")}, "l2");
    ASSERT_TRUE(
        waitUntil([&manage] { return contains(manage.log(), "configuration present"); }, 15s))
        << manage.log();
    auto after = fabric_->vtysh("l2", "show running-config");
    EXPECT_TRUE(contains(after, "ip import-table 10"));
    // Everything that was there before is still there, unchanged.
    std::istringstream lines(before);
    for (std::string line; std::getline(lines, line);) {
        if (!line.empty() && line != "!") {
            EXPECT_TRUE(contains(after, line)) << line;
        }
    }
    // A second start finds nothing to add.
    manage.stop();
    auto& again = startHostrouted({"--config", writeConfig(cfg, "manage.json")}, "l2");
    ASSERT_TRUE(
        waitUntil([&again] { return contains(again.log(), "configuration present"); }, 15s));
    EXPECT_FALSE(contains(again.log(), "FRR: added"));
}

}  // namespace twinrail::it

namespace twinrail::it {

// systemd stops the daemon with SIGTERM on every restart and upgrade: it must exit 0
// every time (a crash at exit once hid a use-after-free) and leave the routes in place.
TEST_F(HostroutedFabric, SigtermStopsCleanlyEveryTimeAndKeepsRoutes) {
    auto& r = redis();
    auto cfg = baseConfig();
    std::string path = writeConfig(cfg);
    hostSpeaks("h1", "10.1.1.1");
    for (int i = 0; i < 10; ++i) {
        lab::ChildProcess d(
            {"ip", "netns", "exec", fabric_->ns("l1"), HOSTROUTED_BIN, "--frr-pathspace",
             fabric_->ns("l1"), "--config", path, "--redis-socket", r.socket()},
            dir_ + "/sigterm-" + std::to_string(i) + ".log", {.notify = true});
        ASSERT_TRUE(d.waitReady(20s)) << d.log();
        if (i == 0) {
            ASSERT_TRUE(waitUntil(
                [this] {
                    return routeIn("l1", {"ip", "route", "show", "table", "10"}, "10.1.1.10");
                },
                10s))
                << d.log();
        }
        // Some runs are stopped at once, some after their timers and Redis have run.
        std::this_thread::sleep_for(std::chrono::milliseconds(100 * (i % 4)));
        d.signal(SIGTERM);
        auto rc = d.wait(10s);
        ASSERT_TRUE(rc.has_value()) << "run " << i << " did not exit\n" << d.log();
        EXPECT_EQ(*rc, 0) << "run " << i << "\n" << d.log();
        EXPECT_FALSE(contains(d.log(), "AddressSanitizer")) << d.log();
        EXPECT_TRUE(routeIn("l1", {"ip", "route", "show", "table", "10"}, "10.1.1.10"))
            << "run " << i;
    }
}

}  // namespace twinrail::it
