// hostrouted end to end: kernel neighbors on l1 become host routes that l2 learns
// through BGP via the spine, and go away when the host does.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "hostrouted_fixture.h"

namespace twinrail::it {

const lab::Argv kL1Table{"ip", "route", "show", "table", "10"};
const lab::Argv kL2V4{"ip", "route", "show", "10.1.1.10"};
const lab::Argv kL2V6{"ip", "-6", "route", "show", "2001:db8:1::10"};

namespace {
// Stands in for systemd's notify socket: collects what the daemon reports.
struct NotifySocket {
    int fd;
    std::string path;
    explicit NotifySocket(std::string p) : fd(socket(AF_UNIX, SOCK_DGRAM, 0)), path(std::move(p)) {
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
        (void)bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
        timeval tv{0, 200000};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    }
    ~NotifySocket() { close(fd); }
    std::string drain() {
        std::string all;
        char buf[512];
        for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;)
            all.append(buf, static_cast<size_t>(n)) += "\n";
        return all;
    }
};
}  // namespace

TEST_F(HostroutedFabric, HostRoutesReachTheFarLeafOverBgp) {
    NotifySocket notify(dir_ + "/notify.sock");
    setenv("NOTIFY_SOCKET", notify.path.c_str(), 1);
    setenv("WATCHDOG_USEC", "400000", 1);
    auto cfg = baseConfig();
    cfg["HOSTROUTED"]["global"]["proxy_arp"] = "true";
    // The test's own NOTIFY_SOCKET, drained only for the first 3 s below: once its queue is
    // full, a blocking sd_notify would freeze the daemon (it once did), and no host route
    // would follow.
    startHostrouted({"--config", writeConfig(cfg)}, "l1", false);
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    std::string notes;
    EXPECT_TRUE(waitUntil(
        [&notes, &notify] {
            notes += notify.drain();
            return contains(notes, "READY=1") && contains(notes, "WATCHDOG=1");
        },
        3s))
        << notes;
    EXPECT_EQ(exec("l1", {"cat", "/proc/sys/net/ipv4/conf/swp3/proxy_arp"}), "1\n");
    EXPECT_EQ(exec("l1", {"cat", "/proc/sys/net/ipv4/conf/swp4/proxy_arp"}), "0\n");  // not managed
    hostSpeaks("h1", "10.1.1.1");
    hostSpeaks("h1", "2001:db8:1::1");
    ASSERT_TRUE(
        waitUntil([this] { return routeIn("l1", kL1Table, "10.1.1.10 dev swp3 proto 201"); }, 10s))
        << exec("l1", {"ip", "neigh"}) << exec("l1", kL1Table);
    ASSERT_TRUE(waitUntil([this] { return routeIn("l2", kL2V4, "10.1.1.10 nhid"); }, 10s))
        << exec("l2", {"ip", "route"}) << fabric_->vtysh("l1", "show running-config");
    ASSERT_TRUE(waitUntil([this] { return routeIn("l2", kL2V6, "2001:db8:1::10 nhid"); }, 10s))
        << exec("l2", {"ip", "-6", "route"}) << exec("l1", {"ip", "-6", "route"})
        << exec("l1", {"ip", "-6", "neigh"});
    // The /32 is a BGP route, not the leaf's connected subnet.
    EXPECT_TRUE(routeIn("l2", kL2V4, "proto bgp"));
    // manage_frr added exactly the lines hostrouted needs.
    auto running = fabric_->vtysh("l1", "show running-config");
    EXPECT_TRUE(contains(running, "ip import-table 10")) << running;
    EXPECT_TRUE(contains(running, "redistribute table 10")) << running;
    EXPECT_TRUE(contains(running, "redistribute kernel route-map TWINRAIL-HOSTROUTES-V6"))
        << running;
    // Traffic follows: h2 reaches h1 through the fabric.
    EXPECT_EQ(fabric_->run("h2", {"ping", "-c2", "-W1", "10.1.1.10"}).rc, 0);
}

