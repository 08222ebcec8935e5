#include "host_registry.h"

#include <gtest/gtest.h>
#include <linux/neighbour.h>

#include <map>

using namespace twinrail;
using namespace twinrail::hostrouted;
using namespace std::chrono_literals;

namespace {

// Records what the registry asked for, and keeps the "kernel table" it implies.
struct FakeActions : RegistryActions {
    std::map<IpAddr, int> routes;
    std::vector<IpAddr> probes;
    int installs = 0, removes = 0, changes = 0;
    void installRoute(const IpAddr& ip, int ifindex) override {
        routes[ip] = ifindex;
        ++installs;
    }
    void removeRoute(const IpAddr& ip, int) override {
        routes.erase(ip);
        ++removes;
    }
    void sendProbe(const HostRecord& h) override { probes.push_back(h.ip); }
    void hostChanged(const IpAddr&) override { ++changes; }
};

const MacAddr kMac{2, 0, 0, 0, 0, 1};

netlink::NeighborEntry neigh(const std::string& ip, uint16_t state = NUD_REACHABLE, int ifindex = 3,
                             MacAddr mac = kMac) {
    netlink::NeighborEntry n;
    n.ifindex = ifindex;
    n.ip = *IpAddr::parse(ip);
    n.mac = mac;
    n.state = state;
    return n;
}

IpAddr ip(const std::string& s) {
    return *IpAddr::parse(s);
}

struct RegistryTest : ::testing::Test {
    FakeActions actions;
    TimePoint t0 = TimePoint{} + 1000s;
    Limits limits{100, 10, 1000.0, 1000};
    Liveness liveness{1000ms, 3000ms};
    HostRegistry reg{actions, limits, liveness};

    // Fires the registry's timer at every deadline it asks for, as the daemon does.
    static void runUntil(HostRegistry& r, TimePoint end) {
        while (auto next = r.nextDeadline()) {
            if (*next > end) break;
            r.onTimer(*next);
        }
        r.onTimer(end);
    }
    void runUntil(TimePoint end) { runUntil(reg, end); }
};

}  // namespace

TEST_F(RegistryTest, AcceptInstallsOnceAndRejectRemoves) {
    reg.accept(neigh("10.1.1.10"), Source::Local, t0);
    reg.accept(neigh("10.1.1.10"), Source::Local, t0 + 1ms);
    EXPECT_EQ(actions.installs, 1);
    EXPECT_EQ(actions.routes.at(ip("10.1.1.10")), 3);
    EXPECT_EQ(reg.installedCount(), 1u);
    reg.reject(ip("10.1.1.10"), 3, t0 + 2ms);
    EXPECT_TRUE(actions.routes.empty());
    EXPECT_EQ(reg.stats().withdrawn, 1u);
    EXPECT_EQ(reg.size(), 0u);
}

TEST_F(RegistryTest, AnotherPortCannotTakeAnAddressWhoseHolderAnswers) {
    // The attack of issue 18: a server claims its neighbour's address on its own port.
    const MacAddr attacker{2, 0, 0, 0, 0, 0x66};
    EXPECT_EQ(reg.accept(neigh("10.1.1.10", NUD_REACHABLE, 3), Source::Local, t0), Claim::Accepted);
    for (int i = 1; i <= 3; ++i) {
        EXPECT_EQ(reg.accept(neigh("10.1.1.10", NUD_REACHABLE, 4, attacker), Source::Local,
                             t0 + i * 100ms),
                  Claim::Duplicate);
    }
    EXPECT_EQ(actions.routes.at(ip("10.1.1.10")), 3);
    EXPECT_EQ(actions.installs, 1);
    EXPECT_EQ(reg.stats().duplicates, 3u);
    EXPECT_EQ(reg.stats().moves, 0u);
    EXPECT_EQ(*reg.find(ip("10.1.1.10"))->mac, kMac);
    // The victim keeps answering its probes from its own MAC: it stays.
    reg.hostSeen(3, ip("10.1.1.10"), kMac, t0 + 2s);
    runUntil(t0 + 4s);
    EXPECT_EQ(reg.find(ip("10.1.1.10"))->state, RouteState::Installed);
}

