// Static smart routing on SONiC: keeps APPL_DB ACL_RULE_TABLE's TWINRAIL_PIN rules as
// acl_pins.h says, from the uplinks' carrier and next hops (the links and neighbors
// hostrouted already follows), the leaf's own subnets, and the main table (a RouteFeed:
// which prefixes go through which pinned uplink). Nothing is written before the feed's
// first snapshot, then only what changed, in one pass per burst of events; on every
// (re)connect to APPL_DB it reads which of its rules are there and writes the difference,
// so a restart leaves pinned traffic pinned (the rules stay while hostrouted is away, as
// the kernel pins do). STATE_DB UPLINK_PIN_TABLE rows say what each downlink got.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "acl_pins.h"
#include "twinrail/netlink/route_watch.h"
#include "twinrail/netlink/types.h"
#include "twinrail/redis/client.h"
#include "twinrail/redis/state_table.h"

namespace twinrail::hostrouted {

// Where the rules go: APPL_DB ACL_RULE_TABLE through SONiC's producer protocol (the real
// one, makeApplDbAclSink); a fake in unit tests.
class AclRuleSink {
  public:
    virtual ~AclRuleSink() = default;
    virtual void start() = 0;
    virtual bool ready() const = 0;
    // Called on every (re)connect: the rules are re-read and rewritten.
    virtual void onReady(std::function<void()> fn) = 0;
    virtual void set(const std::string& rule, const redis::Fields& fields) = 0;
    virtual void del(const std::string& rule) = 0;
    // The names of the table's rules that are there now (ok false: could not read).
    virtual void readRules(std::function<void(bool ok, std::vector<std::string>)> done) = 0;
};
std::unique_ptr<AclRuleSink> makeApplDbAclSink(std::unique_ptr<redis::Connection> applDb,
                                               int applDbId);

struct AclPinStats {
    uint64_t ruleWrites = 0;
    uint64_t ruleDeletes = 0;
    uint64_t readErrors = 0;
};

class AclPinner {
  public:
    // `settings`: the pins and pin_min_weight_ratio (the rest is the kernel pins').
    AclPinner(boost::asio::io_context& io, PinSettings settings, std::unique_ptr<AclRuleSink> sink,
              const netlink::RouteFeedFactory& feed);
    void start();  // throws when the kernel's routes cannot be read
    void stop();
    void setSettings(PinSettings settings);
    void setLocal(std::vector<IpPrefix> local);
    void onLink(const netlink::LinkState& link, bool removed);
    void onNeighbor(const netlink::NeighborEntry& neigh, bool removed);
    void attachStateDb(redis::Connection& client, char separator);
    void resyncState();
    const AclPinStats& stats() const { return stats_; }
    const AclPinPlan& plan() const { return plan_; }

  private:
    void changed();
    void replan();
    void flush();
    void reconcile(const std::vector<std::string>& present);
    void onRoutes(const std::vector<netlink::RouteKey>& changed, bool snapshotDone);
    void routeOf(const IpPrefix& prefix);
    void allRoutes();
    std::map<std::string, int> uplinkIfindexes() const;
    std::optional<redis::Fields> rowOf(const std::string& downlink) const;

    boost::asio::io_context& io_;
    PinSettings settings_;
    std::unique_ptr<AclRuleSink> sink_;
    std::unique_ptr<netlink::RouteFeed> feed_;
    AclRoutes routes_;
    std::vector<IpPrefix> local_;
    std::map<int, std::string> names_;                     // ifindex -> link name
    std::map<std::string, bool> operUp_;                   // by link name
    std::map<int, std::map<IpAddr, uint16_t>> neighbors_;  // ifindex -> IPv6 LL -> NUD state
    AclPinPlan plan_;
    std::map<std::string, redis::Fields> written_;  // what APPL_DB holds of ours
    bool known_ = false;  // written_ was read from APPL_DB since the last connect
    bool flushQueued_ = false;
    std::unique_ptr<redis::StateTable> table_;
    AclPinStats stats_;
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace twinrail::hostrouted
