// Which peers are probed now. A peer the NIC is sending to (seen in the sampled traffic
// within `activeWindow`) is probed every `activeInterval`, so that losing it in a plane is
// noticed in `misses` of those (60 ms by default) instead of `misses` idle intervals
// (600 ms); every other peer every `idleInterval`. The fast set is capped at `maxActive`,
// the most recently seen first, so that a NIC talking to thousands of peers (an
// all-to-all) costs at most maxActive fast probes and never becomes a probe storm: per
// port, maxActive / activeInterval + idle peers / idleInterval packets a second. Pure:
// time comes in.
#pragma once

#include <chrono>
#include <map>
#include <set>
#include <vector>

#include "steer_policy.h"
#include "twinrail/common/ip.h"

namespace twinrail::planesteer {

struct ScheduleParams {
    std::chrono::milliseconds idleInterval{200};
    std::chrono::milliseconds activeInterval{20};
    std::chrono::milliseconds activeWindow{1000};  // traffic this recent makes a peer active
    size_t maxActive = 64;                         // 0: every peer at the idle interval
    bool operator==(const ScheduleParams&) const = default;
};

class ProbeSchedule {
  public:
    explicit ProbeSchedule(ScheduleParams p = {}) : p_(p) {}
    void setParams(const ScheduleParams& p) { p_ = p; }
    const ScheduleParams& params() const { return p_; }

    void traffic(const IpAddr& peer, Clock::time_point now);  // a sampled packet to `peer`
    void remove(const IpAddr& peer);

    struct Round {
        std::vector<IpAddr> probe;      // due now: probe them out of every port
        std::vector<IpAddr> nowActive;  // entered the fast set this round
        std::vector<IpAddr> nowIdle;    // left it
    };
    // The round at `now` over `peers` (the policy's): who is due, and who changed speed.
    // `fast` false keeps every peer at the idle interval: probes the leaf's CPU answers
    // (ARP, policed by control-plane policing) must not come at the active rate.
    Round round(const std::vector<IpAddr>& peers, Clock::time_point now, bool fast = true);
    bool active(const IpAddr& peer) const { return active_.count(peer) != 0; }
    size_t activeCount() const { return active_.size(); }
    // When the next round is worth running: the active interval while a peer is active.
    std::chrono::milliseconds tick() const {
        return active_.empty() ? std::min(p_.idleInterval, p_.activeWindow) : p_.activeInterval;
    }

  private:
    std::set<IpAddr> chooseActive(const std::vector<IpAddr>& peers, Clock::time_point now) const;
    ScheduleParams p_;
    std::map<IpAddr, Clock::time_point> lastTraffic_;
    std::map<IpAddr, Clock::time_point> lastProbe_;
    std::set<IpAddr> active_;
};

}  // namespace twinrail::planesteer