TEST_F(RegistryTest, HostMovesOnceItsOldPortStopsAnswering) {
    reg.accept(neigh("10.1.1.10", NUD_REACHABLE, 3), Source::Local, t0);
    runUntil(t0 + 3001ms);  // holdtime without an answer: unresponsive, withdrawn
    ASSERT_EQ(reg.find(ip("10.1.1.10"))->state, RouteState::Unresponsive);
    EXPECT_EQ(reg.accept(neigh("10.1.1.10", NUD_REACHABLE, 4), Source::Local, t0 + 3100ms),
              Claim::Accepted);
    EXPECT_EQ(actions.routes.at(ip("10.1.1.10")), 4);
    EXPECT_EQ(reg.stats().moves, 1u);
    EXPECT_EQ(reg.installedCount(), 1u);
}

TEST_F(RegistryTest, MovesTakeTokensLikeNewHosts) {
    HostRegistry slow{actions, Limits{1000, 1000, 1.0, 1}, Liveness{0ms, 3000ms}};
    slow.accept(neigh("10.1.1.10", NUD_REACHABLE, 3), Source::Local, t0);  // the one token
    EXPECT_EQ(slow.accept(neigh("10.1.1.10", NUD_REACHABLE, 4), Source::Local, t0 + 1ms),
              Claim::Accepted);
    EXPECT_EQ(slow.find(ip("10.1.1.10"))->state, RouteState::Pending);
    EXPECT_EQ(actions.routes.at(ip("10.1.1.10")), 3);  // the old route stays meanwhile
    EXPECT_EQ(slow.stats().rateLimited, 1u);
    runUntil(slow, t0 + 1100ms);
    EXPECT_EQ(actions.routes.at(ip("10.1.1.10")), 4);
}

TEST_F(RegistryTest, FlappingAddressFreezesOnItsFirstPortAndThaws) {
    // No probing: nothing proves either side, so each claim is a move until the freeze.
    HostRegistry flap{actions, limits, Liveness{0ms, 3000ms}, MoveGuard{5, 180s}};
    flap.accept(neigh("10.1.1.10", NUD_REACHABLE, 3), Source::Local, t0);
    int moved = 0;
    Claim last = Claim::Accepted;
    for (int i = 1; i <= 10 && last == Claim::Accepted; ++i) {
        last = flap.accept(neigh("10.1.1.10", NUD_REACHABLE, i % 2 == 1 ? 4 : 3), Source::Local,
                           t0 + i * 1s);
        if (last == Claim::Accepted) ++moved;
    }
    EXPECT_EQ(last, Claim::Frozen);
    EXPECT_EQ(moved, 4);  // the fifth move freezes
    const HostRecord* rec = flap.find(ip("10.1.1.10"));
    ASSERT_TRUE(rec->frozenSince);
    EXPECT_EQ(rec->ifindex, 3);
    EXPECT_EQ(actions.routes.at(ip("10.1.1.10")), 3);
    const int installs = actions.installs;
    for (int i = 0; i < 50; ++i)  // a frozen address costs no more route writes
        EXPECT_EQ(flap.accept(neigh("10.1.1.10", NUD_REACHABLE, 4), Source::Local, t0 + 10s),
                  Claim::Frozen);
    EXPECT_EQ(actions.installs, installs);
    EXPECT_EQ(flap.stats().frozen, 1u);
    EXPECT_TRUE(flap.thaw(t0 + 100s).empty());  // claims came 90 s ago
    EXPECT_EQ(flap.thaw(t0 + 191s).size(), 1u);
    EXPECT_FALSE(flap.find(ip("10.1.1.10"))->frozenSince);
}

TEST_F(RegistryTest, FlapThroughDeletesStillFreezes) {
    // The address leaves each port (its entry deleted) before it shows up on the other:
    // each return elsewhere is a move all the same.
    HostRegistry flap{actions, limits, liveness, MoveGuard{3, 180s}};
    const IpAddr a = ip("10.1.1.10");
    Claim last = Claim::Accepted;
    int writes = 0;
    for (int i = 0; i < 8 && last != Claim::Frozen; ++i) {
        const int port = i % 2 == 0 ? 3 : 4;
        last = flap.accept(neigh("10.1.1.10", NUD_REACHABLE, port), Source::Local, t0 + i * 1s);
        writes = actions.installs;
        flap.reject(a, port, t0 + i * 1s + 500ms);
    }
    EXPECT_EQ(last, Claim::Frozen);
    EXPECT_EQ(flap.stats().moves, 3u);
    EXPECT_EQ(writes, 3);  // the first port, then two moves; the third move froze
    EXPECT_EQ(flap.accept(neigh("10.1.1.10", NUD_REACHABLE, 4), Source::Local, t0 + 20s),
              Claim::Frozen);
    EXPECT_EQ(flap.accept(neigh("10.1.1.10", NUD_REACHABLE, 3), Source::Local, t0 + 21s),
              Claim::Accepted);  // its first port
    EXPECT_TRUE(flap.find(a)->frozenSince);
}