TEST_F(HostroutedFabric, SilentHostIsWithdrawnWithinHoldtime) {
    auto& d = startHostrouted({"--config", writeConfig(baseConfig())});  // holdtime 2 s
    hostSpeaks("h1", "10.1.1.1");
    ASSERT_TRUE(waitUntil([this] { return routeIn("l2", kL2V4, "10.1.1.10"); }, 10s));
    // Stays while the host answers the probes (several holdtimes).
    std::this_thread::sleep_for(5s);
    ASSERT_TRUE(routeIn("l1", kL1Table, "10.1.1.10")) << d.log();
    // The host silently drops its address: no more ARP replies, no link event.
    exec("h1", {"ip", "addr", "del", "10.1.1.10/24", "dev", "eth0"});
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(waitUntil([this] { return !routeIn("l1", kL1Table, "10.1.1.10"); }, 8s)) << d.log();
    auto local = std::chrono::steady_clock::now() - t0;
    ASSERT_TRUE(waitUntil([this] { return !routeIn("l2", kL2V4, "10.1.1.10"); }, 5s));
    auto remote = std::chrono::steady_clock::now() - t0;
    RecordProperty(
        "withdraw_local_ms",
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(local).count()));
    RecordProperty(
        "withdraw_remote_ms",
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(remote).count()));
    // The entry still exists in the kernel (STALE), so only the probes can have noticed.
    EXPECT_TRUE(contains(exec("l1", {"ip", "neigh", "show", "10.1.1.10"}), "10.1.1.10"));
    // The host comes back and answers: the route returns.
    exec("h1", {"ip", "addr", "add", "10.1.1.10/24", "dev", "eth0"});
    exec("h1", {"ip", "route", "replace", "default", "via", "10.1.1.1"});
    hostSpeaks("h1", "10.1.1.1");
    EXPECT_TRUE(waitUntil([this] { return routeIn("l2", kL2V4, "10.1.1.10"); }, 10s)) << d.log();
}

