// Runs the weight audit (weight_audit.h) against the kernel's BGP multipath routes that
// pathqd already reads for PATH_WEIGHT_TABLE: routes with the same kernel weights are one
// group, and one `show bgp ... <prefix> json` per group (at most kMaxLookups per round,
// the rest in the next round) says what BGP's link-bandwidth values imply.
//
// A diverged group is reported (stats and log). With `repair`, its kernel routes are
// deleted, and zebra, which still holds the right weights, installs them again; the
// covering route (a rail subnet, or the default) carries the traffic meanwhile. That
// needs CAP_NET_ADMIN, which pathqd's unit does not grant by default.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "twinrail/frr/vtysh.h"
#include "twinrail/netlink/link_stats.h"
#include "weight_audit.h"

namespace twinrail::pathqd {

struct WeightAuditStats {
    uint64_t rounds = 0;
    uint64_t lookups = 0;
    size_t divergedGroups = 0;  // in the last complete round
    size_t divergedPrefixes = 0;
    uint64_t repairs = 0;             // routes deleted for zebra to reinstall
    std::string state = "unchecked";  // ok, diverged, unreachable, off
};

class WeightAuditor {
  public:
    using Routes = std::function<const std::vector<netlink::RouteWeights>&()>;
    using IfName = std::function<std::string(int ifindex)>;
    WeightAuditor(boost::asio::io_context& io, const frr::VtyshOptions& vtysh, Routes routes,
                  IfName ifname, bool repair);
    void start(std::chrono::seconds interval);  // 0: off
    void setInterval(std::chrono::seconds interval);
    void setRepair(bool repair) { repair_ = repair; }
    void runSoon();  // e.g. after an FRR restart
    void stop();
    const WeightAuditStats& stats() const { return stats_; }

  private:
    struct Group {
        PortWeights kernel;
        std::vector<const netlink::RouteWeights*> routes;
    };
    void arm(std::chrono::milliseconds after);
    void round();
    void checkNext(std::shared_ptr<std::vector<Group>> groups, size_t next,
                   std::shared_ptr<WeightAuditStats> result);
    void repairGroup(const Group& g);

    static constexpr size_t kMaxLookups = 32;
    frr::Vtysh vtysh_;
    Routes routes_;
    IfName ifname_;
    bool repair_;
    boost::asio::steady_timer timer_;
    std::chrono::seconds interval_{0};
    bool running_ = false;
    size_t offset_ = 0;  // round robin over the groups when there are more than kMaxLookups
    WeightAuditStats stats_;
};

}  // namespace twinrail::pathqd