TEST_F(RegistryTest, OperatorUnfreezes) {
    HostRegistry flap{actions, limits, Liveness{0ms, 3000ms}, MoveGuard{2, 60s}};
    flap.accept(neigh("10.1.1.10", NUD_REACHABLE, 3), Source::Local, t0);
    flap.accept(neigh("10.1.1.10", NUD_REACHABLE, 4), Source::Local, t0 + 1s);
    // The second move freezes it, on port 3 where it was first learned and is heard now.
    EXPECT_EQ(flap.accept(neigh("10.1.1.10", NUD_REACHABLE, 3), Source::Local, t0 + 2s),
              Claim::Accepted);
    EXPECT_TRUE(flap.find(ip("10.1.1.10"))->frozenSince);
    EXPECT_EQ(flap.accept(neigh("10.1.1.10", NUD_REACHABLE, 4), Source::Local, t0 + 2500ms),
              Claim::Frozen);
    EXPECT_TRUE(flap.unfreeze(ip("10.1.1.10"), t0 + 3s));
    EXPECT_FALSE(flap.unfreeze(ip("10.1.1.10"), t0 + 3s));
    EXPECT_EQ(flap.accept(neigh("10.1.1.10", NUD_REACHABLE, 4), Source::Local, t0 + 4s),
              Claim::Accepted);
}

TEST_F(RegistryTest, BoundNeighborTakesTheAddressAtOnce) {
    reg.accept(neigh("10.1.1.10", NUD_REACHABLE, 4), Source::Local, t0);  // learned first
    EXPECT_EQ(reg.accept(neigh("10.1.1.10", NUD_REACHABLE, 3), Source::Local, t0 + 1ms, true),
              Claim::Accepted);
    EXPECT_EQ(actions.routes.at(ip("10.1.1.10")), 3);
}

TEST_F(RegistryTest, EventsOnAnotherPortNeverTouchTheHost) {
    reg.accept(neigh("10.1.1.10", NUD_REACHABLE, 3), Source::Local, t0);
    reg.reject(ip("10.1.1.10"), 4, t0 + 1ms);   // a delete or rejection on another port
    reg.reject(ip("10.1.1.10"), 99, t0 + 2ms);  // or on a management interface
    EXPECT_EQ(actions.routes.at(ip("10.1.1.10")), 3);
    EXPECT_EQ(reg.size(), 1u);
    reg.reject(ip("10.1.1.10"), 3, t0 + 3ms);
    EXPECT_EQ(reg.size(), 0u);
}

TEST_F(RegistryTest, ProofOfLifeComesOnlyFromTheRecordedMac) {
    reg.accept(neigh("10.1.1.10", NUD_STALE), Source::Local, t0);
    const MacAddr other{2, 0, 0, 0, 0, 0x66};
    for (auto t = t0 + 500ms; t < t0 + 3500ms; t += 500ms)
        reg.hostSeen(3, ip("10.1.1.10"), other, t);
    runUntil(t0 + 3500ms);
    EXPECT_EQ(reg.find(ip("10.1.1.10"))->state, RouteState::Unresponsive);
    reg.hostSeen(3, ip("10.1.1.10"), kMac, t0 + 3600ms);
    EXPECT_EQ(reg.find(ip("10.1.1.10"))->state, RouteState::Installed);
}

TEST_F(RegistryTest, PerPortAndGlobalCapsRefuse) {
    for (int i = 0; i < 15; ++i)
        reg.accept(neigh("10.1.1." + std::to_string(i + 10)), Source::Local, t0);
    EXPECT_EQ(reg.size(), 10u);
    EXPECT_EQ(reg.stats().refused, 5u);
    for (int port = 4; port < 20; ++port)
        for (int i = 0; i < 10; ++i)
            reg.accept(neigh("10." + std::to_string(port) + ".0." + std::to_string(i + 1),
                             NUD_REACHABLE, port),
                       Source::Local, t0);
    EXPECT_EQ(reg.size(), 100u);
    EXPECT_EQ(reg.stats().refused, 5u + 70u);  // 160 tried, 90 fitted under 100
}

