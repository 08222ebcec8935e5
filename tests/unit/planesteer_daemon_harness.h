// planesteer's orchestration against fakes of its edges (no root, no network): the kernel
// (FakeKernel), the ports' packet sockets (FakeWire: planes that answer or go silent per
// peer), tc (FakeTc: a model of the pin table, answering at once or when the test says)
// and the clock (the test's). Probe rounds run on the loop's timer every millisecond;
// the policy sees only the test's clock, which each round() moves one interval on.
#pragma once

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

namespace twinrail::planesteer::harness {

using namespace std::chrono_literals;

inline constexpr int kBond = 10, kPort1 = 11, kPort2 = 12;
inline const std::string kTc = "/usr/sbin/tc";
inline const std::string kEgress = kTc + " filter ";
inline const std::string kHead = " dev bond0 egress pref 100 protocol ip ";

inline IpAddr ip(const char* s) {
    return *IpAddr::parse(s);
}

inline netlink::LinkState link(int ifindex, const std::string& name, bool up) {
    netlink::LinkState l;
    l.ifindex = ifindex;
    l.name = name;
    l.adminUp = true;
    l.operUp = up;
    l.mac = MacAddr{0x02, 0, 0, 0, 0, static_cast<uint8_t>(ifindex)};
    return l;
}

inline netlink::NeighborEntry neighbor(const IpAddr& peer, uint8_t last = 0x33) {
    netlink::NeighborEntry n;
    n.ifindex = kBond;
    n.ip = peer;
    n.mac = MacAddr{0x02, 0xee, 0, 0, 0, last};
    n.state = NUD_REACHABLE;
    return n;
}

inline size_t count(const std::vector<std::string>& lines, const std::string& part) {
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

// planesteer only receives notices.
struct NoSend : fnn::NoticeSocket {
    bool send(const IpAddr&, uint16_t, std::span<const uint8_t>) override { return false; }
};

class PlanesteerDaemon : public ::testing::Test {
  protected:
    PlanesteerDaemon() {
        cfg.steer.interval = 1ms;
        cfg.steer.activeInterval = 1ms;
        cfg.steer.misses = 3;
        cfg.bonds["bond0"].ports = {"port1", "port2"};
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
        // Fast notices: the test hands datagrams to the daemon's handler itself.
        e.notices = [this](std::optional<IpAddr>, uint16_t port, fnn::DatagramHandler handler) {
            noticePort = port;
            noticeHandler = std::move(handler);
            return std::make_unique<NoSend>();
        };
        e.wallNs = [this] { return wallNs; };
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
    uint64_t wallNs = 1'800'000'000'000'000'000ULL;
    uint16_t noticePort = 0;  // what the daemon opened (0: none)
    fnn::DatagramHandler noticeHandler;
    fakes::FakeKernel* kernel = nullptr;
    fakes::FakeTc* tc = nullptr;
    std::unique_ptr<Daemon> daemon;
    const IpAddr peer = ip("10.128.0.3");
    const std::string pinPeer = kEgress + "replace" + kHead +
                                "handle 1:3:1 u32 ht 1:3: match ip dst 10.128.0.3/32 action "
                                "mirred egress redirect dev port1";
};

}  // namespace twinrail::planesteer::harness
