// pathqd operations: hostile INT telemetry, bad config, restarts that must not move a
// single weight, and FRR configuration that belongs to someone else.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <sstream>
#include <thread>

#include "pathqd_fixture.h"
#include "twinrail/telemetry/int_report.h"

namespace twinrail::it {
namespace {

// Level changes in a pathqd log ("level A -> B", its own or a neighbour's) that move a
// known level: A is not 0, the level before the first measurement.
size_t levelMoves(const std::string& log) {
    size_t moves = 0;
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);) {
        auto at = line.find("level ");
        auto arrow = line.find(" -> ", at);
        if (at == std::string::npos || arrow == std::string::npos) continue;
        const std::string from = line.substr(at + 6, arrow - at - 6);
        if (!from.empty() && from.find_first_not_of("0123456789") == std::string::npos &&
            from != "0")
            ++moves;
    }
    return moves;
}

// One namespace pair without FRR: enough for the collector and config handling.
class PathqdAlone : public ::testing::Test {
  protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        fabric_ = std::make_unique<lab::Fabric>(lab::uniquePrefix("pa"));
        dir_ = "/tmp/" + fabric_->prefix() + "-" + info->name();
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
        fabric_->addNode("a");
        fabric_->addNode("b");
        fabric_->link("a", "swp1", "b", "swp1");
        redis_ = std::make_unique<lab::RedisServer>(dir_ + "/redis");
        redis_->start();
    }
    void TearDown() override {
        daemon_.reset();
        redis_.reset();
        fabric_.reset();
        if (!HasFailure()) {
            std::filesystem::remove_all(dir_);
        } else {
            std::cerr << "logs kept in " << dir_ << "\n";
        }
    }
    void writeConfig(const nlohmann::json& cfg) {
        std::ofstream(dir_ + "/pathqd.json") << cfg.dump(2);
    }
    lab::ChildProcess& start() {
        daemon_ = std::make_unique<lab::ChildProcess>(
            std::vector<std::string>{"ip", "netns", "exec", fabric_->ns("a"), PATHQD_BIN,
                                     "--config", dir_ + "/pathqd.json", "--no-frr-check",
                                     "--redis-socket", redis_->socket()},
            dir_ + "/pathqd.log", lab::ChildOptions{.notify = true});
        return *daemon_;
    }
    std::string stat(const std::string& field) {
        auto out = redis_->cli(6, {"HGET", "PATHQD_STATS|global", field});
        return out.substr(0, out.find('\n'));
    }
    // `times` datagrams of `bytes` from node a to its own 127.0.0.1:6790 (the collector),
    // 20 ms apart. A socket stays in the namespace it was made in: a thread that joins a's
    // makes it.
    void send(const std::string& name, const std::vector<uint8_t>& bytes, int times = 1) {
        int fd = -1;
        std::thread([&fd, ns = fabric_->ns("a")] {
            int target = ::open(("/var/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
            if (target >= 0 && ::setns(target, CLONE_NEWNET) == 0)
                fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
            if (target >= 0) ::close(target);
        }).join();
        ASSERT_GE(fd, 0) << name << ": no socket in " << fabric_->ns("a");
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_port = htons(6790);
        to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        for (int i = 0; i < times; ++i) {
            EXPECT_EQ(::sendto(fd, bytes.data(), bytes.size(), 0,
                               reinterpret_cast<const sockaddr*>(&to), sizeof to),
                      static_cast<ssize_t>(bytes.size()))
                << name;
            std::this_thread::sleep_for(20ms);
        }
        ::close(fd);
    }

    std::unique_ptr<lab::Fabric> fabric_;
    std::string dir_;
    std::unique_ptr<lab::RedisServer> redis_;
    std::unique_ptr<lab::ChildProcess> daemon_;
};

nlohmann::json intConfig() {
    return nlohmann::json::parse(
        R"({"PATHQD": {"global": {"int_port": "6790", "reference_mbps": "100",
                                                           "latency_ref_us": "10000"}},
                                     "PATHQD_PORT": {"swp1": {"role": "uplink", "capacity_mbps": "100",
                                                              "int_port_id": "5"}}})");
}