TEST_F(RegistryTest, RateLimitDefersAndDrains) {
    HostRegistry slow{actions, Limits{1000, 1000, 10.0, 5}, liveness};
    for (int i = 0; i < 25; ++i)
        slow.accept(neigh("10.1.1." + std::to_string(i + 10)), Source::Local, t0);
    EXPECT_EQ(actions.installs, 5);
    EXPECT_EQ(slow.pendingCount(), 20u);
    EXPECT_EQ(slow.stats().rateLimited, 20u);
    auto next = slow.nextDeadline();
    ASSERT_TRUE(next.has_value());
    EXPECT_LE(*next, t0 + 101ms);  // the next token, not the next probe
    runUntil(slow, t0 + 1s);
    EXPECT_GE(actions.installs, 14);  // 10 per second after the burst
    EXPECT_LE(actions.installs, 15);
    runUntil(slow, t0 + 2s + 1ms);
    EXPECT_EQ(actions.installs, 25);
    EXPECT_EQ(slow.pendingCount(), 0u);
}

TEST_F(RegistryTest, SilentHostIsWithdrawnAtHoldtimeAndReturnsWhenSeen) {
    reg.accept(neigh("10.1.1.10", NUD_STALE), Source::Local, t0);
    runUntil(t0 + 2900ms);
    EXPECT_EQ(actions.routes.count(ip("10.1.1.10")), 1u);
    EXPECT_GE(actions.probes.size(), 2u);  // probed about once per keepalive
    EXPECT_LE(actions.probes.size(), 3u);
    runUntil(t0 + 3000ms);
    EXPECT_EQ(actions.routes.count(ip("10.1.1.10")), 0u);  // exactly at holdtime
    EXPECT_EQ(reg.find(ip("10.1.1.10"))->state, RouteState::Unresponsive);
    EXPECT_EQ(reg.stats().expired, 1u);
    runUntil(t0 + 5000ms);
    EXPECT_GE(actions.probes.size(), 4u);  // still probed while withdrawn
    reg.hostSeen(3, ip("10.1.1.10"), kMac, t0 + 5001ms);
    EXPECT_EQ(actions.routes.count(ip("10.1.1.10")), 1u);
}

TEST_F(RegistryTest, AnsweringHostStaysAndStaleIsNotProof) {
    reg.accept(neigh("10.1.1.10", NUD_STALE), Source::Local, t0);
    for (auto t = t0 + 500ms; t < t0 + 20s; t += 1s) {
        runUntil(t);
        reg.hostSeen(3, ip("10.1.1.10"), kMac, t);  // replies to each probe
    }
    EXPECT_EQ(actions.removes, 0);
    // STALE events alone do not keep a host alive.
    for (auto t = t0 + 20s; t < t0 + 30s; t += 500ms) {
        reg.accept(neigh("10.1.1.10", NUD_STALE), Source::Local, t);
        runUntil(t);
    }
    EXPECT_EQ(actions.removes, 1);
}

TEST_F(RegistryTest, SeenOnWrongPortIsNotProof) {
    reg.accept(neigh("10.1.1.10", NUD_STALE), Source::Local, t0);
    reg.hostSeen(9, ip("10.1.1.10"), kMac, t0 + 2s);
    runUntil(t0 + 3s);
    EXPECT_EQ(actions.routes.count(ip("10.1.1.10")), 0u);
}

TEST_F(RegistryTest, PermanentIsNotProbedOrExpired) {
    reg.accept(neigh("10.1.1.21", NUD_PERMANENT), Source::Local, t0);
    runUntil(t0 + 60s);
    EXPECT_TRUE(actions.probes.empty());
    EXPECT_EQ(actions.routes.size(), 1u);
}

