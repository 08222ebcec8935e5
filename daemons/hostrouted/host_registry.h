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
    TimePoint since{};     // last state change
    TimePoint lastSeen{};  // last proof of life
    // Last answer heard on the wire (our probes, a claim the guard heard): proof that does
    // not need a kernel neighbor entry. A host asked after its port came back (hold,
    // cable) answers our probe, which the kernel never learns from.
    TimePoint lastHeard{};
    int kernelIfindex = 0;  // where the kernel route points now, 0 = no route
    // The port max_routes_per_port counts it on: the member port behind an SVI (the
    // bridge FDB's answer), else ifindex itself.
    int capPort = 0;
    uint64_t id = 0;   // distinguishes a re-created record in the schedules
    bool seen = true;  // mark-and-sweep during snapshots
    // Moves (learned, unbound hosts): the port it was first learned on, the instants of its
    // recent moves, and when it froze (too many moves: it stays on firstIfindex).
    int firstIfindex = 0;
    std::deque<TimePoint> moves;
    std::optional<TimePoint> frozenSince;
    TimePoint lastForeignClaim{};
    bool adopted = false;  // a route from before a restart, not yet heard on its port
    bool probed() const;   // local dynamic entries and ES-peer hosts are probed
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

// N moves within the window freeze a learned address on the port where it was first
// learned (FRR's duplicate-address detection defaults: 5 moves in 180 s). It thaws after a
// window without claims from another port, or when an operator clears it.
struct MoveGuard {
    uint32_t limit = 5;  // 0 = never freeze
    std::chrono::seconds window{180};
    bool operator==(const MoveGuard&) const = default;
};

// What became of a neighbor the policy accepted.
enum class Claim {
    Accepted,   // routed (or queued for the rate limiter) where it was heard
    Duplicate,  // another port claims an address whose holder still answers: refused
    Frozen,     // the address moved too often and is frozen on its first port: refused
    OverCap,    // the new port is full, or the table is: refused
};
std::string_view claimName(Claim c);

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
    uint64_t duplicates = 0;  // claims refused because the holder is alive
    uint64_t frozen = 0;      // freezes
    uint64_t frozenRefused = 0;
};

class HostRegistry {
  public:
    HostRegistry(RegistryActions& actions, Limits limits, Liveness liveness, MoveGuard moves = {});

    void setLimits(Limits limits) { limits_ = limits; }
    void setLiveness(Liveness liveness, TimePoint now);
    void setMoveGuard(MoveGuard moves) { moves_ = moves; }

    // A neighbor heard on neigh.ifindex. On the port that holds the address it refreshes
    // the record; on another port it is a move only when the holder has stopped answering
    // (or is not probed), and a move takes a token and a slot like a new host. A bound
    // neighbor (heard where the plan binds its address) takes the address at once.
    // A host only the ES peer learned (FRR's EVPN view), decided routable through `svi`.
    Claim acceptEsPeer(const IpAddr& ip, int svi, const MacAddr& mac, TimePoint now, bool bound);
    // `capPort`: the port the per-port cap counts (a host on an SVI: its member port); 0
    // means neigh.ifindex for a new host, and "unchanged" for one already held there.
    Claim accept(const netlink::NeighborEntry& neigh, Source source, TimePoint now,
                 bool bound = false, int capPort = 0);
    // A rejected or deleted neighbor on `ifindex`: it withdraws the host only when that is
    // the port holding it. Another port's events never touch it.
    void reject(const IpAddr& ip, int ifindex, TimePoint now);
    void rejectAny(const IpAddr& ip, TimePoint now);  // a decision about the host itself
    // ARP/ND from the host: proof of life only on its port, and from its recorded MAC.
    void hostSeen(int ifindex, const IpAddr& ip, const std::optional<MacAddr>& mac, TimePoint now);
    // A read of FRR's EVPN view that started at `asOf` is in (its peerActive hosts confirmed
    // through hostSeen). An ES-peer host whose probes go unanswered here (its answers may
    // reach the peer, which shares the gateway MAC) expires only once a view read that
    // started after its deadline did not confirm it: a slow read is not a silent host.
    void peerViewRead(TimePoint asOf) { peerViewAsOf_ = asOf; }
    // Thaws frozen addresses that saw no foreign claim for a window; returns them.
    std::vector<IpAddr> thaw(TimePoint now);
    bool unfreeze(const IpAddr& ip, TimePoint now);  // the operator's clear
    void portDown(int ifindex, TimePoint now);
    // A member port behind an SVI went down: every host counted on it goes at once.
    void capPortDown(int capPort, TimePoint now);
    // The same for the hosts on one SVI only (the member left that SVI's VLAN).
    void capPortLeft(int capPort, int svi, TimePoint now);
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

    // What a withdrawn address leaves behind for a move window (host_moves.cpp): a host
    // that goes from one port and comes back on another is a move, not a new host, so a
    // flap through deletes cannot dodge the freeze.
    struct Departed {
        int ifindex = 0, firstIfindex = 0;
        std::deque<TimePoint> moves;
        std::optional<TimePoint> frozenSince;
        TimePoint lastForeignClaim{}, at{};
    };
    std::optional<Claim> arrive(HostRecord& fresh, TimePoint now);
    void depart(const HostRecord& rec, TimePoint now);
    bool freezeNow(std::deque<TimePoint>& moves, TimePoint now);

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
    bool holderAlive(const HostRecord& rec, TimePoint now) const;
    bool awaitingPeerView(const HostRecord& rec, TimePoint deadline, TimePoint now) const;
    Claim move(HostRecord& rec, const netlink::NeighborEntry& neigh, int capPort, TimePoint now);
    void changePort(HostRecord& rec, int ifindex, int capPort = 0);
    std::chrono::milliseconds probeOffset(const IpAddr& ip) const;

    RegistryActions& actions_;
    Limits limits_;
    Liveness liveness_;
    std::optional<TimePoint> peerViewAsOf_;  // see peerViewRead
    MoveGuard moves_;
    std::unordered_map<IpAddr, HostRecord, IpAddrHash> hosts_;
    std::unordered_map<int, uint32_t> perPort_;
    std::unordered_map<IpAddr, Departed, IpAddrHash> departed_;
    std::deque<std::pair<IpAddr, uint64_t>> pending_;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
    double tokens_;
    TimePoint tokensAt_{};
    size_t installed_ = 0;
    uint64_t nextId_ = 1;
    RegistryStats stats_;
};

}  // namespace twinrail::hostrouted