TEST_F(PathqdAlone, BadIntReportsAreCountedAndDropped) {
    writeConfig(intConfig());
    auto& d = start();
    ASSERT_TRUE(d.waitReady(10s)) << d.log();
    telemetry::IntHop hop;
    hop.egressPort = 5;
    hop.hopLatency = 30'000'000;  // 30 ms in this hop
    hop.queueOccupancy = 1000;
    auto valid = telemetry::buildTelemetryReport(1, 1, 0x4000 | 0x2000 | 0x1000, {hop});
    auto truncated = std::vector<uint8_t>(valid.begin(), valid.begin() + 14);
    auto wrongVersion = valid;
    wrongVersion[0] = static_cast<uint8_t>(0x10 | (wrongVersion[0] & 0x0f));
    std::vector<uint8_t> oversized(6000, 0x20);
    std::vector<uint8_t> garbage = {0xde, 0xad, 0xbe, 0xef, 0x00, 0x01};
    send("truncated", truncated);
    send("wrong-version", wrongVersion);
    send("oversized", oversized);
    send("garbage", garbage);
    EXPECT_TRUE(waitUntil([this] { return stat("int_bad") == "4"; }, 5s))
        << stat("int_bad") << d.log();
    EXPECT_EQ(stat("int_packets"), "4");
    EXPECT_EQ(stat("int_hops"), "0");
    EXPECT_TRUE(d.running());
    // Valid reports keep flowing: the port's latency now comes from INT.
    send("valid", valid, 40);
    EXPECT_EQ(stat("int_bad"), "4");
    EXPECT_TRUE(waitUntil([this] { return std::atoi(stat("int_hops").c_str()) >= 40; }, 5s))
        << stat("int_hops");
    EXPECT_NE(d.log().find("INT: dropped a bad report"), std::string::npos);
    EXPECT_TRUE(d.running());
}

TEST_F(PathqdAlone, BadConfigExits78AndIsRefusedAtRuntime) {
    auto bad = intConfig();
    bad["PATHQD_PORT"]["swp1"]["role"] = "spine";
    writeConfig(bad);
    auto& d = start();
    EXPECT_EQ(d.wait(10s), 78);
    EXPECT_NE(d.log().find("PATHQD_PORT|swp1 field role"), std::string::npos) << d.log();

    writeConfig(intConfig());
    auto& good = start();
    ASSERT_TRUE(good.waitReady(10s)) << good.log();
    bad = intConfig();
    bad["PATHQD"]["global"]["levels"] = "1000";
    writeConfig(bad);
    good.signal(SIGHUP);
    EXPECT_TRUE(waitUntil(
        [&good] { return good.log().find("keeping the running config") != std::string::npos; }, 5s))
        << good.log();
    EXPECT_NE(good.log().find("PATHQD|global field levels"), std::string::npos);
    EXPECT_TRUE(good.running());
}

// systemd stops the daemon with SIGTERM on every restart and upgrade. With either
// counter source, Redis connections open and reads in flight, it must exit 0 every time
// (a use-after-free at exit once aborted 3 runs in 10 with the SONiC source).
TEST_F(PathqdAlone, SigtermStopsCleanlyEveryTimeWithEitherSource) {
    redis_->cli(2, {"HSET", "COUNTERS_PORT_NAME_MAP", "swp1", "oid:0x1000000000002"});
    redis_->cli(2, {"HSET", "COUNTERS:oid:0x1000000000002", "SAI_PORT_STAT_IF_OUT_OCTETS", "1000",
                    "SAI_PORT_STAT_IF_OUT_UCAST_PKTS", "10", "SAI_PORT_STAT_IF_OUT_DISCARDS", "0"});
    redis_->cli(0, {"HSET", "PORT_TABLE:swp1", "oper_status", "up", "speed", "100000"});
    for (const char* source : {"sonic", "linux"}) {
        auto cfg = intConfig();
        cfg["PATHQD"]["global"]["source"] = source;
        cfg["PATHQD"]["global"]["sample_interval_ms"] = "20";  // reads always in flight
        writeConfig(cfg);
        for (int i = 0; i < 8; ++i) {
            lab::ChildProcess d(
                {"ip", "netns", "exec", fabric_->ns("a"), PATHQD_BIN, "--config",
                 dir_ + "/pathqd.json", "--no-frr-check", "--redis-socket", redis_->socket()},
                dir_ + "/sigterm-" + source + std::to_string(i) + ".log", {.notify = true});
            ASSERT_TRUE(d.waitReady(10s)) << d.log();
            std::this_thread::sleep_for(std::chrono::milliseconds(150 * (i % 4)));
            d.signal(SIGTERM);
            auto rc = d.wait(10s);
            ASSERT_TRUE(rc.has_value()) << source << " run " << i << " did not exit\n" << d.log();
            EXPECT_EQ(*rc, 0) << source << " run " << i << "\n" << d.log();
            EXPECT_EQ(d.log().find("AddressSanitizer"), std::string::npos) << d.log();
        }
    }
}