// An ES peer's host (a static neighbor of ours) lives on FRR's peerActive or its answers
// to our probes (hostSeen), and is withdrawn a holdtime after both stop.
TEST_F(RegistryTest, EsPeerHostIsProbedAndExpiresWithoutProofOfLife) {
    reg.accept(neigh("10.1.1.20", NUD_PERMANENT), Source::EsPeer, t0);
    runUntil(t0 + 5s);
    reg.hostSeen(neigh("10.1.1.20", NUD_PERMANENT).ifindex, ip("10.1.1.20"), kMac, t0 + 5s);
    runUntil(t0 + 7s);
    EXPECT_FALSE(actions.probes.empty());
    EXPECT_EQ(actions.routes.count(ip("10.1.1.20")), 1u);  // seen at 5 s: holdtime from there
    reg.peerViewRead(t0 + 9s);  // FRR's view, read after the deadline, without it
    runUntil(t0 + 9300ms);
    EXPECT_EQ(actions.routes.count(ip("10.1.1.20")), 0u);
}

// Its proof may come from FRR's view only (its answers to our probes reach the ES peer,
// which shares the gateway MAC), and reading that view can take seconds (vtysh through
// SONiC's bgp container): a slow read is not a silent host.
TEST_F(RegistryTest, EsPeerHostWaitsForAViewReadAfterItsDeadline) {
    const IpAddr host = ip("10.1.1.20");
    const int svi = neigh("10.1.1.20").ifindex;
    reg.accept(neigh("10.1.1.20", NUD_PERMANENT), Source::EsPeer, t0);
    reg.peerViewRead(t0);
    runUntil(t0 + 5s);  // the next read started at 1 s, is still running at 5 s
    EXPECT_EQ(actions.routes.count(host), 1u);
    reg.hostSeen(svi, host, std::nullopt, t0 + 1s);  // it comes in: peerActive as of 1 s
    reg.peerViewRead(t0 + 1s);
    runUntil(t0 + 3900ms);
    EXPECT_EQ(actions.routes.count(host), 1u);  // holdtime from 1 s
    EXPECT_EQ(reg.stats().expired, 0u);
    // A read that started at 4.1 s, past the deadline, without it: withdrawn at the next check.
    runUntil(t0 + 6s);
    reg.peerViewRead(t0 + 4100ms);
    runUntil(t0 + 6250ms);
    EXPECT_EQ(actions.routes.count(host), 0u);
    EXPECT_EQ(reg.stats().expired, 1u);
    // FRR's view confirms it again: back.
    reg.hostSeen(svi, host, std::nullopt, t0 + 6500ms);
    EXPECT_EQ(actions.routes.count(host), 1u);
}

TEST_F(RegistryTest, EsPeerHostGoesWhenTheViewStaysUnreadLong) {
    reg.accept(neigh("10.1.1.20", NUD_PERMANENT), Source::EsPeer, t0);
    reg.peerViewRead(t0);
    runUntil(t0 + 32900ms);  // deadline 3 s, then 30 s without a read
    EXPECT_EQ(actions.routes.count(ip("10.1.1.20")), 1u);
    runUntil(t0 + 33300ms);
    EXPECT_EQ(actions.routes.count(ip("10.1.1.20")), 0u);
    // A local host never waits for FRR.
    reg.accept(neigh("10.1.1.10", NUD_STALE), Source::Local, t0 + 40s);
    runUntil(t0 + 43s);
    EXPECT_EQ(actions.routes.count(ip("10.1.1.10")), 0u);
}

TEST_F(RegistryTest, PortDownWithdrawsOnlyThatPort) {
    reg.accept(neigh("10.1.1.10", NUD_REACHABLE, 3), Source::Local, t0);
    reg.accept(neigh("10.1.1.11", NUD_REACHABLE, 3), Source::Local, t0);
    reg.accept(neigh("10.2.1.10", NUD_REACHABLE, 4), Source::Local, t0);
    reg.portDown(3, t0 + 1ms);
    EXPECT_EQ(actions.routes.size(), 1u);
    EXPECT_EQ(actions.routes.count(ip("10.2.1.10")), 1u);
}

