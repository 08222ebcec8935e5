// planesteer's orchestration against fakes of its edges: the harness is
// planesteer_daemon_harness.h (its comment says what each fake is).
#include "planesteer_daemon_harness.h"

namespace twinrail::planesteer {
namespace {

using namespace std::chrono_literals;
using namespace harness;

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