// On the dual-spine fabric: a restart moves nothing, foreign route-maps are left alone,
// and a port taken out of the config loses the route-maps pathqd made for it.
TEST_F(PathqdFabric, OwnsOnlyItsFrrConfigAndRestartsWithoutChurn) {
    fabric_->vtysh("s2",
                   "configure terminal\nroute-map OPERATOR permit 10\nexit\nrouter bgp 65000\n"
                   "address-family ipv4 unicast\nneighbor swp2 route-map OPERATOR in");
    fabric_->run("s2",
                 {"vtysh", "-N", fabric_->ns("s2"), "-c", "configure terminal", "-c",
                  "route-map OPERATOR permit 10", "-c", "exit", "-c", "router bgp 65000", "-c",
                  "address-family ipv4 unicast", "-c", "neighbor swp2 route-map OPERATOR in"});
    startAll();
    lab::shapePort(*fabric_, "s1", "swp2", 20);
    ASSERT_TRUE(waitUntil([this] { return share("l1", "10.2.2.0/24", "swp1") < 30.0; }, 10s));
    auto s2config = fabric_->vtysh("s2", "show running-config");
    EXPECT_NE(s2config.find("neighbor swp2 route-map OPERATOR in"), std::string::npos);
    EXPECT_EQ(s2config.find("TWINRAIL-PQ-IN-swp2"), std::string::npos) << s2config;
    EXPECT_NE(s2config.find("TWINRAIL-PQ-IN-swp1"), std::string::npos);
    EXPECT_NE(daemons_[1]->log().find("pathqd leaves that port alone"), std::string::npos);

    // Restart s1's pathqd: the route-maps stay while it is down, and the new process
    // finds nothing to change.
    auto before = weights("l1", "10.2.2.0/24");
    daemons_[0]->stop();
    std::this_thread::sleep_for(2s);
    EXPECT_EQ(weights("l1", "10.2.2.0/24"), before);
    startPathqd("s1", config("downlink"), true);
    std::this_thread::sleep_for(4s);
    EXPECT_EQ(weights("l1", "10.2.2.0/24"), before);
    // The restart itself publishes nothing. A quality that really moves while the test
    // waits (a neighbour's report one level down, as under ASan's slower sampling once)
    // may publish, at most once per move: the moves are the log's level changes from a
    // level that was already known.
    const std::string log = daemons_.back()->log();
    const std::string publishes = stat("s1", "publishes");
    ASSERT_FALSE(publishes.empty()) << "no publishes in s1's stats\n" << log;
    EXPECT_LE(std::stoul(publishes), levelMoves(log)) << log;

    // Taking swp1 out of s1's config removes its route-maps (and only those).
    auto cfg = config("downlink");
    cfg["PATHQD_PORT"].erase("swp1");
    std::ofstream(dir_ + "/pathqd-s1.json") << cfg.dump(2);
    daemons_.back()->signal(SIGHUP);
    EXPECT_TRUE(waitUntil(
        [this] {
            return fabric_->vtysh("s1", "show running-config").find("TWINRAIL-PQ-IN-swp1") ==
                   std::string::npos;
        },
        10s));
    auto s1config = fabric_->vtysh("s1", "show running-config");
    EXPECT_NE(s1config.find("neighbor swp2 route-map TWINRAIL-PQ-IN-swp2 in"), std::string::npos)
        << s1config;
}

// Every line of a running config that is not pathqd's own (TWINRAIL-PQ objects and the
// neighbor lines that attach them).
std::string foreignLines(const std::string& running) {
    std::istringstream in(running);
    std::string out;
    bool inOwnMap = false;  // a route-map TWINRAIL-PQ-... block, up to its "exit"
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("route-map TWINRAIL-PQ", 0) == 0) inOwnMap = true;
        if (inOwnMap) {
            inOwnMap = line != "exit";
            continue;
        }
        if (line.find("TWINRAIL-PQ") != std::string::npos) continue;
        if (line.rfind("Building configuration", 0) == 0 ||
            line.rfind("Current configuration", 0) == 0)
            continue;
        out += line + "\n";
    }
    return out;
}

