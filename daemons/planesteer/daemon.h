// planesteer's modules on one io_context: the netlink monitor says which peers each bond
// talks to (its neighbor entries: rail-optimized traffic is mostly to peers on the same
// rail, which are on-link behind proxy ARP), which ports have carrier, and the bond's MAC
// and address; every interval each peer is probed out of each port (ArpProber); the
// policy (steer_policy.h) decides, and TcPins applies.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "arp_prober.h"
#include "config.h"
#include "steer_policy.h"
#include "tc_pins.h"
#include "twinrail/netlink/monitor.h"

namespace twinrail::planesteer {

struct Bond {
    std::string name;
    std::vector<std::string> ports;
    int ifindex = 0;
    std::vector<int> portIfindex;
    std::optional<MacAddr> mac;
    std::optional<IpAddr> address;
    SteerPolicy policy;
    std::unique_ptr<ArpProber> prober;
    std::unique_ptr<TcPins> pins;
    std::map<IpAddr, size_t> pinned;
    std::set<IpAddr> seenInSnapshot;
    Bond(std::string n, std::vector<std::string> p, const SteerParams& s)
        : name(std::move(n)),
          ports(std::move(p)),
          portIfindex(ports.size(), 0),
          policy(ports.size(), s) {}
};

class Daemon final : public netlink::NetlinkObserver {
  public:
    Daemon(boost::asio::io_context& io, Config config);
    void start();  // throws on failure
    void stop();
    void applyConfig(const Config& next);

    void onLink(const netlink::LinkState& link, bool removed) override;
    void onAddress(const netlink::AddressEntry& addr, bool removed) override;
    void onNeighbor(const netlink::NeighborEntry& neigh, bool removed) override;
    void onSnapshotBegin() override;
    void onSnapshotEnd() override;
    void onSnapshotAborted() override {}
    void onBurstEnd() override {}

  private:
    void armProbe();
    void probeAll();
    void decide(Bond& b);
    Bond* bondOf(int ifindex);

    boost::asio::io_context& io_;
    Config cfg_;
    std::vector<std::unique_ptr<Bond>> bonds_;
    netlink::NetlinkMonitor monitor_;
    boost::asio::steady_timer probeTimer_;
    bool inSnapshot_ = false;
};

}  // namespace twinrail::planesteer
