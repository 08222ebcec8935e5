// Runs the zebra import audit (frr_audit.h) and its repairs: every `interval`, and in a
// burst right after zebra or bgpd restarts (the owner's frr::RestartWatcher calls
// frrRestarted), when the stale-route case appears. A cheap `show ip route summary json` comes
// first; the full route list is read only when its counts disagree with ours. Every FRR read is an
// asynchronous vtysh call, and the kernel's main table (for zebra's stale copies) is read through
// a RouteDumper, its answer on the io_context: an audit never blocks the loop. Repairs are
// bounded: a prefix that is still wrong after kMaxRepairs tries is reported, not touched again
// until it has been right once.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frr_audit.h"
#include "twinrail/frr/channel.h"
#include "twinrail/netlink/route_table.h"

namespace twinrail::hostrouted {

struct OurRoute {
    netlink::HostRoute route;
    bool fresh = false;  // installed too recently for zebra to be judged on it
};

struct AuditStats {
    uint64_t audits = 0;       // full route-list audits (the summary alone is not counted)
    uint64_t repairs = 0;      // routes re-announced or stale copies removed
    uint64_t frrRestarts = 0;  // zebra/bgpd starts seen
    size_t missing = 0, shadowed = 0, outranked = 0, foreign = 0, unrepaired = 0;
    std::string state = "unchecked";  // ok, diverged, unreachable, off
};

// What is audited: zebra's imports (`ip import-table`), or BGP's self-originated routes
// (table-direct, network-table: frr_audit.h). A route BGP lacks is written again in the
// kernel table (table-direct re-announces it), or handed to `republish` (network-table:
// its STATE_DB row is written again).
struct AuditMode {
    bool bgpOriginated = false;
    std::function<void(const std::vector<IpAddr>&)> republish;
};

class ImportAuditor {
  public:
    using RouteList = std::function<std::vector<OurRoute>()>;
    using Done = std::function<void()>;  // after an audit changed the stats
    // `routes` writes the repairs; `dumper` reads the main table's stale zebra copies.
    ImportAuditor(boost::asio::io_context& io, frr::Channel& frr, netlink::RouteProgrammer& routes,
                  std::unique_ptr<netlink::RouteDumper> dumper, RouteList ours, Done done,
                  AuditMode mode = {});

    // 0 turns the periodic audit off (restarts still trigger one).
    void start(std::chrono::seconds interval);
    void setInterval(std::chrono::seconds interval);
    void stop();
    void frrRestarted(const std::string& daemon);
    const AuditStats& stats() const { return stats_; }

  private:
    void armPeriodic();
    void armBurst();
    void run();
    void onSummary(bool ok, const std::string& text);
    void onOriginated(bool ok, const std::string& text);
    void onRoutes(bool ok, const std::string& imports, const std::string& kernel,
                  const std::vector<OurRoute>& ours);
    // `stale`: the main table's zebra routes; nullopt when they could not be read.
    void repair(const ImportAudit& audit, const std::vector<OurRoute>& ours,
                const std::optional<std::vector<netlink::HostRoute>>& stale);
    void conclude(const ImportAudit& audit);
    void finish(const std::string& state);
    bool mayRepair(const IpAddr& ip);

    static constexpr int kMaxRepairs = 3;
    frr::Channel& frr_;
    netlink::RouteProgrammer& routes_;
    std::unique_ptr<netlink::RouteDumper> dumper_;
    RouteList ours_;
    Done done_;
    AuditMode mode_;
    boost::asio::steady_timer periodic_, burst_;
    std::chrono::seconds interval_{0};
    std::chrono::steady_clock::time_point burstUntil_{};
    bool running_ = false;
    std::map<IpAddr, int> attempts_;
    // FRR's and the dumper's answers check it: the channel outlives this object.
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);
    AuditStats stats_;
};

}  // namespace twinrail::hostrouted