// kill -9 while a vtysh batch of pathqd's is running (half of a change applied): the new
// process finds its own objects as they are, finishes the job, and touches nothing else.
TEST_F(PathqdFabric, KilledInTheMiddleOfAPublishRestartsToTheRightState) {
    fabric_->run("s1", {"vtysh", "-N", fabric_->ns("s1"), "-c", "configure terminal", "-c",
                        "route-map OPERATOR permit 10", "-c", "set community 65000:1", "-c", "exit",
                        "-c", "router bgp 65000", "-c", "neighbor swp2 description operator-note"});
    auto global =
        nlohmann::json{{"min_hold_ms", "300"}, {"raise_hold_ms", "300"}, {"smoothing_ms", "100"}};
    auto cfg = config("downlink", global);
    startPathqd("s1", cfg, true);
    // Every spine tags its paths: with one path untagged FRR 8.4 falls back to ECMP.
    startPathqd("s2", config("downlink"));
    startPathqd("l1", config("uplink"), true);
    startPathqd("l2", config("uplink"));
    // The first publish is done (it goes in chunks): what FRR holds then is the baseline.
    ASSERT_TRUE(waitUntil(
        [this] {
            return stat("s1", "publishes") != "" && stat("s1", "publishes") != "0" &&
                   stat("s1", "frr_state") == "ok";
        },
        30s));
    std::string baseline = foreignLines(fabric_->vtysh("s1", "show running-config"));
    ASSERT_NE(baseline.find("operator-note"), std::string::npos) << baseline;

    // Flip s1:swp2's shaper until a publish is caught with its vtysh running.
    bool caught = false;
    pid_t pid = daemons_[0]->pid();
    for (int flip = 0; flip < 40 && !caught; ++flip) {
        lab::shapePort(*fabric_, "s1", "swp2", flip % 2 == 0 ? 20 : 0);
        auto until = std::chrono::steady_clock::now() + 3s;
        while (std::chrono::steady_clock::now() < until) {
            if (lab::run({"pgrep", "-P", std::to_string(pid), "-x", "vtysh"}).rc == 0) {
                daemons_[0]->signal(SIGKILL);
                caught = true;
                break;
            }
            std::this_thread::sleep_for(2ms);
        }
    }
    ASSERT_TRUE(caught) << "no publish caught in flight";
    EXPECT_EQ(daemons_[0]->wait(5s), 128 + SIGKILL);
    lab::shapePort(*fabric_, "s1", "swp2", 20);  // a known state to converge to
    waitUntil(
        [] {
            return lab::run({"pgrep", "-x", "vtysh"}).rc != 0;
        },
        20s);  // the orphaned batch ends

    auto& again = startPathqd("s1", cfg, true);  // daemons_[4]
    EXPECT_TRUE(waitUntil([this] { return share("l1", "10.2.2.0/24", "swp1") < 30.0; }, 20s))
        << again.log();
    EXPECT_TRUE(waitUntil([this] { return stat("s1", "frr_state") == "ok"; }, 10s)) << again.log();
    EXPECT_EQ(foreignLines(fabric_->vtysh("s1", "show running-config")), baseline);
    // The state it left is exactly its own: one more restart into an unchanged world
    // changes nothing at all. The world is s1's levels and its neighbours' reported ones:
    // l1 and l2 keep the default 15 s raise hold, and the flips above (or a slow machine's
    // lost probes) may still be lifting theirs, which is a reason to publish, not churn. So
    // the restart is checked again, up to 3 times, until those levels held still across it.
    auto levels = [this] {
        std::string out;
        for (const char* port : {"swp1", "swp2"}) {
            std::string key = std::string("PATH_QUALITY_TABLE|") + port;
            for (const char* field : {"level", "peer_level"}) {
                out += redisFor("s1").cli(6, {"HGET", key, field}) + " ";
            }
        }
        return out;
    };
    lab::ChildProcess* last = &again;
    bool checked = false;
    for (int attempt = 0; attempt < 3 && !checked; ++attempt) {
        std::this_thread::sleep_for(2s);
        std::string before = levels();
        auto converged = fabric_->vtysh("s1", "show running-config");
        last->stop();
        last = &startPathqd("s1", cfg, true);
        std::this_thread::sleep_for(3s);
        if (levels() != before) {
            std::cout << "[note] s1's levels moved across restart " << attempt + 1 << ": " << before
                      << "-> " << levels() << "\n";
            continue;
        }
        EXPECT_EQ(fabric_->vtysh("s1", "show running-config"), converged) << last->log();
        EXPECT_EQ(stat("s1", "publishes"), "0") << last->log();
        checked = true;
    }
    EXPECT_TRUE(checked) << "s1's levels never held still across a restart";
}

}  // namespace
}  // namespace twinrail::it
