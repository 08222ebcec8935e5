// Runs the weight audit (weight_audit.h) against the multipath weights in force, read
// through a ForwardingWeights source (the kernel's BGP routes that pathqd already follows,
// or on SONiC APPL_DB and ASIC_DB): routes with the same weights (and the same rule from
// FRR's weights to the source's, sonic_weight_rules.h) are one group, and one `show bgp ...
// <prefix> json` per group (at most kMaxLookups per round, the rest in the next round) says what
// BGP's link-bandwidth values imply.
//
// A diverged group is reported (stats and log). With `repair` (kernel source only), its
// kernel routes are
// deleted, and zebra, which still holds the right weights, installs them again; the
// covering route (a rail subnet, or the default) carries the traffic meanwhile. That
// needs CAP_NET_ADMIN, which pathqd's unit does not grant by default.
//
// Edges: FRR's channel (the lookups; it outlives the auditor, and replies that come after
// the auditor is gone are dropped), the weights in force and the kernel route table (the
// repair), all passed in.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "forwarding_weights.h"
#include "twinrail/frr/channel.h"
#include "twinrail/netlink/route_table.h"
#include "weight_audit.h"

namespace twinrail::pathqd {

struct WeightAuditStats {
    uint64_t rounds = 0;
    uint64_t lookups = 0;
    size_t divergedGroups = 0;  // in the last complete round
    size_t divergedPrefixes = 0;
    uint64_t repairs = 0;             // routes deleted for zebra to reinstall
    uint64_t errors = 0;              // lookups FRR did not answer, or answered oddly
    uint64_t readErrors = 0;          // rounds whose weights in force could not be read
    size_t badRows = 0;               // in the last read: rows of the source that were unusable
    std::string state = "unchecked";  // ok, diverged, unreachable, off
};

class WeightAuditor {
  public:
    using RouteWriter = std::function<std::unique_ptr<netlink::RouteProgrammer>()>;
    // `soon`: how long runSoon() waits (FRR re-forms its sessions meanwhile). `repair` is
    // ignored unless the source's routes are the kernel's.
    WeightAuditor(boost::asio::io_context& io, frr::Channel& frr,
                  std::unique_ptr<ForwardingWeights> source, RouteWriter routeWriter, bool repair,
                  std::chrono::milliseconds soon = std::chrono::seconds(10));
    void start(std::chrono::seconds interval);  // 0: off
    void setInterval(std::chrono::seconds interval);
    void setRepair(bool repair) { repair_ = repair; }
    void runSoon();  // e.g. after an FRR restart
    void stop();
    const WeightAuditStats& stats() const { return stats_; }

  private:
    struct Group {
        PortWeights forwarded;
        WeightRule rule = WeightRule::Exact;
        std::string from;
        std::vector<IpPrefix> routes;
    };
    void arm(std::chrono::milliseconds after);
    void round();
    void onRead(ForwardedRead read, const std::string& error);
    void checkNext(const std::shared_ptr<std::vector<Group>>& groups, size_t next,
                   const std::shared_ptr<WeightAuditStats>& result);
    void onLookup(const std::shared_ptr<std::vector<Group>>& groups, size_t next,
                  const std::shared_ptr<WeightAuditStats>& result, bool ok,
                  const std::string& text);
    void repairGroup(const Group& g);

    static constexpr size_t kMaxLookups = 32;
    static constexpr std::chrono::seconds kReadDeadline{60};  // FRR's lookups time out on their own
    frr::Channel& frr_;
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // replies check it
    std::unique_ptr<ForwardingWeights> source_;
    RouteWriter routeWriter_;
    bool repair_;
    std::chrono::milliseconds soon_;
    boost::asio::steady_timer timer_;
    std::chrono::seconds interval_{0};
    bool running_ = false;
    bool reading_ = false;  // the source's read is outstanding (before the lookups)
    uint64_t readId_ = 0;
    std::chrono::steady_clock::time_point readSince_{};
    size_t offset_ = 0;  // round robin over the groups when there are more than kMaxLookups
    WeightAuditStats stats_;
};

}  // namespace twinrail::pathqd
