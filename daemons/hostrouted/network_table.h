// `advertise network-table` (SONiC before 202411): every host route hostrouted installs
// gets a STATE_DB row `ADVERTISE_NETWORK_TABLE|<ip>/<32|128>` with the one field "" = ""
// (the value bgpcfgd's AdvertiseRouteMgr accepts besides a route-map profile); bgpcfgd
// turns it into `network <prefix>` under `router bgp` (with `no bgp network
// import-check`), and its deletion into `no network <prefix>`.
//
// The table is shared (vnet routes write VRF rows, other applications their prefixes), so
// hostrouted touches only rows it can prove are its own: a default-VRF key (no VRF part)
// holding a host prefix (/32, /128) inside a subnet of an interface hostrouted manages.
// Nothing else on a leaf advertises single hosts of a rail's VLAN subnet, and hostrouted
// is the one writer that knows which of them are alive.
//
// On every (re)connect the table is reconciled: the live rows are written again first,
// then the rows of its own that are not live are deleted; a live row is never deleted, so
// a restart or a Redis reconnect withdraws nothing that is still there.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "twinrail/common/ip.h"
#include "twinrail/redis/client.h"

namespace twinrail::hostrouted {

inline constexpr const char* kNetworkTable = "ADVERTISE_NETWORK_TABLE";

// The host address a row key names, when it is a row hostrouted may own (`isOurs`: inside a
// managed subnet); nullopt for anything else (a VRF row, a shorter prefix, garbage).
std::optional<IpAddr> ownedNetworkKey(const std::string& redisKey, char separator,
                                      const std::function<bool(const IpAddr&)>& isOurs);
std::string networkKey(const IpAddr& ip, char separator);

class NetworkTable {
  public:
    struct Sources {
        std::function<bool(const IpAddr&)> isLive;  // an installed host route of ours
        std::function<std::vector<IpAddr>()> live;  // all of them
        std::function<bool(const IpAddr&)> isOurs;  // inside a managed subnet
    };
    NetworkTable(boost::asio::io_context& io, redis::Connection& db, char separator,
                 Sources sources);

    // A host whose route came or went. Rows change only when its advertisement does: every
    // HSET makes bgpcfgd run vtysh, so a neighbor state change must not write the row.
    void markDirty(const IpAddr& ip);
    // Rows the FRR audit found BGP lacking: written again even if they should be there.
    void republish(const std::vector<IpAddr>& ips);
    void resyncAll();  // from the connection's onConnected
    uint64_t errors() const { return errors_; }
    uint64_t removedStale() const { return removedStale_; }

  private:
    void scheduleFlush();
    void flush();
    void scanFrom(const std::string& cursor,
                  const std::shared_ptr<std::vector<std::string>>& found);
    void finishResync(const std::vector<std::string>& existing);
    void written(const redis::Value& reply, const std::string& key, const IpAddr& ip);

    redis::Connection& db_;
    char separator_;
    Sources sources_;
    std::set<IpAddr> dirty_;
    std::set<IpAddr> advertised_;  // rows written (and not refused) since the last reconnect
    boost::asio::steady_timer flushTimer_;
    bool flushArmed_ = false;
    bool resyncing_ = false;
    uint64_t errors_ = 0;
    uint64_t removedStale_ = 0;
};

}  // namespace twinrail::hostrouted
