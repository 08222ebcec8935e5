// planesteer's orchestration against fakes of its edges (no root, no network): the kernel
// (FakeKernel), the ports' packet sockets (FakeWire: planes that answer or go silent per
// peer), tc (FakeTc: a model of the pin table, answering at once or when the test says)
// and the clock (the test's). Probe rounds run on the loop's timer every millisecond;
// the policy sees only the test's clock, which each round() moves one interval on.
#include <gtest/gtest.h>
#include <linux/neighbour.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "daemon.h"
#include "twinrail_fakes/kernel.h"
#include "twinrail_fakes/planesteer_tc.h"
#include "twinrail_fakes/planesteer_wire.h"

namespace twinrail::planesteer {
namespace {

using namespace std::chrono_literals;

constexpr int kBond = 10, kPort1 = 11, kPort2 = 12;
const std::string kTc = "/usr/sbin/tc";
const std::string kEgress = kTc + " filter ";
const std::string kHead = " dev bond0 egress pref 100 protocol ip ";

IpAddr ip(const char* s) {
    return *IpAddr::parse(s);
}

netlink::LinkState link(int ifindex, const std::string& name, bool up) {
    netlink::LinkState l;
    l.ifindex = ifindex;
    l.name = name;
    l.adminUp = true;
    l.operUp = up;
    l.mac = MacAddr{0x02, 0, 0, 0, 0, static_cast<uint8_t>(ifindex)};
    return l;
}

netlink::NeighborEntry neighbor(const IpAddr& peer, uint8_t last = 0x33) {
    netlink::NeighborEntry n;
    n.ifindex = kBond;
    n.ip = peer;
    n.mac = MacAddr{0x02, 0xee, 0, 0, 0, last};
    n.state = NUD_REACHABLE;
    return n;
}

size_t count(const std::vector<std::string>& lines, const std::string& part) {
    return static_cast<size_t>(std::count_if(lines.begin(), lines.end(), [&](const auto& l) {
        return l.find(part) != std::string::npos;
    }));
}

// Drives the loop: a probe round (the clock one interval on), or what is ready now.
class Loop {
  public:
    explicit Loop(boost::asio::io_context& io) : io_(io) {}
    void settle() {
        io_.restart();
        // Bounded: a loop that never runs dry (a command retried in a spin) fails, not hangs.
        for (int i = 0; i < 10000 && io_.poll_one() > 0; ++i) {
        }
    }
    template <class Pred>
    bool runUntil(Pred done) {
        auto limit = std::chrono::steady_clock::now() + 2s;
        while (!done() && std::chrono::steady_clock::now() < limit) {
            io_.restart();
            io_.run_for(1ms);
        }
        return done();
    }

  private:
    boost::asio::io_context& io_;
};

class PlanesteerDaemon : public ::testing::Test {
  protected:
    PlanesteerDaemon() {
        cfg.steer.interval = 1ms;
        cfg.steer.activeInterval = 1ms;
        cfg.steer.misses = 3;
        cfg.bonds["bond0"] = BondConfig{{"port1", "port2"}, std::nullopt, std::nullopt};
    }

    // The daemon on its fakes, started; the kernel holds the bond, its ports, its address
    // and `neighbors`.
    void start() {
        Edges e;
        e.kernel = [this](netlink::NetlinkObserver& o) {
            auto k = std::make_unique<fakes::FakeKernel>(o);
            kernel = k.get();
            kernel->setLink(link(kBond, "bond0", true));
            kernel->setLink(link(kPort1, "port1", true));
            kernel->setLink(link(kPort2, "port2", true));
            kernel->addAddress({kBond, *IpPrefix::parse("10.128.0.2/24")});
            for (const auto& n : neighbors) kernel->setNeighbor(n);
            return k;
        };
        e.packetPort = wire.factory();
        auto fakeTc = std::make_unique<fakes::FakeTc>(io);
        tc = fakeTc.get();
        tc->devs = tcBefore;
        tc->hold = holdTc;
        e.tcShow = tc->reader();
        e.tc = std::move(fakeTc);
        e.now = [this] { return now; };
        daemon = std::make_unique<Daemon>(io, cfg, std::move(e));
        daemon->start();
    }
    void round(int n = 1) { round(n, cfg.steer.interval); }
    void round(int n, std::chrono::milliseconds step) {
        for (int i = 0; i < n; ++i) {
            now += step;
            uint64_t before = daemon->rounds();
            ASSERT_TRUE(loop.runUntil([&] { return daemon->rounds() > before; }));
            loop.settle();
        }
    }
    void releaseAll() {
        while (tc->release()) loop.settle();
    }
    const TcPins& pins() const { return *daemon->bond("bond0")->pins; }

