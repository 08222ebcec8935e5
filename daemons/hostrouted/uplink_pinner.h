// Static smart routing's I/O (decisions: uplink_pins.h). Follows the main table and its
// own tables through a RouteWatch, the uplinks through the links hostrouted already
// follows, and keeps each T(U) and each downlink's rule as uplink_pins.h says.
//
// Restart: nothing is written before the watch's first snapshot and the rule dump, so a
// restart finds its tables and rules in place and writes only what differs. The rule dump
// is read on the io_context (PolicyWriter::dumpRules); one that fails is logged and taken
// again a little later, the pinner writing nothing meanwhile. SIGTERM leaves both as they
// are: pinned traffic stays pinned while hostrouted is away.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "twinrail/netlink/policy_writer.h"
#include "twinrail/netlink/route_watch.h"
#include "twinrail/netlink/types.h"
#include "twinrail/redis/client.h"
#include "twinrail/redis/state_table.h"
#include "uplink_pins.h"

namespace twinrail::hostrouted {

inline constexpr const char* kPinTable = "UPLINK_PIN_TABLE";

struct PinnerStats {
    uint64_t routeWrites = 0;
    uint64_t ruleWrites = 0;
    uint64_t writeErrors = 0;
    uint64_t fallbacks = 0;       // a downlink going from pinned to fallback
    uint64_t ruleDumpErrors = 0;  // rule dumps that failed (and were taken again)
};

class UplinkPinner {
  public:
    UplinkPinner(boost::asio::io_context& io, PinSettings settings, netlink::PolicyWriter& writer,
                 const netlink::RouteFeedFactory& feed);
    void start();  // throws when the kernel cannot be read
    void stop();   // leaves tables and rules in place
    void setSettings(PinSettings next);
    void onLink(const netlink::LinkState& link, bool removed);
    void attachStateDb(redis::Connection& client, char separator);
    void resyncState();  // from the STATE_DB client's onConnected
    const PinnerStats& stats() const { return stats_; }
    // The first route snapshot and the rule dump are in: the pinner writes.
    bool ready() const { return ready_; }
    const netlink::RouteWatchStats& watchStats() const { return watch_->stats(); }

  private:
    struct Uplink {
        int ifindex = 0;
        bool present = false;
        bool operUp = false;
    };
    struct Pin {
        PinState state = PinState::Fallback;
        std::string reason = "starting";
        std::chrono::system_clock::time_point since{};
        bool known = false;
        std::pair<size_t, size_t> counts;  // IPv4, IPv6 prefixes pinned through the uplink
    };

    void onRoutes(const std::vector<netlink::RouteKey>& changed, bool snapshotDone);
    void readRules();
    void readRulesOf(int family, const std::shared_ptr<std::set<netlink::PolicyRule>>& found);
    void rulesRead(std::set<netlink::PolicyRule> found);
    void ruleDumpFailed(int family, int error);
    void reconcilePrefix(const IpPrefix& prefix, const std::string& uplink, uint32_t table);
    void reconcileTable(const std::string& uplink, uint32_t table);
    void reconcileAll();
    void reconcileRules();
    void flush();
    std::vector<const netlink::KernelRoute*> mainRoutes(const IpPrefix& prefix) const;
    std::vector<const netlink::KernelRoute*> tableEntries(uint32_t table,
                                                          const IpPrefix& prefix) const;
    std::set<uint32_t> watchedTables() const;
    std::optional<redis::Fields> rowOf(const std::string& downlink) const;

    boost::asio::io_context& io_;
    PinSettings settings_;
    std::map<std::string, uint32_t> tables_;  // uplink -> T(U)
    netlink::PolicyWriter& writer_;
    std::unique_ptr<netlink::RouteFeed> watch_;
    std::map<std::string, Uplink> uplinks_;          // by name
    std::map<uint32_t, std::set<IpPrefix>> pinned_;  // T(U) -> prefixes through U (wanted)
    std::map<uint32_t, std::pair<size_t, size_t>> pinnedCount_;  // IPv4, IPv6 per T(U)
    std::set<netlink::PolicyRule> rules_;                        // ours, as the kernel holds them
    std::map<std::string, Pin> pins_;                            // by downlink
    std::unique_ptr<redis::StateTable> table_;
    bool ready_ = false;  // first snapshot and rule dump done
    bool readingRules_ = false;
    bool stopped_ = false;
    std::chrono::seconds ruleRetry_;
    boost::asio::steady_timer ruleRetryTimer_;
    PinnerStats stats_;
    // The writer's answers check it: the writer may outlive this object.
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace twinrail::hostrouted
