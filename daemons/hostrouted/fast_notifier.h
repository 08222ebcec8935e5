// A leaf's side of fast notices (proto/fnn_wire.md; notice_config.h): when a host port goes
// down, one notice per event to the plane's other leaves, under the plane key, and one to
// each server on this leaf, under its own receiver key; a notice from another leaf of the
// plane is passed on to this leaf's servers. BGP still withdraws the hosts: a notice that
// is lost costs its time, no more. Nothing waits: a send the kernel cannot take at once
// is dropped and counted.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "notice_config.h"
#include "twinrail/fnn/guard.h"
#include "twinrail/fnn/notice.h"
#include "twinrail/fnn/udp_socket.h"

namespace twinrail::hostrouted {

struct NotifierCounters {
    uint64_t events = 0;      // host ports lost here
    uint64_t sent = 0;        // datagrams the kernel took
    uint64_t sendFailed = 0;  // ... and did not
    uint64_t relayed = 0;     // other leaves' notices passed on
};

// Which hosts each port had routed, remembered a moment past their withdrawal: when a
// port loses carrier the kernel flushes its neighbors, and their withdrawal may reach
// hostrouted just before the link event that says the port is down.
class PortHosts {
  public:
    using Time = std::chrono::steady_clock::time_point;
    void routed(const IpAddr& ip, int ifindex);
    void withdrawn(const IpAddr& ip, int ifindex, Time now);
    // The hosts routed on `ifindex` now or withdrawn within `window` before `now`.
    std::vector<IpAddr> lostWith(int ifindex, Time now, std::chrono::milliseconds window);

  private:
    std::map<int, std::map<IpAddr, std::optional<Time>>> byPort_;
};

class FastNotifier {
  public:
    // `socket` is bound to the config's source and port; `wallNs` is the wall clock.
    FastNotifier(NoticeConfig config, fnn::NoticeSocket& socket, std::function<uint64_t()> wallNs);

    // A host port went down, taking `lost` with it; `receivers` are the servers on the
    // leaf's other ports.
    void portLost(const std::vector<IpAddr>& lost, const std::vector<IpAddr>& receivers);
    // A datagram to this leaf's source address.
    void received(const fnn::Datagram& d, const std::vector<IpAddr>& receivers, fnn::MonoTime now);

    const NotifierCounters& counters() const { return counters_; }
    const fnn::GuardCounters& guardCounters() const { return guard_.counters(); }

  private:
    void tell(fnn::Event event, const std::vector<IpPrefix>& subjects,
              const std::vector<IpAddr>& receivers, bool toLeaves);
    void send(const fnn::Notice& n, const IpAddr& to, const fnn::Key& key);
    uint64_t nextSequence();

    NoticeConfig cfg_;
    fnn::NoticeSocket& socket_;
    std::function<uint64_t()> wallNs_;
    fnn::NoticeGuard guard_;
    uint64_t lastSequence_ = 0;
    NotifierCounters counters_;
};

// HOST_ROUTE_STATS|global's notice fields: notice_events, notice_sent, notice_send_failed,
// notice_relayed, notice_accepted (other leaves' notices admitted), notice_refused.
std::vector<std::pair<std::string, std::string>> noticeStatsFields(const NotifierCounters& c,
                                                                   const fnn::GuardCounters& g);

}  // namespace twinrail::hostrouted
