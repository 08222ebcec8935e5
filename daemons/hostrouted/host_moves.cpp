// How learned (unbound) addresses move between ports: a claim from another port is a
// duplicate while the holder answers, a paced move once it does not, and too many moves in
// a window freeze the address on the port it was first learned on. A withdrawn address is
// remembered for a window, so going and coming back elsewhere counts as a move too.
#include <algorithm>

#include "host_registry.h"

namespace twinrail::hostrouted {

bool HostRegistry::freezeNow(std::deque<TimePoint>& moves, TimePoint now) {
    while (!moves.empty() && now - moves.front() >= moves_.window) moves.pop_front();
    moves.push_back(now);
    ++stats_.moves;
    if (moves_.limit == 0 || moves.size() < moves_.limit) return false;
    ++stats_.frozen;
    return true;
}

std::optional<Claim> HostRegistry::arrive(HostRecord& fresh, TimePoint now) {
    auto it = departed_.find(fresh.ip);
    if (it == departed_.end()) return std::nullopt;
    Departed d = std::move(it->second);
    departed_.erase(it);
    if (now - std::max(d.at, d.lastForeignClaim) >= moves_.window) return std::nullopt;
    fresh.firstIfindex = d.firstIfindex != 0 ? d.firstIfindex : fresh.ifindex;
    fresh.moves = std::move(d.moves);
    fresh.frozenSince = d.frozenSince;
    fresh.lastForeignClaim = d.lastForeignClaim;
    auto keep = [this, &fresh, &d, now] {
        d.moves = fresh.moves;
        d.lastForeignClaim = now;
        departed_.emplace(fresh.ip, std::move(d));
    };
    if (fresh.frozenSince && fresh.ifindex != fresh.firstIfindex) {
        ++stats_.frozenRefused;
        keep();
        return Claim::Frozen;
    }
    if (fresh.ifindex == d.ifindex || fresh.frozenSince) return std::nullopt;
    fresh.lastForeignClaim = now;
    if (freezeNow(fresh.moves, now)) {
        fresh.frozenSince = now;
        d.frozenSince = now;
        if (fresh.ifindex != fresh.firstIfindex) {
            keep();
            return Claim::Frozen;
        }
    }
    return std::nullopt;
}

void HostRegistry::depart(const HostRecord& rec, TimePoint now) {
    if (moves_.limit == 0) return;
    if (departed_.size() >= limits_.maxRoutes) {
        // Full: old ones first; a flood of departures cannot grow this past the table cap.
        std::erase_if(departed_, [this, now](const auto& kv) {
            return now - std::max(kv.second.at, kv.second.lastForeignClaim) >= moves_.window;
        });
        if (departed_.size() >= limits_.maxRoutes) return;
    }
    departed_[rec.ip] = Departed{rec.ifindex,     rec.firstIfindex,     rec.moves,
                                 rec.frozenSince, rec.lastForeignClaim, now};
}

bool HostRegistry::holderAlive(const HostRecord& rec, TimePoint now) const {
    // Without probing there is no proof either way: the newest claim wins, as before. A
    // route adopted at start-up proves nothing until its host is heard on its port.
    if (liveness_.keepalive.count() == 0 || !rec.probed() || rec.adopted) return false;
    if (rec.state == RouteState::Unresponsive || rec.state == RouteState::Failed) return false;
    return now - rec.lastSeen < liveness_.holdtime;
}

void HostRegistry::changePort(HostRecord& rec, int ifindex, int capPort) {
    if (auto it = perPort_.find(rec.capPort); it != perPort_.end() && --it->second == 0)
        perPort_.erase(it);
    rec.capPort = capPort != 0 ? capPort : ifindex;
    ++perPort_[rec.capPort];
    rec.ifindex = ifindex;
}

// A claim for rec's address on another port. A host that still answers on its own port is
// not moving: the other port's claim is a duplicate (a spoof, or two hosts with one
// address), and the route stays. A real move (the holder stopped answering) is paced like a
// new host, and too many moves freeze the address on its first port.
Claim HostRegistry::move(HostRecord& rec, const netlink::NeighborEntry& neigh, int capPort,
                         TimePoint now) {
    rec.lastForeignClaim = now;
    if (rec.frozenSince) {
        ++stats_.frozenRefused;
        return Claim::Frozen;
    }
    if (holderAlive(rec, now)) {
        ++stats_.duplicates;
        return Claim::Duplicate;
    }
    if (portFull(capPort)) {
        ++stats_.refused;
        return Claim::OverCap;
    }
    if (freezeNow(rec.moves, now)) {
        rec.frozenSince = now;
        if (rec.ifindex != rec.firstIfindex && rec.firstIfindex != 0) {
            changePort(rec, rec.firstIfindex);
            rec.lastSeen = now;  // one holdtime for the first port's host to answer
            admit(rec, now);
        }
        actions_.hostChanged(rec.ip);
        // Frozen where it is heard now (its first port): this claim is the one that stays.
        return neigh.ifindex == rec.ifindex ? Claim::Accepted : Claim::Frozen;
    }
    changePort(rec, neigh.ifindex, capPort);
    rec.lastSeen = now;
    admit(rec, now);  // the old route stays until the new one is written
    actions_.hostChanged(rec.ip);
    return Claim::Accepted;
}

std::vector<IpAddr> HostRegistry::thaw(TimePoint now) {
    std::vector<IpAddr> out;
    for (auto it = departed_.begin(); it != departed_.end();) {
        const Departed& d = it->second;
        const bool quiet = now - std::max(d.at, d.lastForeignClaim) >= moves_.window;
        if (quiet && d.frozenSince) out.push_back(it->first);
        it = quiet ? departed_.erase(it) : std::next(it);
    }
    for (auto& [ip, rec] : hosts_) {
        if (!rec.frozenSince || now - rec.lastForeignClaim < moves_.window) continue;
        rec.frozenSince.reset();
        rec.moves.clear();
        out.push_back(ip);
        actions_.hostChanged(ip);
    }
    return out;
}

bool HostRegistry::unfreeze(const IpAddr& ip, TimePoint /*now*/) {
    if (auto d = departed_.find(ip); d != departed_.end() && d->second.frozenSince) {
        departed_.erase(d);
        return true;
    }
    HostRecord* rec = lookup(ip);
    if (rec == nullptr || !rec->frozenSince) return false;
    rec->frozenSince.reset();
    rec->moves.clear();
    actions_.hostChanged(ip);
    return true;
}

}  // namespace twinrail::hostrouted
