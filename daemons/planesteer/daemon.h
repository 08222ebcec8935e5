// planesteer's modules on one io_context: the netlink monitor says which on-link peers
// each bond talks to (its neighbor entries: the same rail, behind proxy ARP), which ports
// have carrier, the bond's MAC, address and subnet, and the gateway's MAC; EchoProber's
// samples of outgoing traffic say which peers on other rails it talks to; fast notices
// from the planes' switches (notice_intake.h) say at once that a plane lost some. Every interval
// each peer is probed out of each port (on-link: ArpProber; other rails: EchoProber
// through the gateway); the policy (steer_policy.h) decides, and TcPins applies. Each
// kind of peer has a budget of its own (peer_budget.h). Every minute each bond's counters
// (answers, answers refused as unmatched, pins, evictions) go to the log.
//
// Its edges (the kernel, the ports' packet sockets, tc, the clock) come in as Edges
// (edges.h). Nothing it does waits: tc runs through the CommandRunner (tc_pins.h), and
// nothing thrown inside a callback of the loop leaves it (it is logged).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "arp_prober.h"
#include "config.h"
#include "echo_prober.h"
#include "edges.h"
#include "notice_intake.h"
#include "peer_budget.h"
#include "probe_schedule.h"
#include "steer_policy.h"
#include "tc_pins.h"
#include "twinrail/netlink/monitor.h"

namespace twinrail::planesteer {

inline ScheduleParams scheduleParams(const Config& c) {
    return {c.steer.interval, c.steer.activeInterval, c.activeWindow, c.maxActivePeers};
}

struct Bond {
    std::string name;
    BondConfig cfg;
    const std::vector<std::string>& ports;
    int ifindex = 0;
    std::vector<int> portIfindex;
    std::optional<MacAddr> mac;
    std::optional<IpPrefix> address;  // the bond's address and its subnet
    std::optional<MacAddr> gatewayMac;
    SteerPolicy policy;
    std::unique_ptr<ArpProber> prober;
    std::unique_ptr<EchoProber> echo;  // only with gateway and fabric
    std::unique_ptr<TcPins> pins;
    std::set<IpAddr> seenInSnapshot;
    PeerBudget onlink;  // from the neighbor table: last neighbor update
    PeerBudget remote;  // peers on other rails: last sampled
    ProbeSchedule schedule;
    Bond(std::string n, BondConfig c, const Config& all)
        : name(std::move(n)),
          cfg(std::move(c)),
          ports(cfg.ports),
          portIfindex(ports.size(), 0),
          policy(ports.size(), all.steer),
          onlink(all.maxOnlinkPeers),
          remote(all.maxRemotePeers),
          schedule(scheduleParams(all)) {}
    Bond(const Bond&) = delete;
    Bond& operator=(const Bond&) = delete;
};

class Daemon final : public netlink::NetlinkObserver {
  public:
    Daemon(boost::asio::io_context& io, Config config, Edges edges);
    // Opens the ports and subscribes to the kernel; throws on failure. Returns without
    // waiting for tc: a previous run's pins are cleared in the background.
    void start();
    void stop();
    void applyConfig(const Config& next);

    const Bond* bond(const std::string& name) const;
    uint64_t rounds() const { return rounds_; }  // probe rounds so far
    // Fast notices so far (all zero while notice_port is 0).
    fnn::GuardCounters noticeCounters() const;

    void onLink(const netlink::LinkState& link, bool removed) override;
    void onAddress(const netlink::AddressEntry& addr, bool removed) override;
    void onNeighbor(const netlink::NeighborEntry& neigh, bool removed) override;
    void onSnapshotBegin() override;
    void onSnapshotEnd() override;
    void onSnapshotAborted() override;
    void onBurstEnd() override {}

  private:
    void reconfigure(const Config& next);
    void linkChanged(const netlink::LinkState& link, bool removed);
    void addressChanged(const netlink::AddressEntry& addr, bool removed);
    void neighborChanged(const netlink::NeighborEntry& n, bool removed);
    void armProbe();
    void probeAll();
    void probe(Bond& b, Clock::time_point now);
    void decide(Bond& b);
    void forget(Bond& b, const IpAddr& peer);
    void askGateway(Bond& b);
    void sampled(Bond& b, const IpAddr& dst);
    void setLimits(Bond& b);
    void logCounters();
    void startNotices();
    void onNotice(const fnn::Datagram& d);
    Bond* bondOf(int ifindex);

    Config cfg_;
    Edges edges_;
    std::vector<std::unique_ptr<Bond>> bonds_;
    std::unique_ptr<netlink::KernelEvents> kernel_;
    std::unique_ptr<NoticeIntake> intake_;  // with notice_port
    std::unique_ptr<fnn::NoticeSocket> notices_;
    uint64_t noticesRefusedAtLastLog_ = 0;
    boost::asio::steady_timer probeTimer_;
    uint64_t rounds_ = 0;
    Clock::time_point lastCounters_{};
    uint64_t refusedAtLastLog_ = 0;
    bool inSnapshot_ = false;
};

}  // namespace twinrail::planesteer