// Issue 18: one address claimed from two ports of l1 (h1 on swp3, h3 on swp4, both in the
// rail's subnet). While h1 answers, h3's claims are refused as duplicates and BGP sends
// nothing; when h1 goes silent the address moves, paced; after move_limit moves it freezes
// on swp3, where it was first learned; an operator's thaw request (SIGHUP) clears that.
TEST_F(HostroutedFabric, AddressClaimedFromTwoPortsIsRefusedThenMovesThenFreezes) {
    exec("l1", {"ip", "addr", "add", "10.1.1.1/24", "dev", "swp4", "noprefixroute"});
    exec("h1", {"ip", "addr", "add", "10.1.1.77/24", "dev", "eth0"});
    auto cfg = baseConfig();
    cfg["HOSTROUTED_INTERFACE"]["swp4"] = nlohmann::json::object();
    cfg["HOSTROUTED"]["global"]["move_limit"] = "2";
    const std::string path = writeConfig(cfg);
    auto& d = startHostrouted({"--config", path});
    auto speak = [this](const std::string& host) {
        exec(host, {"ip", "neigh", "flush", "dev", "eth0"});
        exec(host, {"ping", "-c1", "-W0.3", "-I", "10.1.1.77", "10.1.1.1"});
    };
    auto on = [this](const std::string& port) {
        return routeIn("l1", {"ip", "route", "show", "table", "10", "10.1.1.77"}, "dev " + port);
    };
    auto updatesSent = [this] {
        auto j = nlohmann::json::parse(fabric_->vtysh("l1", "show bgp neighbors swp1 json"),
                                       nullptr, false);
        return j.value("swp1", nlohmann::json::object())
            .value("messageStats", nlohmann::json::object())
            .value("updatesSent", -1);
    };
    speak("h1");
    ASSERT_TRUE(waitUntil([&on] { return on("swp3"); }, 10s)) << d.log();
    ASSERT_TRUE(waitUntil(
        [this] {
            return routeIn("l2", {"ip", "route", "show", "10.1.1.77"}, "10.1.1.77");
        },
        10s));
    exec("h3", {"ip", "addr", "add", "10.1.1.77/24", "dev", "eth0"});
    // The count is the session's, not the prefix's: wait until what start-up set going (the
    // FRR lines hostrouted added, other prefixes) has gone out, 1.5 s without an update.
    int before = updatesSent();
    for (int quiet = 0, i = 0; quiet < 3 && i < 40; ++i) {
        std::this_thread::sleep_for(500ms);
        const int now = updatesSent();
        quiet = now == before ? quiet + 1 : 0;
        before = now;
    }
    int misses = 0;
    for (int i = 0; i < 10; ++i) {  // both claim, alternately, for ~5 s
        speak("h3");
        speak("h1");
        misses += !on("swp3");
    }
    EXPECT_EQ(misses, 0) << d.log();
    EXPECT_TRUE(contains(d.log(), "refused claim: 10.1.1.77 heard on swp4")) << d.log();
    EXPECT_TRUE(contains(d.log(), "duplicate, held on swp3")) << d.log();
    const int during = updatesSent() - before;
    RecordProperty("bgp_updates_during_duplicate_claims", during);
    EXPECT_EQ(during, 0) << "BGP carried a flap";

    // h1 goes silent: after holdtime the address is free, and h3's claim moves it (move 1).
    exec("h1", {"ip", "addr", "del", "10.1.1.77/24", "dev", "eth0"});
    EXPECT_TRUE(waitUntil(
        [&] {
            speak("h3");
            return on("swp4");
        },
        8s))
        << d.log();
    // Now h3 goes silent and h1 returns: move 2 freezes it on swp3, h1's port and its first.
    exec("h3", {"ip", "addr", "del", "10.1.1.77/24", "dev", "eth0"});
    exec("h1", {"ip", "addr", "add", "10.1.1.77/24", "dev", "eth0"});
    EXPECT_TRUE(waitUntil(
        [&] {
            speak("h1");
            return on("swp3");
        },
        8s))
        << d.log();
    exec("h3", {"ip", "addr", "add", "10.1.1.77/24", "dev", "eth0"});
    exec("h1", {"ip", "addr", "del", "10.1.1.77/24", "dev", "eth0"});
    for (int i = 0; i < 12; ++i) speak("h3");  // h1 silent for holdtime: still frozen on swp3
    EXPECT_FALSE(on("swp4")) << d.log();
    EXPECT_TRUE(contains(d.log(), "10.1.1.77: frozen on swp3 after 2 moves")) << d.log();
    EXPECT_TRUE(contains(d.log(), "(frozen, held on swp3)")) << d.log();
    // The operator thaws it; h3's next claim moves it.
    auto now = std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
    cfg["HOSTROUTED_UNFREEZE"]["10.1.1.77"] = {{"requested", std::to_string(now + 1)}};
    writeConfig(cfg);
    d.signal(SIGHUP);
    EXPECT_TRUE(waitUntil([&d] { return contains(d.log(), "thawed by the operator"); }, 5s))
        << d.log();
    EXPECT_TRUE(waitUntil(
        [&] {
            speak("h3");
            return on("swp4");
        },
        8s))
        << d.log();
}