TEST_F(RegistryTest, RestartAdoptsUnchangedSweepsGoneAddsNew) {
    // Routes a previous run left in the kernel.
    reg.adoptRoute({ip("10.1.1.10"), 3, 10, 201}, t0);
    reg.adoptRoute({ip("10.1.1.11"), 3, 10, 201}, t0);
    reg.adoptRoute({ip("10.1.1.12"), 3, 10, 201}, t0);
    reg.beginSnapshot();
    reg.accept(neigh("10.1.1.10"), Source::Local, t0);                    // unchanged
    reg.accept(neigh("10.1.1.11", NUD_REACHABLE, 4), Source::Local, t0);  // moved port
    reg.accept(neigh("10.1.1.13"), Source::Local, t0);                    // new
    reg.endSnapshot(t0);                                                  // .12 is gone
    EXPECT_EQ(actions.installs, 2);  // the move and the new host; .10 untouched
    EXPECT_EQ(actions.removes, 1);
    EXPECT_EQ(actions.routes.count(ip("10.1.1.10")), 0u);  // never re-written
    EXPECT_EQ(actions.routes.at(ip("10.1.1.11")), 4);
    EXPECT_EQ(reg.installedCount(), 3u);
}

TEST_F(RegistryTest, SnapshotSweepsEntriesMissedDuringOverflow) {
    reg.accept(neigh("10.1.1.10"), Source::Local, t0);
    reg.accept(neigh("10.1.1.11"), Source::Local, t0);
    reg.beginSnapshot();
    reg.accept(neigh("10.1.1.10"), Source::Local, t0 + 1s);
    reg.endSnapshot(t0 + 1s);
    EXPECT_EQ(actions.routes.size(), 1u);
    EXPECT_EQ(reg.stats().resyncs, 1u);
}

// A host asked after its port came back (the host-port hold, a cable) answers our probe;
// the kernel learns nothing from that answer. The next dump, which does not have it (the
// other held port coming up asks for one), must not take it away again: nobody would ask
// it a second time. It goes when it stops answering, as any probed host.
TEST_F(RegistryTest, AHostAnsweringOurProbesSurvivesDumpsWithoutIt) {
    const IpAddr host = ip("10.1.1.10");
    reg.accept(neigh("10.1.1.10", NUD_STALE), Source::Local, t0, true);  // its answer, heard
    reg.hostSeen(3, host, kMac, t0);
    for (auto t = t0 + 500ms; t < t0 + 10s; t += 1s) {
        reg.beginSnapshot();
        reg.endSnapshot(t);
        runUntil(t);
        reg.hostSeen(3, host, kMac, t);  // answers each probe
    }
    EXPECT_EQ(actions.routes.count(host), 1u);
    EXPECT_EQ(actions.removes, 0);
    runUntil(t0 + 13s);  // silent since 9.5 s: withdrawn at the holdtime
    EXPECT_EQ(actions.routes.count(host), 0u);
    reg.beginSnapshot();
    reg.endSnapshot(t0 + 13s);
    EXPECT_EQ(reg.find(host), nullptr);  // and no longer kept by a dump
}

TEST_F(RegistryTest, FailedRouteIsRetriedOnNextEvent) {
    reg.accept(neigh("10.1.1.10"), Source::Local, t0);
    reg.routeFailed(ip("10.1.1.10"), 19);
    EXPECT_EQ(reg.find(ip("10.1.1.10"))->state, RouteState::Failed);
    EXPECT_EQ(reg.installedCount(), 0u);
    reg.accept(neigh("10.1.1.10"), Source::Local, t0 + 1s);
    EXPECT_EQ(reg.find(ip("10.1.1.10"))->state, RouteState::Installed);
    EXPECT_EQ(actions.installs, 2);
}

TEST_F(RegistryTest, ProbesAreSpreadOverThePeriod) {
    HostRegistry big{actions, Limits{1000, 1000, 1000.0, 1000}, liveness};
    for (int i = 0; i < 200; ++i)
        big.accept(neigh("10.1." + std::to_string(i / 100) + "." + std::to_string(i % 100 + 2),
                         NUD_REACHABLE, 3 + i / 10),
                   Source::Local, t0);
    // Count probes in each 100 ms slice of one keepalive period: no slice gets a burst.
    std::vector<size_t> perSlice;
    for (int slice = 1; slice <= 10; ++slice) {
        size_t before = actions.probes.size();
        runUntil(big, t0 + std::chrono::milliseconds(slice * 100) - 1ns);
        perSlice.push_back(actions.probes.size() - before);
    }
    size_t total = 0;
    for (auto n : perSlice) {
        total += n;
        EXPECT_LE(n, 45u);
    }
    EXPECT_EQ(total, 200u);
}
