// Applies desired FRR policy (frr_policy.h) through FRR's channel (vtysh on a switch, a
// fake in unit tests): one batch at a time, the
// newest desired state wins (intermediate ones are skipped), only the missing lines
// are sent, and the soft refreshes follow in the same call so the change reaches the
// leaves' kernels in a few hundred milliseconds instead of FRR's 5 s route-map timer.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "frr_policy.h"
#include "twinrail/frr/channel.h"

namespace twinrail::pathqd {

struct PublisherStats {
    uint64_t batches = 0;  // vtysh calls that changed configuration
    uint64_t linesSent = 0;
    uint64_t errors = 0;
    uint64_t refusedLines = 0;  // held back: a control character (dropUnsafeLines)
    double lastBatchMs = 0;
};

class FrrPublisher {
  public:
    // `retry`: how long to wait after FRR could not be read or refused a batch. The
    // channel outlives the publisher; replies that come after it is gone are dropped.
    FrrPublisher(boost::asio::io_context& io, frr::Channel& frr,
                 std::chrono::milliseconds retry = std::chrono::seconds(1));
    void request(PolicyInput desired);
    void audit();  // forget the cached running config; re-read and re-diff
    const PublisherStats& stats() const { return stats_; }
    const std::string& state() const { return state_; }  // ok, unreachable, no-bgp, conflict, error

  private:
    void kick();
    void readRunning();
    void retryLater();
    frr::Channel& frr_;
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // replies check it
    std::chrono::milliseconds retryAfter_;
    boost::asio::steady_timer retry_;
    std::optional<frr::RunningConfig> running_;
    std::optional<PolicyInput> desired_;  // the newest request
    bool dirty_ = false;                  // desired_ not yet applied
    bool inFlight_ = false;
    std::string state_ = "starting";
    std::map<std::string, std::string> conflicts_;
    std::set<std::pair<std::string, Refresh>> pendingRefresh_;  // from chunks sent so far
    std::vector<std::string> lastRefused_;                      // logged once, not at every diff
    PublisherStats stats_;
};

}  // namespace twinrail::pathqd
