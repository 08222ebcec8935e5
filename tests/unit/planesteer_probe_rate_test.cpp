// planesteer's probe rate per peer (probe_schedule.h) through the daemon, on the fakes of
// planesteer_daemon_harness.h.
#include "planesteer_daemon_harness.h"

namespace twinrail::planesteer {
namespace {

using namespace std::chrono_literals;
using namespace harness;

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

}  // namespace
}  // namespace twinrail::planesteer