TEST_F(HostroutedFabric, RestartAfterKillNineNeverWithdraws) {
    const auto cfg = writeConfig(baseConfig());
    auto* d = &startHostrouted({"--config", cfg});
    hostSpeaks("h1", "10.1.1.1");
    ASSERT_TRUE(waitUntil([this] { return routeIn("l2", kL2V4, "10.1.1.10"); }, 10s));
    // Watch both leaves' route tables continuously through the whole restart.
    lab::ChildProcess watchL2({"ip", "-n", fabric_->ns("l2"), "monitor", "route"},
                              dir_ + "/monitor-l2.log");
    lab::ChildProcess watchL1({"ip", "-n", fabric_->ns("l1"), "monitor", "route"},
                              dir_ + "/monitor-l1.log");
    std::this_thread::sleep_for(300ms);
    for (int sig : {SIGKILL, SIGTERM}) {
        d->signal(sig);
        d->wait(5s);
        d = &startHostrouted({"--config", cfg});
        EXPECT_TRUE(contains(d->log(), "routes found in the kernel, 0 removed")) << d->log();
        hostSpeaks("h1", "10.1.1.1");
        std::this_thread::sleep_for(3s);  // past one keepalive period and an audit of it
    }
    // Positive control: the monitors do see route changes (a new host now).
    exec("l1", {"ip", "neigh", "add", "10.1.1.70", "lladdr", "02:00:00:00:00:70", "dev", "swp3",
                "nud", "permanent"});
    EXPECT_TRUE(waitUntil(
        [this] {
            return routeIn("l2", {"ip", "route", "show", "10.1.1.70"}, "10.1.1.70");
        },
        10s));
    std::this_thread::sleep_for(300ms);
    watchL1.stop();
    watchL2.stop();
    EXPECT_TRUE(contains(watchL1.log(), "10.1.1.70 dev swp3 table 10")) << watchL1.log();
    EXPECT_TRUE(contains(watchL2.log(), "10.1.1.70")) << watchL2.log();
    EXPECT_TRUE(routeIn("l2", kL2V4, "10.1.1.10"));
    EXPECT_FALSE(contains(watchL2.log(), "Deleted 10.1.1.10")) << watchL2.log();
    // "Unchanged hosts see no change at all": not even a rewrite of the same route.
    EXPECT_FALSE(contains(watchL1.log(), "10.1.1.10 dev swp3 table 10")) << watchL1.log();
}

TEST_F(HostroutedFabric, PolicyRefusesRemoteVtepHostsAndSpecialEntries) {
    startHostrouted({"--config", writeConfig(baseConfig())});
    // zebra's install of a remote VTEP's host (EVPN-MH-FACTS 4c): never routed here.
    exec("l1", {"ip", "neigh", "add", "10.1.1.50", "lladdr", "02:00:00:00:00:50", "dev", "swp3",
                "extern_learn", "nud", "noarp", "proto", "zebra"});
    exec("l1", {"ip", "neigh", "add", "10.1.1.55", "lladdr", "02:00:00:00:00:55", "dev", "swp3",
                "nud", "permanent"});
    exec("l1", {"ip", "neigh", "replace", "169.254.0.1", "lladdr", "02:00:00:00:00:51", "dev",
                "swp3", "nud", "permanent"});
    exec("l1", {"ip", "neigh", "add", "10.9.9.9", "lladdr", "02:00:00:00:00:52", "dev", "swp3",
                "nud", "reachable"});
    exec("l1", {"ip", "-6", "neigh", "add", "fe80::99", "lladdr", "02:00:00:00:00:53", "dev",
                "swp3", "nud", "reachable"});
    exec("l1", {"ip", "neigh", "add", "10.1.1.51", "lladdr", "02:00:00:00:00:54", "dev", "swp1",
                "nud", "reachable"});
    ASSERT_TRUE(waitUntil(
        [this] {
            return routeIn("l2", {"ip", "route", "show", "10.1.1.55"}, "10.1.1.55");
        },
        10s));
    std::this_thread::sleep_for(1s);
    auto table = exec("l1", kL1Table);
    EXPECT_FALSE(contains(table, "10.1.1.50")) << table;
    EXPECT_FALSE(contains(table, "169.254.0.1")) << table;
    EXPECT_FALSE(contains(table, "10.9.9.9")) << table;
    EXPECT_FALSE(contains(table, "10.1.1.51")) << table;  // swp1 is a fabric port
    EXPECT_FALSE(contains(exec("l1", {"ip", "-6", "route", "show", "proto", "201"}), "fe80::99"));
    // PERMANENT entries are not probed or expired: still there after 2 holdtimes.
    std::this_thread::sleep_for(4s);
    EXPECT_TRUE(routeIn("l1", kL1Table, "10.1.1.55"));
    EXPECT_FALSE(routeIn("l1", kL1Table, "10.1.1.50"));
}

}  // namespace twinrail::it
