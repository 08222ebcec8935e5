// The BGP sessions of this switch as STATE_DB rows (BGP_PEER_STATE_TABLE|<port>), so
// that twinrail verify can check every fabric link against the plan without logging in
// to any switch: the session must be up on the planned port, and the router on the far
// end (its router id, the plan's loopback) must be the planned one. Pure: JSON in, rows
// out; pathqd reads `show bgp neighbors json` through FRR's channel every
// bgp_peers_interval.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "twinrail/frr/channel.h"
#include "twinrail/redis/client.h"
#include "twinrail/redis/state_table.h"

namespace twinrail::pathqd {

inline constexpr const char* kBgpPeerTable = "BGP_PEER_STATE_TABLE";

// Keyed by neighbor (the port, for BGP unnumbered sessions); fields state, remote_as,
// remote_router_id, up_since (epoch seconds, empty when not established). Never throws:
// JSON of another shape is an error.
std::optional<std::map<std::string, redis::Fields>> parseBgpNeighbors(const std::string& json,
                                                                      std::string& error);

// Reads the sessions every `interval` (an asynchronous show on the channel) and
// publishes the rows that changed. The channel outlives the monitor; replies that come
// after it is gone are dropped.
class BgpPeerMonitor {
  public:
    BgpPeerMonitor(boost::asio::io_context& io, frr::Channel& frr, redis::Connection& stateDb,
                   char separator, std::chrono::milliseconds interval,
                   std::chrono::milliseconds firstRead = std::chrono::seconds(1));
    void start();
    void stop();
    void resync() { table_.resyncAll(); }  // on STATE_DB (re)connect
    uint64_t errors() const { return table_.errors(); }
    uint64_t readErrors() const { return readErrors_; }  // FRR unreachable or odd JSON

  private:
    void arm(std::chrono::milliseconds after);
    void onNeighbors(bool ok, const std::string& text);

    frr::Channel& frr_;
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);
    redis::StateTable table_;
    boost::asio::steady_timer timer_;
    std::chrono::milliseconds interval_;
    std::chrono::milliseconds firstRead_;
    std::map<std::string, redis::Fields> rows_;
    uint64_t readErrors_ = 0;
    bool reading_ = false;
    bool loggedError_ = false;
};

}  // namespace twinrail::pathqd
