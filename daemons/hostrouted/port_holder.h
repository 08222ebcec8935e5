// The host-port hold's I/O (decisions: port_hold.h). Follows the main table through its
// own route feed, the managed ports through the links the daemon follows, takes host
// ports admin down and up through the LinkControl edge, and records what it holds in
// STATE_DB HOST_PORT_HOLD_TABLE|<port> (state held/released, reason, since).
//
// Nothing is decided before the route feed's first snapshot: a hostrouted restarted on a
// running leaf sees its routes first and lowers nothing. A restart finds its holds: the
// held rows are read back before the table is rewritten (the rewrite deletes rows nobody
// owns), and only those ports, and ports it lowered itself, are ever raised. SIGTERM
// leaves held ports down, as it leaves routes in place.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "edges.h"
#include "port_hold.h"
#include "ports.h"
#include "twinrail/netlink/route_watch.h"
#include "twinrail/redis/client.h"
#include "twinrail/redis/state_table.h"

namespace twinrail::hostrouted {

inline constexpr const char* kHoldTable = "HOST_PORT_HOLD_TABLE";

struct HoldStats {
    uint64_t lowered = 0;
    uint64_t raised = 0;
    uint64_t writeErrors = 0;
};

class PortHolder {
  public:
    PortHolder(boost::asio::io_context& io, HoldSettings settings, LinkControl& links,
               const netlink::RouteFeedFactory& feed);
    void start();  // throws when the kernel's routes cannot be read
    void stop();   // leaves held ports down
    void setSettings(HoldSettings next);
    // The daemon's ports after a link event or snapshot: the managed ones are the host
    // ports, the others (when up) where the fabric's routes may lead.
    void portsChanged(const Ports& ports);
    void attachStateDb(redis::Connection& client, char separator);
    void stateDbConnected();  // from the STATE_DB client's onConnected
    const HoldStats& stats() const { return stats_; }
    bool holding() const { return hold_.holding(); }

  private:
    void evaluate();
    void apply(const HoldDecision& d);
    void armTimer();
    void readHeldFrom(const std::string& cursor);
    void readHeldRow(const std::string& key);
    void readFailed(const redis::Value& reply);
    void adoptionDone();
    std::optional<redis::Fields> rowOf(const std::string& port) const;

    boost::asio::io_context& io_;
    PortHold hold_;
    LinkControl& links_;
    std::unique_ptr<netlink::RouteFeed> watch_;
    std::set<int> fabricPorts_;            // links up that are not host ports
    std::map<std::string, bool> managed_;  // their names and admin state, as last seen
    redis::Connection* stateDb_ = nullptr;
    char separator_ = '|';
    std::unique_ptr<redis::StateTable> table_;
    bool adopted_ = false;  // the previous run's held rows are read (or there is no STATE_DB)
    bool adopting_ = false;
    bool scanDone_ = false;
    size_t readsPending_ = 0;
    bool stopped_ = false;
    boost::asio::steady_timer timer_;
    HoldStats stats_;
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace twinrail::hostrouted
