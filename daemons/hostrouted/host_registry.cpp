#include "host_registry.h"

#include <linux/neighbour.h>

#include <algorithm>

namespace twinrail::hostrouted {
namespace {
// Refills are computed in floating point; without this slack a bucket that should hold
// one token can hold 0.9999999 and the timer would fire again at the same instant.
constexpr double kTokenSlack = 1e-6;
constexpr auto kMinTokenWait = std::chrono::microseconds(100);
// An ES-peer host past its deadline waits for a view read that started after it: checked
// again this often, and for no longer than kPeerViewWait (a reader silent that long is
// broken; its hosts then go as a plain holdtime would have them go). Reads through SONiC's
// bgp container were seen taking 1-5 s.
constexpr auto kPeerViewRecheck = std::chrono::milliseconds(250);
constexpr auto kPeerViewWait = std::chrono::seconds(30);
}  // namespace

std::string_view routeStateName(RouteState s) {
    switch (s) {
        case RouteState::Installed:
            return "installed";
        case RouteState::Pending:
            return "pending";
        case RouteState::Unresponsive:
            return "unresponsive";
        case RouteState::Failed:
            return "failed";
    }
    return "unknown";
}

std::string_view claimName(Claim c) {
    switch (c) {
        case Claim::Accepted:
            return "accepted";
        case Claim::Duplicate:
            return "duplicate";
        case Claim::Frozen:
            return "frozen";
        case Claim::OverCap:
            return "over-cap";
    }
    return "unknown";
}

bool HostRecord::probed() const {
    // An ES peer's host is probed too: after its port to the peer fails, its answers to
    // this leaf's probes are what keeps it routed here (see es_attachment.h).
    return source == Source::EsPeer ||
           (source == Source::Local && (nudState & (NUD_PERMANENT | NUD_NOARP)) == 0);
}

HostRegistry::HostRegistry(RegistryActions& actions, Limits limits, Liveness liveness,
                           MoveGuard moves)
    : actions_(actions),
      limits_(limits),
      liveness_(liveness),
      moves_(moves),
      tokens_(static_cast<double>(limits.burst)) {}

HostRecord* HostRegistry::lookup(const IpAddr& ip) {
    auto it = hosts_.find(ip);
    return it == hosts_.end() ? nullptr : &it->second;
}

const HostRecord* HostRegistry::find(const IpAddr& ip) const {
    auto it = hosts_.find(ip);
    return it == hosts_.end() ? nullptr : &it->second;
}

bool HostRegistry::portFull(int ifindex) const {
    auto it = perPort_.find(ifindex);
    return it != perPort_.end() && it->second >= limits_.maxPerPort;
}

std::chrono::milliseconds HostRegistry::probeOffset(const IpAddr& ip) const {
    // A stable per-host phase spreads probes evenly over the keepalive period instead of
    // sending them in one burst per period (the rdnbrd hotspot).
    auto period = static_cast<size_t>(std::max<long long>(1, liveness_.keepalive.count()));
    return std::chrono::milliseconds(IpAddrHash{}(ip) % period);
}

void HostRegistry::setState(HostRecord& rec, RouteState state, TimePoint now) {
    if (rec.state == state) return;
    rec.state = state;
    rec.since = now;
    actions_.hostChanged(rec.ip);
}

void HostRegistry::schedule(const HostRecord& rec, EventKind kind, TimePoint at) {
    events_.push(Event{at, rec.id, rec.ip, kind});
}

void HostRegistry::startLiveness(const HostRecord& rec, TimePoint now) {
    if (liveness_.keepalive.count() == 0 || !rec.probed()) return;
    schedule(rec, EventKind::Probe, now + probeOffset(rec.ip));
    schedule(rec, EventKind::Expiry, rec.lastSeen + liveness_.holdtime);
}

void HostRegistry::setLiveness(Liveness liveness, TimePoint now) {
    if (liveness.keepalive == liveness_.keepalive && liveness.holdtime == liveness_.holdtime)
        return;
    liveness_ = liveness;
    events_ = {};  // rebuild both schedules under the new timers
    for (auto& [ip, rec] : hosts_) startLiveness(rec, now);
}

void HostRegistry::refillTokens(TimePoint now) {
    if (tokensAt_ != TimePoint{}) {
        double elapsed = std::chrono::duration<double>(now - tokensAt_).count();
        tokens_ = std::min(static_cast<double>(limits_.burst),
                           tokens_ + std::max(0.0, elapsed) * limits_.ratePerSecond);
    }
    tokensAt_ = now;
}

void HostRegistry::install(HostRecord& rec, TimePoint now) {
    actions_.installRoute(rec.ip, rec.ifindex);
    if (rec.kernelIfindex == 0) {
        ++installed_;
        ++stats_.added;
    }
    rec.kernelIfindex = rec.ifindex;
    setState(rec, RouteState::Installed, now);
}

void HostRegistry::admit(HostRecord& rec, TimePoint now) {
    refillTokens(now);
    if (pending_.empty() && tokens_ >= 1.0 - kTokenSlack) {
        tokens_ -= 1.0;
        install(rec, now);
        return;
    }
    ++stats_.rateLimited;
    pending_.emplace_back(rec.ip, rec.id);
    setState(rec, RouteState::Pending, now);
}

void HostRegistry::drainPending(TimePoint now) {
    refillTokens(now);
    while (!pending_.empty() && tokens_ >= 1.0 - kTokenSlack) {
        auto [ip, id] = pending_.front();
        pending_.pop_front();
        HostRecord* rec = lookup(ip);
        if (rec == nullptr || rec->id != id || rec->state != RouteState::Pending) continue;
        tokens_ -= 1.0;
        install(*rec, now);
    }
}

void HostRegistry::withdraw(HostRecord& rec, RouteState next, TimePoint now) {
    if (rec.kernelIfindex != 0) {
        actions_.removeRoute(rec.ip, rec.kernelIfindex);
        rec.kernelIfindex = 0;
        --installed_;
        ++stats_.withdrawn;
    }
    setState(rec, next, now);
}

void HostRegistry::erase(const IpAddr& ip, TimePoint now) {
    HostRecord* rec = lookup(ip);
    if (rec == nullptr) return;
    withdraw(*rec, rec->state, now);
    if (auto it = perPort_.find(rec->capPort); it != perPort_.end() && --it->second == 0)
        perPort_.erase(it);
    depart(*rec, now);
    hosts_.erase(ip);  // pending_ and events_ drop stale ids lazily
    actions_.hostChanged(ip);
}

void HostRegistry::confirm(HostRecord& rec, TimePoint now) {
    rec.lastSeen = std::max(rec.lastSeen, now);  // a view's proof may be older than a reply
    if (rec.state == RouteState::Unresponsive) {
        admit(rec, now);
        if (liveness_.keepalive.count() > 0 && rec.probed())
            schedule(rec, EventKind::Expiry, now + liveness_.holdtime);
    }
}

Claim HostRegistry::acceptEsPeer(const IpAddr& ip, int svi, const MacAddr& mac, TimePoint now,
                                 bool bound) {
    // As the kernel would hold the static neighbor we install for it: permanent.
    netlink::NeighborEntry held{svi, ip, mac, NUD_PERMANENT, 0, 0};
    return accept(held, Source::EsPeer, now, bound);
}

Claim HostRegistry::accept(const netlink::NeighborEntry& neigh, Source source, TimePoint now,
                           bool bound, int capPort) {
    HostRecord* rec = lookup(neigh.ip);
    const int cap = capPort != 0 ? capPort : neigh.ifindex;
    if (rec == nullptr) {
        if (hosts_.size() >= limits_.maxRoutes || portFull(cap)) {
            ++stats_.refused;
            return Claim::OverCap;
        }
        HostRecord fresh;
        fresh.ip = neigh.ip;
        fresh.ifindex = neigh.ifindex;
        fresh.firstIfindex = neigh.ifindex;
        fresh.capPort = cap;
        fresh.mac = neigh.mac;
        fresh.source = source;
        fresh.nudState = neigh.state;
        fresh.since = now;
        fresh.lastSeen = now;  // a new entry gets one holdtime to prove it is alive
        fresh.id = nextId_++;
        if (auto refused = arrive(fresh, now)) return *refused;
        rec = &hosts_.emplace(neigh.ip, fresh).first->second;
        ++perPort_[cap];
        admit(*rec, now);
        startLiveness(*rec, now);
        actions_.hostChanged(rec->ip);
        return Claim::Accepted;
    }
    if (rec->ifindex != neigh.ifindex && bound) {
        // Where the plan puts it: whatever held it elsewhere (a route adopted from before
        // the binding, a spoof learned before it) yields at once.
        changePort(*rec, neigh.ifindex, cap);
        rec->firstIfindex = neigh.ifindex;
        rec->frozenSince.reset();
        rec->moves.clear();
        rec->lastSeen = now;
        admit(*rec, now);
        actions_.hostChanged(rec->ip);
    } else if (rec->ifindex != neigh.ifindex) {
        Claim c = move(*rec, neigh, cap, now);
        if (c != Claim::Accepted) return c;
    } else if (capPort != 0 && capPort != rec->capPort) {
        // Behind another member port of the same SVI: it counts there now, if there is room.
        if (portFull(capPort)) {
            ++stats_.refused;
            return Claim::OverCap;
        }
        changePort(*rec, rec->ifindex, capPort);
        actions_.hostChanged(rec->ip);
    }

    rec->seen = true;
    rec->adopted = false;
    bool wasProbed = rec->probed();
    bool changed = rec->mac != neigh.mac || rec->source != source || rec->nudState != neigh.state;
    rec->mac = neigh.mac;
    rec->source = source;
    rec->nudState = neigh.state;
    // Only kernel-confirmed reachability is proof of life; STALE is not.
    if ((neigh.state & NUD_REACHABLE) != 0 || !rec->probed()) confirm(*rec, now);
    if (rec->state == RouteState::Failed) install(*rec, now);
    if (!wasProbed && rec->probed()) startLiveness(*rec, now);
    if (changed) actions_.hostChanged(rec->ip);
    return Claim::Accepted;
}

void HostRegistry::reject(const IpAddr& ip, int ifindex, TimePoint now) {
    const HostRecord* rec = lookup(ip);
    if (rec == nullptr || rec->ifindex != ifindex) return;
    erase(ip, now);
}

void HostRegistry::rejectAny(const IpAddr& ip, TimePoint now) {
    erase(ip, now);
}

void HostRegistry::hostSeen(int ifindex, const IpAddr& ip, const std::optional<MacAddr>& mac,
                            TimePoint now) {
    HostRecord* rec = lookup(ip);
    if (rec == nullptr || rec->ifindex != ifindex) return;
    // The MAC is sticky: an answer from another MAC on the same port is not the host's.
    if (rec->mac && mac && *rec->mac != *mac) return;
    rec->lastHeard = std::max(rec->lastHeard, now);
    confirm(*rec, now);
}

void HostRegistry::portDown(int ifindex, TimePoint now) {
    std::vector<IpAddr> onPort;
    for (const auto& [ip, rec] : hosts_)
        if (rec.ifindex == ifindex) onPort.push_back(ip);
    for (const auto& ip : onPort) erase(ip, now);
}

void HostRegistry::capPortDown(int capPort, TimePoint now) {
    std::vector<IpAddr> behind;
    for (const auto& [ip, rec] : hosts_)
        if (rec.capPort == capPort && rec.ifindex != capPort) behind.push_back(ip);
    for (const auto& ip : behind) erase(ip, now);
}

void HostRegistry::capPortLeft(int capPort, int svi, TimePoint now) {
    std::vector<IpAddr> behind;
    for (const auto& [ip, rec] : hosts_)
        if (rec.capPort == capPort && rec.ifindex == svi) behind.push_back(ip);
    for (const auto& ip : behind) erase(ip, now);
}

void HostRegistry::adoptRoute(const netlink::HostRoute& route, TimePoint now) {
    if (lookup(route.dst) != nullptr) return;
    HostRecord rec;
    rec.ip = route.dst;
    rec.ifindex = route.ifindex;
    rec.firstIfindex = route.ifindex;
    rec.kernelIfindex = route.ifindex;
    rec.capPort = route.ifindex;  // until it is heard again, behind whichever port
    rec.state = RouteState::Installed;
    rec.since = now;
    rec.lastSeen = now;
    rec.id = nextId_++;
    rec.seen = false;  // kept only if the neighbor snapshot still has this host
    rec.adopted = true;
    hosts_.emplace(route.dst, rec);
    ++perPort_[route.ifindex];
    ++installed_;
}

void HostRegistry::routeFailed(const IpAddr& ip, int /*error*/) {
    ++stats_.routeErrors;
    HostRecord* rec = lookup(ip);
    if (rec == nullptr || rec->kernelIfindex == 0) return;
    rec->kernelIfindex = 0;
    --installed_;
    setState(*rec, RouteState::Failed, rec->since);
}

void HostRegistry::beginSnapshot() {
    ++stats_.resyncs;
    for (auto& [ip, rec] : hosts_) rec.seen = false;
}

void HostRegistry::endSnapshot(TimePoint now) {
    std::vector<IpAddr> gone;
    for (const auto& [ip, rec] : hosts_) {
        if (rec.seen || rec.source == Source::EsPeer) continue;  // FRR's, not the dump's
        // Not in the kernel's table, but answering our probes on its port: the dump says
        // only that the kernel has not needed it yet. Liveness decides when it goes.
        const bool answering = rec.lastHeard != TimePoint{} && liveness_.keepalive.count() > 0 &&
                               now - rec.lastHeard < liveness_.holdtime;
        if (!answering) gone.push_back(ip);
    }
    for (const auto& ip : gone) erase(ip, now);
}

bool HostRegistry::awaitingPeerView(const HostRecord& rec, TimePoint deadline,
                                    TimePoint now) const {
    if (rec.source != Source::EsPeer) return false;
    const bool viewOlder = !peerViewAsOf_ || *peerViewAsOf_ < deadline;
    return viewOlder && now < deadline + kPeerViewWait;
}

void HostRegistry::onTimer(TimePoint now) {
    drainPending(now);
    while (!events_.empty() && events_.top().at <= now) {
        Event ev = events_.top();
        events_.pop();
        HostRecord* rec = lookup(ev.ip);
        if (rec == nullptr || rec->id != ev.id) continue;
        if (liveness_.keepalive.count() == 0 || !rec->probed()) continue;
        if (ev.kind == EventKind::Probe) {
            actions_.sendProbe(*rec);
            ++stats_.probes;
            schedule(*rec, EventKind::Probe, now + liveness_.keepalive);
            continue;
        }
        if (rec->state == RouteState::Unresponsive) continue;  // re-armed by confirm()
        TimePoint deadline = rec->lastSeen + liveness_.holdtime;
        if (deadline > now) {
            schedule(*rec, EventKind::Expiry, deadline);
        } else if (awaitingPeerView(*rec, deadline, now)) {
            schedule(*rec, EventKind::Expiry, now + kPeerViewRecheck);
        } else {
            ++stats_.expired;
            withdraw(*rec, RouteState::Unresponsive, now);
        }
    }
}

std::optional<TimePoint> HostRegistry::nextDeadline() const {
    std::optional<TimePoint> next;
    if (!events_.empty()) next = events_.top().at;
    if (!pending_.empty()) {
        double wait = std::max(0.0, (1.0 - tokens_) / limits_.ratePerSecond);
        auto waitFor = std::max<Clock::duration>(
            kMinTokenWait, std::chrono::ceil<Clock::duration>(std::chrono::duration<double>(wait)));
        auto at = tokensAt_ + waitFor;
        if (!next || at < *next) next = at;
    }
    return next;
}

}  // namespace twinrail::hostrouted
