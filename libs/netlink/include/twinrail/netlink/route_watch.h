// Follows the kernel's routes of some tables, event by event, without dumping them every
// period. pathqd reads its multipath weights from it and hostrouted's uplink pinning
// mirrors the main table through it; at 100k routes a dump per second was most of
// pathqd's CPU (issue 12), while the events of a steady fabric cost nothing.
//
// Two non-blocking sockets on the io_context: one subscribed to route and nexthop events,
// one for dumps (a dump keeps its socket's buffer full, and events arriving on it then
// would be dropped: at 100k routes that was an overflow, and another dump, every time).
// A snapshot (at start, after the kernel dropped events with ENOBUFS, or on request)
// dumps nexthop objects and routes and then removes whatever it did not see. Events that
// arrive meanwhile are read at once (so they are not lost) but applied after the dump, in
// their order: the dump may hold an older state of a route than they do, never a newer
// one than the last of them. A dump the kernel flags as interrupted (NLM_F_DUMP_INTR) is
// repeated instead of swept. Nothing here blocks: a dump is a request sent and replies
// read as they come.
#pragma once

#include <linux/netlink.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "twinrail/netlink/link_stats.h"

namespace twinrail::netlink {

// A route as the kernel holds it, its nexthops resolved through nexthop objects.
struct KernelRoute {
    IpPrefix dst;
    uint32_t table = 254;
    uint8_t protocol = 0;
    uint8_t type = 1;  // RTN_UNICAST; RTN_THROW, RTN_BLACKHOLE, ...
    uint32_t metric = 0;
    uint32_t nhid = 0;  // 0: nexthops inline
    std::vector<WeightedNexthop> nexthops;
    bool operator==(const KernelRoute&) const = default;
};

// What tells two kernel routes apart: table, prefix, metric and, for a route without a
// gateway (fe80::/64 dev X), its device.
struct RouteKey {
    uint32_t table = 0;
    IpPrefix dst;
    uint32_t metric = 0;
    int oif = 0;
    // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads defaulted <=>
    auto operator<=>(const RouteKey&) const = default;
};
RouteKey keyOf(const KernelRoute& r);

struct RouteEvent {
    KernelRoute route;
    bool removed = false;
};
// RTM_NEWROUTE / RTM_DELROUTE, nexthops as carried (inline, or only nhid). nullopt for
// other messages, cloned (cache) routes and messages too short for their header.
std::optional<RouteEvent> decodeRouteEvent(const nlmsghdr* msg);
// The nexthops of an nhid route through `objects`; nullopt when an id is unknown.
std::optional<std::vector<WeightedNexthop>> resolveNexthops(uint32_t nhid,
                                                            const NexthopObjects& objects);

struct RouteWatchStats {
    uint64_t messages = 0;
    uint64_t overflows = 0;  // ENOBUFS: events lost, snapshot taken again
    uint64_t snapshots = 0;
    uint64_t dumpsInterrupted = 0;
    uint64_t unresolved = 0;  // routes whose nexthop object was not (yet) known
    uint64_t queuedDuringDump = 0;
};

// The routes of some kernel tables as a daemon follows them: RouteWatch on a real kernel,
// a fake in unit tests (tests/unit/fakes).
class RouteFeed {
  public:
    using Routes = std::map<RouteKey, KernelRoute>;
    // `changed`: the keys added, changed or removed since the last call; `snapshotDone`
    // when a snapshot completed (the view is whole again).
    using OnChange = std::function<void(const std::vector<RouteKey>& changed, bool snapshotDone)>;

    virtual ~RouteFeed() = default;
    virtual void start() = 0;  // starts the first snapshot; throws when the kernel cannot be read
    virtual void stop() = 0;
    virtual void setTables(std::set<uint32_t> tables) = 0;  // takes a new snapshot
    virtual void resync() = 0;
    virtual bool synced() const = 0;  // a snapshot has completed
    virtual const Routes& routes() const = 0;
    virtual const RouteWatchStats& stats() const = 0;
};
// Every entry of `table` for exactly `prefix` (one per metric and type), in key order.
std::vector<const KernelRoute*> entriesOf(const RouteFeed::Routes& routes, uint32_t table,
                                          const IpPrefix& prefix);
// Only routes of `tables` are kept.
using RouteFeedFactory = std::function<std::unique_ptr<RouteFeed>(std::set<uint32_t> tables,
                                                                  RouteFeed::OnChange onChange)>;

class RouteWatch final : public RouteFeed {
  public:
    // Only routes of `tables` are kept.
    RouteWatch(boost::asio::io_context& io, std::set<uint32_t> tables, OnChange onChange);
    ~RouteWatch() override;
    RouteWatch(const RouteWatch&) = delete;
    RouteWatch& operator=(const RouteWatch&) = delete;

    void start() override;  // opens the socket and starts the first snapshot; throws on failure
    void stop() override;
    void setTables(std::set<uint32_t> tables) override;
    void resync() override;
    bool synced() const override { return synced_; }
    const Routes& routes() const override { return routes_; }
    const RouteWatchStats& stats() const override { return stats_; }

  private:
    void open();
    void armRead(boost::asio::posix::stream_descriptor& d, int fd, bool dumps);
    void drain(int fd, bool dumps);
    void notify();
    void handle(const nlmsghdr* msg);
    void onRoute(const nlmsghdr* msg);
    void onNexthop(const nlmsghdr* msg, bool removed);
    void reresolve(uint32_t id);
    void store(KernelRoute route);
    void erase(const RouteKey& key);
    void beginSnapshot();
    void nextStage();
    void endSnapshot();
    void replayQueued();

    boost::asio::io_context& io_;
    std::set<uint32_t> tables_;
    OnChange onChange_;
    int eventsFd_ = -1, dumpsFd_ = -1;
    std::unique_ptr<boost::asio::posix::stream_descriptor> events_, dumps_;
    std::vector<uint32_t> buffer_;
    std::vector<std::vector<uint32_t>> queued_;  // events read during a dump, in order
    Routes routes_;
    NexthopObjects objects_;
    std::map<uint32_t, std::set<RouteKey>> byNhid_;
    std::set<RouteKey> notSeen_;  // during a snapshot: not yet seen again
    std::set<uint32_t> objectsNotSeen_;
    std::set<RouteKey> changed_;
    boost::asio::steady_timer retryTimer_;
    int stage_ = -1;  // -1: no dump; 0 nexthops, 1 IPv4 routes, 2 IPv6 routes
    uint32_t seq_ = 0;
    bool interrupted_ = false;
    int interruptedInRow_ = 0;
    bool resyncWanted_ = false;
    bool synced_ = false;
    bool snapshotDone_ = false;
    RouteWatchStats stats_;
};

}  // namespace twinrail::netlink