    boost::asio::io_context io;
    Loop loop{io};
    fakes::FakeWire wire{io};
    Config cfg;
    std::vector<netlink::NeighborEntry> neighbors{neighbor(ip("10.128.0.3"))};
    std::map<std::string, fakes::FakeTc::Egress> tcBefore;
    bool holdTc = false;
    Clock::time_point now = Clock::time_point(1h);
    fakes::FakeKernel* kernel = nullptr;
    fakes::FakeTc* tc = nullptr;
    std::unique_ptr<Daemon> daemon;
    const IpAddr peer = ip("10.128.0.3");
    const std::string pinPeer = kEgress + "replace" + kHead +
                                "handle 1:3:1 u32 ht 1:3: match ip dst 10.128.0.3/32 action "
                                "mirred egress redirect dev port1";
};

TEST_F(PlanesteerDaemon, PeerSilentThroughOnePortIsPinnedToTheOtherAndLetGoWhenItAnswers) {
    start();
    loop.settle();
    round(5);
    EXPECT_GE(wire.arpRequests("port1", peer), 5u);
    EXPECT_GE(wire.arpRequests("port2", peer), 5u);
    EXPECT_EQ(tc->lines(), std::vector<std::string>{kTc + " -j filter show dev bond0 egress"})
        << "both planes answer: nothing to pin";

    wire.setAnswering("port2", peer, false);
    round(5);
    EXPECT_EQ(
        tc->lines(),
        (std::vector<std::string>{
            kTc + " -j filter show dev bond0 egress", kEgress + "del dev bond0 egress pref 100",
            kEgress + "add" + kHead + "handle 1: u32 divisor 256",
            kEgress + "add" + kHead + "u32 match u32 0 0 hashkey mask 0x000000ff at 16 link 1:",
            pinPeer}));
    EXPECT_EQ(pins().pinnedPort(peer), std::optional<size_t>(0));
    EXPECT_EQ(tc->pins("bond0"), (std::map<std::string, std::string>{{"10.128.0.3", "port1"}}));

    wire.setAnswering("port2", peer, true);
    round(2);
    EXPECT_EQ(tc->lines().back(), kEgress + "del" + kHead + "handle 1:3:1 u32");
    EXPECT_FALSE(pins().pinnedPort(peer));
    EXPECT_TRUE(tc->pins("bond0").empty());
}

TEST_F(PlanesteerDaemon, StartReturnsBeforeTcAndAPreviousRunsPinsGoFirst) {
    holdTc = true;
    tcBefore["bond0"].prefs = {150, 30000};  // an old per-pin filter; the lab bond's hash
    tcBefore["bond0"].table = true;          // the last run's table
    start();
    EXPECT_EQ(tc->runs.size(), 1u) << "start() only asks for the listing";
    EXPECT_EQ(tc->waiting(), 1u);

    wire.setAnswering("port2", peer, false);
    round(6);  // the peer is due a pin, tc has not answered yet: probing goes on
    EXPECT_GE(wire.arpRequests("port1", peer), 6u);
    EXPECT_EQ(tc->runs.size(), 1u) << "nothing runs before the previous run's pins are gone";

    for (int i = 0; i < 2; ++i) {
        ASSERT_TRUE(tc->release());
        loop.settle();
        EXPECT_EQ(tc->waiting(), 1u) << "one command at a time";
    }
    releaseAll();
    round();
    releaseAll();
    auto lines = tc->lines();
    ASSERT_GE(lines.size(), 6u);
    EXPECT_EQ(lines[1], kEgress + "del dev bond0 egress pref 100");
    EXPECT_EQ(lines[2], kEgress + "del dev bond0 egress pref 150");
    EXPECT_EQ(lines.back(), pinPeer);
    EXPECT_EQ(tc->devs["bond0"].prefs, std::set<int>{30000}) << "not ours: left alone";
    EXPECT_EQ(pins().pinnedPort(peer), std::optional<size_t>(0));
}

TEST_F(PlanesteerDaemon, SlowTcBlocksNeitherProbingNorDecisionsAndWishesCoalesce) {
    start();
    loop.settle();
    tc->hold = true;
    wire.setAnswering("port2", peer, false);
    round(5);
    ASSERT_EQ(tc->waiting(), 1u);  // the table's first step, stuck
    size_t asked = wire.arpRequests("port1", peer);
    uint64_t rounds = daemon->rounds();
    round(20);
    EXPECT_GE(wire.arpRequests("port1", peer), asked + 20);
    EXPECT_GE(daemon->rounds(), rounds + 20);
    EXPECT_EQ(tc->waiting(), 1u) << "still the one command: nothing piles up behind it";

    wire.setAnswering("port2", peer, true);  // the plane is back before tc ever ran
    round(2);
    releaseAll();
    EXPECT_EQ(count(tc->lines(), "replace"), 0u) << "a wish undone while tc was busy never ran";
    EXPECT_FALSE(pins().pinnedPort(peer));
    EXPECT_GE(pins().counters().coalesced, 1u);
}

TEST_F(PlanesteerDaemon, FailedPinIsNotBelievedAndIsRetriedEachRound) {
    bool failing = true;
    start();
    tc->fail = [&failing](const std::vector<std::string>& argv) {
        return failing && std::find(argv.begin(), argv.end(), "replace") != argv.end() ? 2 : 0;
    };
    loop.settle();
    wire.setAnswering("port2", peer, false);
    round(5);
    EXPECT_FALSE(pins().pinnedPort(peer));
    EXPECT_TRUE(tc->pins("bond0").empty());
    EXPECT_GE(pins().errors(), 1u);
    // After the failure tc is asked what is there: not the pin, but the table.
    EXPECT_EQ(count(tc->lines(), kEgress + "get" + kHead + "handle 1:3:1 u32"),
              count(tc->lines(), "replace"));
    EXPECT_GE(count(tc->lines(), kEgress + "get" + kHead + "handle 1: u32"), 1u);

    size_t tries = count(tc->lines(), "replace");
    uint64_t rounds = daemon->rounds();
    round(3);
    size_t more = count(tc->lines(), "replace") - tries;
    EXPECT_GE(more, 3u) << "retried at the next decisions";
    EXPECT_LE(more, daemon->rounds() - rounds + 1) << "once a round, not in a loop";
    EXPECT_FALSE(pins().pinnedPort(peer));

    failing = false;
    round();
    EXPECT_EQ(pins().pinnedPort(peer), std::optional<size_t>(0));
    EXPECT_EQ(tc->pins("bond0"), (std::map<std::string, std::string>{{"10.128.0.3", "port1"}}));
}

TEST_F(PlanesteerDaemon, FailedUnpinOfAForgottenPeerStaysBelievedAndIsRetried) {
    bool failing = false;
    start();
    tc->fail = [&failing](const std::vector<std::string>& argv) {
        bool delNode = std::find(argv.begin(), argv.end(), "del") != argv.end() &&
                       std::find(argv.begin(), argv.end(), "handle") != argv.end();
        return failing && delNode ? 2 : 0;
    };
    loop.settle();
    wire.setAnswering("port2", peer, false);
    round(5);
    ASSERT_EQ(pins().pinnedPort(peer), std::optional<size_t>(0));

    failing = true;
    kernel->removeNeighbor(kBond, peer);  // forgotten: nothing will state its wish again
    round(3);
    EXPECT_GE(count(tc->lines(), kEgress + "del" + kHead + "handle 1:3:1 u32"), 2u);
    EXPECT_EQ(pins().pinnedPort(peer), std::optional<size_t>(0)) << "the node is still there";
    EXPECT_EQ(tc->pins("bond0").size(), 1u);
    EXPECT_FALSE(daemon->bond("bond0")->policy.hasPeer(peer));

    failing = false;
    round();
    EXPECT_FALSE(pins().pinnedPort(peer));
    EXPECT_TRUE(tc->pins("bond0").empty());
}

TEST_F(PlanesteerDaemon, TableMadeHalfWayIsMadeAgainFromItsFirstStep) {
    bool failing = true;
    start();
    tc->fail = [&failing](const std::vector<std::string>& argv) {
        return failing && argv.back() == "1:" ? 2 : 0;  // the root node
    };
    loop.settle();
    wire.setAnswering("port2", peer, false);
    round(5);
    EXPECT_FALSE(pins().tableReady());
    EXPECT_FALSE(pins().pinnedPort(peer));
    EXPECT_TRUE(tc->devs["bond0"].table && !tc->devs["bond0"].root) << "half made";
    EXPECT_EQ(count(tc->lines(), "replace"), 0u);
    uint64_t rounds = daemon->rounds();
    size_t tries = count(tc->lines(), "divisor 256");
    round(3);
    size_t more = count(tc->lines(), "divisor 256") - tries;
    EXPECT_GE(more, 3u) << "made again at the next decisions";
    EXPECT_LE(more, daemon->rounds() - rounds + 1) << "once a round, not in a loop";

    failing = false;
    size_t before = tc->runs.size();
    round();
    auto lines = tc->lines();
    ASSERT_GE(lines.size(), before + 4);
    EXPECT_EQ(lines[before], kEgress + "del dev bond0 egress pref 100");
    EXPECT_NE(lines[before + 1].find("divisor 256"), std::string::npos);
    EXPECT_NE(lines[before + 2].find("link 1:"), std::string::npos);
    EXPECT_EQ(lines[before + 3], pinPeer);
    EXPECT_TRUE(tc->devs["bond0"].root);
    EXPECT_EQ(pins().pinnedPort(peer), std::optional<size_t>(0));
}

TEST_F(PlanesteerDaemon, PortWithoutCarrierIsNotProbedAndOnReturnWaitsForItsPlane) {
    start();
    loop.settle();
    round(3);
    kernel->setLink(link(kPort2, "port2", false));
    size_t asked = wire.arpRequests("port2", peer);
    round(6);
    EXPECT_EQ(wire.arpRequests("port2", peer), asked) << "no probes out of a port without carrier";
    EXPECT_GE(wire.arpRequests("port1", peer), 6u);
    EXPECT_EQ(count(tc->lines(), "replace"), 0u) << "one port up: the bond already keeps off";

    // Carrier first, routes later: the peer is kept on port1 until plane 2 answers again.
    kernel->setLink(link(kPort2, "port2", true));
    loop.settle();
    EXPECT_EQ(tc->lines().back(), pinPeer) << "pinned at once, before any round";
    round(2);
    EXPECT_FALSE(pins().pinnedPort(peer)) << "plane 2 answered: back on the bond's hash";
    EXPECT_TRUE(tc->pins("bond0").empty());
}

TEST_F(PlanesteerDaemon, NeighborSnapshotAddsAndForgetsPeersButAnAbortedOneForgetsNothing) {
    const IpAddr other = ip("10.128.0.4"), fresh = ip("10.128.0.5");
    neighbors.push_back(neighbor(other, 0x44));
    start();
    loop.settle();
    wire.setAnswering("port2", peer, false);
    round(5);
    ASSERT_EQ(pins().pinnedPort(peer), std::optional<size_t>(0));

    // Changes the event stream lost (ENOBUFS): only a snapshot shows them.
    kernel->removeNeighborSilently(kBond, peer);
    kernel->setNeighborSilently(neighbor(fresh, 0x55));
    kernel->abortNextSnapshot();
    kernel->snapshotNow();
    round(2);
    EXPECT_EQ(pins().pinnedPort(peer), std::optional<size_t>(0)) << "partial data: kept";
    EXPECT_EQ(wire.arpRequests("port1", fresh), 0u);

    kernel->snapshotNow();
    round(2);
    EXPECT_GE(wire.arpRequests("port1", fresh), 1u);
    EXPECT_GE(wire.arpRequests("port2", fresh), 1u);
    const Bond& b = *daemon->bond("bond0");
    EXPECT_FALSE(b.policy.hasPeer(peer));
    EXPECT_TRUE(b.policy.hasPeer(other));
    EXPECT_FALSE(pins().pinnedPort(peer));
    EXPECT_TRUE(tc->pins("bond0").empty());
}

TEST_F(PlanesteerDaemon, PeerOnAnotherRailIsLearnedFromTrafficAndSteeredByEchoViaTheGateway) {
    const IpAddr gateway = ip("10.128.0.1"), remote = ip("10.128.1.7");
    cfg.bonds["bond0"].gateway = gateway;
    cfg.bonds["bond0"].fabric = IpPrefix::parse("10.128.0.0/16");
    auto gw = neighbor(gateway, 0x01);
    neighbors.push_back(gw);
    start();
    loop.settle();
    wire.sample("port1", ip("10.128.0.2"), remote);
    wire.sample("port1", ip("10.128.0.2"), ip("192.0.2.1"));  // outside the fabric
    round(2);
    EXPECT_TRUE(daemon->bond("bond0")->remote.contains(remote));
    EXPECT_FALSE(daemon->bond("bond0")->policy.hasPeer(ip("192.0.2.1")));
    EXPECT_GE(wire.echoRequests("port1", remote), 1u);
    EXPECT_GE(wire.echoRequests("port2", remote), 1u);
    for (const auto& s : wire.sent) {
        if (s.proto == ETH_P_IP) {
            EXPECT_EQ(s.dst, *gw.mac) << "echo goes to the gateway's MAC";
        }
    }
    EXPECT_EQ(wire.arpRequests("port1", remote), 0u) << "ARP cannot reach another rail";

    wire.setAnswering("port2", remote, false);
    round(5);
    EXPECT_EQ(tc->lines().back(), kEgress + "replace" + kHead +
                                      "handle 1:7:1 u32 ht 1:7: match ip dst 10.128.1.7/32 "
                                      "action mirred egress redirect dev port1");
    EXPECT_EQ(pins().pinnedPort(remote), std::optional<size_t>(0));
}

// The peer the NIC sends to is probed every active interval and lost in 3 of those; the
// one it only sent to long ago keeps the idle interval, and its patience.
TEST_F(PlanesteerDaemon, PeerSentToIsProbedFastAndLostSoonerThanAnIdleOne) {
    const IpAddr gateway = ip("10.128.0.1"), busy = ip("10.128.1.7"), quiet = ip("10.128.2.9");
    cfg.steer.interval = 8ms;
    cfg.activeWindow = 20ms;
    cfg.bonds["bond0"].gateway = gateway;
    cfg.bonds["bond0"].fabric = IpPrefix::parse("10.128.0.0/16");
    neighbors.push_back(neighbor(gateway, 0x01));
    start();
    loop.settle();
    wire.sample("port1", ip("10.128.0.2"), busy);
    wire.sample("port1", ip("10.128.0.2"), quiet);
    for (int i = 0; i < 30; ++i) {  // 30 ms: the quiet one's traffic is older than the window
        if (i % 5 == 0) wire.sample("port2", ip("10.128.0.2"), busy);
        round(1, 1ms);
    }
    ASSERT_TRUE(daemon->bond("bond0")->schedule.active(busy));
    ASSERT_FALSE(daemon->bond("bond0")->schedule.active(quiet));
    size_t busyBefore = wire.echoRequests("port1", busy);
    size_t quietBefore = wire.echoRequests("port1", quiet);
    for (int i = 0; i < 16; ++i) {
        if (i % 5 == 0) wire.sample("port2", ip("10.128.0.2"), busy);
        round(1, 1ms);
    }
    EXPECT_GE(wire.echoRequests("port1", busy) - busyBefore, 14u);
    EXPECT_LE(wire.echoRequests("port1", quiet) - quietBefore, 3u) << "every 8 ms, not every 1";

    // Plane 2 loses both.
    wire.setAnswering("port2", busy, false);
    wire.setAnswering("port2", quiet, false);
    for (int i = 0; i < 6; ++i) {
        wire.sample("port2", ip("10.128.0.2"), busy);
        round(1, 1ms);
    }
    EXPECT_EQ(pins().pinnedPort(busy), std::optional<size_t>(0)) << "3 active intervals";
    EXPECT_FALSE(pins().pinnedPort(quiet)) << "an idle peer waits 3 idle intervals";
    round(30, 1ms);
    EXPECT_EQ(pins().pinnedPort(quiet), std::optional<size_t>(0));
}

TEST_F(PlanesteerDaemon, ExceptionInsideALoopCallbackIsLoggedAndTheLoopGoesOn) {
    wire.throwOnSend = {"port2"};
    start();
    uint64_t rounds = daemon->rounds();
    EXPECT_NO_THROW(round(4));
    EXPECT_GE(daemon->rounds(), rounds + 4);
    EXPECT_GE(wire.arpRequests("port1", peer), 4u);

    fakes::FakeWire broken(io);
    broken.failOpen = {"port2"};
    Edges e;
    e.kernel = [](netlink::NetlinkObserver& o) { return std::make_unique<fakes::FakeKernel>(o); };
    e.packetPort = broken.factory();
    e.tc = std::make_unique<fakes::FakeTc>(io);
    e.tcShow = [](auto, auto) {};
    Daemon cannot(io, cfg, std::move(e));
    EXPECT_THROW(cannot.start(), std::system_error) << "a port that cannot be opened: no start";
}

// TcPins on its own: what only the once-a-minute audit or a timed-out tc shows.
class PlanesteerTcPins : public ::testing::Test {
  protected:
    void pinPeer(size_t port) {
        pins.want(peer, port);
        pins.poke();
        loop.settle();
    }
    boost::asio::io_context io;
    Loop loop{io};
    fakes::FakeTc tc{io};
    TcPins pins{tc, tc.reader(), "bond0", {"port1", "port2"}};
    const IpAddr peer = ip("10.128.0.9");
};

TEST_F(PlanesteerTcPins, AuditFindsTheTableGoneAndPinsAgain) {
    pins.start();
    pinPeer(1);
    ASSERT_EQ(tc.pins("bond0"), (std::map<std::string, std::string>{{"10.128.0.9", "port2"}}));
    tc.dropTable("bond0");  // clsact deleted and made again: nothing failed, pins are gone
    pins.poke();
    loop.settle();
    EXPECT_EQ(pins.pinnedPort(peer), std::optional<size_t>(1)) << "nothing says otherwise yet";

    pins.verify();
    loop.settle();
    EXPECT_FALSE(pins.pinnedPort(peer)) << "the table is gone, and every pin with it";
    pins.poke();  // the next round makes it again
    loop.settle();
    EXPECT_EQ(tc.pins("bond0"), (std::map<std::string, std::string>{{"10.128.0.9", "port2"}}));
    EXPECT_EQ(pins.pinnedPort(peer), std::optional<size_t>(1));
}

TEST_F(PlanesteerTcPins, FailureThatTookEffectAnywayIsBelievedAndRunAgain) {
    pins.start();
    tc.applyAnyway = true;  // tc killed by its timeout after the kernel did the work
    tc.fail = [](const std::vector<std::string>& argv) { return argv[2] == "replace" ? -1 : 0; };
    pinPeer(0);
    EXPECT_EQ(tc.pins("bond0").size(), 1u);
    EXPECT_EQ(pins.pinnedPort(peer), std::optional<size_t>(0)) << "tc get found the node";
    EXPECT_EQ(pins.errors(), 1u);

    tc.fail = nullptr;
    size_t before = tc.runs.size();
    pinPeer(0);  // the same wish: run again, since what the node points at is not known
    ASSERT_EQ(tc.runs.size(), before + 1);
    EXPECT_EQ(tc.runs.back()[2], "replace");
    pinPeer(0);
    EXPECT_EQ(tc.runs.size(), before + 1) << "known now: nothing more to run";
}

}  // namespace
}  // namespace twinrail::planesteer
