// The hosts hostrouted routes to, and everything that decides when their routes come and
// go: caps, the new-route rate limit, liveness (probe schedule and holdtime), snapshot
// mark-and-sweep, and adoption of routes left by a previous run. It does no I/O: time
// comes in as an argument and effects go out through RegistryActions, so every rule is
// unit-tested with a fake clock and fake actions.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <queue>
#include <unordered_map>
#include <vector>

#include "host_policy.h"
#include "twinrail/common/ip.h"
#include "twinrail/netlink/types.h"

namespace twinrail::hostrouted {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

enum class RouteState {
    Installed,     // in the kernel table
    Pending,       // accepted, waiting for the rate limiter
    Unresponsive,  // stopped answering: route withdrawn, still probed
    Failed,        // the kernel refused the route; retried on the next event
};
std::string_view routeStateName(RouteState s);

struct HostRecord {
    IpAddr ip;
    int ifindex = 0;
    std::optional<MacAddr> mac;
    Source source = Source::Local;
    uint16_t nudState = 0;
    RouteState state = RouteState::Pending;
    TimePoint since{};      // last state change
    TimePoint lastSeen{};   // last proof of life
    int kernelIfindex = 0;  // where the kernel route points now, 0 = no route
    uint64_t id = 0;        // distinguishes a re-created record in the schedules
    bool seen = true;       // mark-and-sweep during snapshots
    bool probed() const;    // local dynamic entries and ES-peer hosts are probed
};

class RegistryActions {
  public:
    virtual ~RegistryActions() = default;
    virtual void installRoute(const IpAddr& ip, int ifindex) = 0;
    virtual void removeRoute(const IpAddr& ip, int ifindex) = 0;
    virtual void sendProbe(const HostRecord& host) = 0;
    virtual void hostChanged(const IpAddr& ip) = 0;  // for publishing; may be gone now
};

struct Limits {
    uint32_t maxRoutes = 16384;
    uint32_t maxPerPort = 1024;
    double ratePerSecond = 2000.0;
    uint32_t burst = 4000;
};

struct Liveness {
    std::chrono::milliseconds keepalive{3000};  // 0 = no probing, no expiry
    std::chrono::milliseconds holdtime{9000};
};

struct RegistryStats {
    uint64_t added = 0;
    uint64_t withdrawn = 0;
    uint64_t refused = 0;
    uint64_t rateLimited = 0;
    uint64_t expired = 0;
    uint64_t probes = 0;
    uint64_t resyncs = 0;
    uint64_t moves = 0;
    uint64_t routeErrors = 0;
};

class HostRegistry {
  public:
    HostRegistry(RegistryActions& actions, Limits limits, Liveness liveness);

    void setLimits(Limits limits) { limits_ = limits; }
    void setLiveness(Liveness liveness, TimePoint now);

    void accept(const netlink::NeighborEntry& neigh, Source source, TimePoint now);
    void reject(const IpAddr& ip, TimePoint now);
    void hostSeen(int ifindex, const IpAddr& ip, TimePoint now);  // ARP/ND from the host
    void portDown(int ifindex, TimePoint now);
    void adoptRoute(const netlink::HostRoute& route, TimePoint now);
    void routeFailed(const IpAddr& ip, int error);

    void beginSnapshot();
    void endSnapshot(TimePoint now);

    void onTimer(TimePoint now);
    std::optional<TimePoint> nextDeadline() const;

    const HostRecord* find(const IpAddr& ip) const;
    template <typename Fn>
    void forEach(Fn&& fn) const {
        for (const auto& [ip, rec] : hosts_) fn(rec);
    }
    size_t size() const { return hosts_.size(); }
    size_t installedCount() const { return installed_; }
    size_t pendingCount() const { return pending_.size(); }
    const RegistryStats& stats() const { return stats_; }

  private:
    enum class EventKind : uint8_t { Probe, Expiry };
    struct Event {
        TimePoint at;
        uint64_t id;
        IpAddr ip;
        EventKind kind;
        bool operator>(const Event& o) const { return at > o.at; }
    };

    HostRecord* lookup(const IpAddr& ip);
    void admit(HostRecord& rec, TimePoint now);
    void install(HostRecord& rec, TimePoint now);
    void withdraw(HostRecord& rec, RouteState next, TimePoint now);
    void erase(const IpAddr& ip, TimePoint now);
    void confirm(HostRecord& rec, TimePoint now);
    void schedule(const HostRecord& rec, EventKind kind, TimePoint at);
    void startLiveness(const HostRecord& rec, TimePoint now);
    void refillTokens(TimePoint now);
    void drainPending(TimePoint now);
    void setState(HostRecord& rec, RouteState state, TimePoint now);
    bool portFull(int ifindex) const;
    std::chrono::milliseconds probeOffset(const IpAddr& ip) const;

    RegistryActions& actions_;
    Limits limits_;
    Liveness liveness_;
    std::unordered_map<IpAddr, HostRecord, IpAddrHash> hosts_;
    std::unordered_map<int, uint32_t> perPort_;
    std::deque<std::pair<IpAddr, uint64_t>> pending_;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
    double tokens_;
    TimePoint tokensAt_{};
    size_t installed_ = 0;
    uint64_t nextId_ = 1;
    RegistryStats stats_;
};

}  // namespace twinrail::hostrouted
