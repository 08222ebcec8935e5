// Follows FRR's EVPN view for es_attachment.h: reads zebra's three JSON views over its own
// vty socket (frr::DaemonVty: no vtysh process, nothing blocking) every poll interval, and
// hands a view to the daemon when it changed. Why a poll: on a stock kernel the peer-synced
// host leaves no trace in the kernel of the leaf that did not get its ARP (no neighbor, no
// FDB entry, no netlink event), so nothing local can trigger the read; zebra's FPM carries
// no EVPN neighbors in FRR 8.4, and following its debug log would parse free text. At 100 ms
// the three reads took 1-2 ms together (max 5-8 ms) on the lab's leaves (lab_evpn_it prints
// it; HOST_ROUTE_STATS evpn_poll_ms); larger leaves were not measured.
//
// A failed read keeps the last view (a zebra restart must not withdraw hosts), and for a
// while after zebra restarts, while its EVPN state is rebuilt from BGP, hosts are only
// added: one missing from the new view stays (mergeDuringHold).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "evpn_view.h"
#include "twinrail/frr/channel.h"

namespace twinrail::hostrouted {

struct EsSyncStats {
    uint64_t polls = 0;
    uint64_t errors = 0;
    uint64_t changes = 0;
    double lastPollMs = 0;
    double maxPollMs = 0;
    std::string lastError;
};

// The view to use while zebra is rebuilding: `fresh`, plus every neighbor of `old` that
// `fresh` lacks (with its MAC and segment).
EvpnView mergeDuringHold(const EvpnView& old, const EvpnView& fresh);

class EsSync {
  public:
    using Handler = std::function<void(const EvpnView&)>;
    // onChange: the view changed. onRead: every successful read (liveness).
    EsSync(boost::asio::io_context& io, frr::Channel& frr, std::chrono::milliseconds interval,
           Handler onChange, Handler onRead);

    void start();
    void stop();
    void zebraRestarted();  // from frr::RestartWatcher
    const EsSyncStats& stats() const { return stats_; }
    const std::optional<EvpnView>& view() const { return view_; }
    // When the read that gave view() started: what it says holds from then on (a read
    // through the bgp container takes seconds on SONiC).
    std::chrono::steady_clock::time_point viewAsOf() const { return viewAsOf_; }

  private:
    void poll();
    void scheduleNext();
    void finishPoll(bool ok, const std::string& error);
    void apply(EvpnView fresh);

    frr::Channel& frr_;
    // Replies check it: the channel outlives this object, and may answer after it is gone.
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);
    std::chrono::milliseconds interval_;
    Handler onChange_;
    Handler onRead_;
    boost::asio::steady_timer timer_;
    std::optional<EvpnView> view_;
    std::string arp_, mac_;
    std::chrono::steady_clock::time_point pollStart_{}, holdUntil_{}, viewAsOf_{};
    EsSyncStats stats_;
    bool running_ = false;
    bool errorLogged_ = false;
};

}  // namespace twinrail::hostrouted
