// Pins peers to a port of a bond: one tc filter per pinned peer on the bond's egress,
// ahead of the bond's own choice (`u32 match ip dst <peer>/32 action mirred egress
// redirect dev <port>`, the same mechanism as the dual-send ARP filter). Each pin has a
// pref of its own in [kFirstPref, kLastPref], so that it is added and removed alone;
// pins a previous run left (kill -9) are removed at start. tc runs asynchronously, one
// command at a time, in order.
#pragma once

#include <boost/asio/io_context.hpp>
#include <deque>
#include <map>
#include <string>

#include "twinrail/common/ip.h"

namespace twinrail::planesteer {

inline constexpr int kFirstPref = 100;
inline constexpr int kLastPref = 29999;  // the lab's emulated bond hashes at 30000 and up

class TcPins {
  public:
    TcPins(boost::asio::io_context& io, std::string bond);
    void clearLeftovers();
    void pin(const IpAddr& peer, const std::string& port);
    void unpin(const IpAddr& peer);
    size_t size() const { return prefs_.size(); }
    uint64_t errors() const { return errors_; }

  private:
    void run(std::vector<std::string> argv);
    void next();
    boost::asio::io_context& io_;
    std::string bond_;
    std::map<IpAddr, int> prefs_;
    std::map<IpAddr, std::string> ports_;
    int nextPref_ = kFirstPref;
    std::deque<std::vector<std::string>> queue_;
    bool running_ = false;
    uint64_t errors_ = 0;
};

}  // namespace twinrail::planesteer
