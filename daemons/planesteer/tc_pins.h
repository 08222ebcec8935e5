// Pins peers to a port of a bond on the bond's egress, ahead of the bond's own choice:
// one u32 hash table at pref kTablePref holding a node per pinned peer (`match ip dst
// <peer>/32 action mirred egress redirect dev <port>`, the same mechanism as the
// dual-send ARP filter); see pin_table.h for why one table and how wishes coalesce.
// Whatever is in [kFirstPref, kLastPref] at start is a previous run's (kill -9, or the
// one-filter-per-pin layout of older versions) and is removed. tc runs asynchronously,
// one command at a time, started by poke() once per decision round.
#pragma once

#include <boost/asio/io_context.hpp>
#include <string>
#include <vector>

#include "pin_table.h"
#include "twinrail/common/ip.h"

namespace twinrail::planesteer {

class TcPins {
  public:
    TcPins(boost::asio::io_context& io, std::string bond, std::vector<std::string> ports);
    void clearLeftovers();
    // The port `peer` should use, or nullopt for the bond's hash; applied at poke().
    void want(const IpAddr& peer, std::optional<size_t> port) { table_.want(peer, port); }
    void poke();  // starts tc on what is pending, unless it is already running
    // Makes every pin again if the table is gone (the bond's clsact was deleted and made
    // again: nothing fails then, the pins are just not there). Once a minute is enough.
    void verify();

    std::optional<size_t> pinnedPort(const IpAddr& peer) const { return table_.pinnedPort(peer); }
    size_t size() const { return table_.size(); }
    size_t queued() const { return table_.queued(); }
    const PinCounters& counters() const { return table_.counters(); }
    uint64_t errors() const { return errors_; }

  private:
    void setUp(size_t step);
    void runNext();
    void checkTable();

    boost::asio::io_context& io_;
    std::string bond_;
    std::vector<std::string> ports_;
    PinTable table_;
    bool tableReady_ = false;
    bool running_ = false;
    bool setupFailureLogged_ = false;
    uint64_t errors_ = 0;
};

}  // namespace twinrail::planesteer
