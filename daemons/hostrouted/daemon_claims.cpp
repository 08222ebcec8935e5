// hostrouted's trust rules on the daemon side: the plan's bindings, the claims it refuses
// (logged once per address and port, counted, and shown in HOST_CLAIM_TABLE), freezes and
// the operator's thaw requests.
#include <linux/neighbour.h>

#include <algorithm>
#include <charconv>
#include <chrono>

#include "daemon.h"
#include "state_rows.h"
#include "twinrail/common/log.h"

namespace twinrail::hostrouted {

std::string Daemon::portName(int ifindex) const {
    auto it = ports_.find(ifindex);
    return it == ports_.end() ? std::to_string(ifindex) : it->second.link.name;
}

void Daemon::applyBindings() {
    bindings_.reset(cfg_.bindings);
    if (!cfg_.bindings.empty()) {
        log::info("bindings: ", cfg_.bindings.size(), " host addresses on ",
                  bindings_.byInterface().size(), " interfaces");
    }
    std::set<std::string> names = guarded_;
    for (const auto& [ifname, ips] : bindings_.byInterface()) names.insert(ifname);
    for (const auto& name : names) guardPort(name);
}

// A routed host port with bindings gets the kernel ARP/ND guard (arp_guard.h): a claim
// for an address not bound there never makes a neighbor entry, so it cannot redirect a
// host nor fill the table. EVPN-MH's SVIs are left to the userspace checks: frames
// bridged between a rail's hosts never pass the SVI's ingress anyway.
void Daemon::guardPort(const std::string& name) {
    bool exists = false, managed = false;
    for (const auto& [ifindex, port] : ports_) {
        if (port.link.name != name) continue;
        exists = true;
        managed = port.managed;
    }
    const bool want = exists && managed && !cfg_.evpnMh && bindings_.hasBindings(name);
    if (want) {
        guarded_.insert(name);
        guard_.setPort(name, bindings_.boundTo(name));
    } else if (guarded_.erase(name) > 0) {
        guard_.clearPort(name);
    }
}

void Daemon::applyUnfreeze(TimePoint now) {
    const auto wallNow = std::chrono::system_clock::now();
    for (const auto& [ip, requested] : cfg_.unfreeze) {
        const HostRecord* rec = registry_.find(ip);
        if (rec == nullptr || !rec->frozenSince) continue;
        // Only a freeze older than the request: a request left in CONFIG_DB must not thaw
        // every later freeze of the same address.
        auto frozenWall = wallNow - std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                        now - *rec->frozenSince);
        auto frozenAt =
            std::chrono::duration_cast<std::chrono::seconds>(frozenWall.time_since_epoch()).count();
        if (frozenAt > requested) continue;
        if (registry_.unfreeze(ip, now)) log::notice("host ", ip.str(), ": thawed by the operator");
    }
}

void Daemon::thawFrozen(TimePoint now) {
    for (const auto& ip : registry_.thaw(now)) {
        log::notice("host ", ip.str(), ": thawed, no claim from another port for ",
                    cfg_.moveWindow.count(), " s");
    }
}

void Daemon::refuseClaim(const netlink::NeighborEntry& neigh, const std::string& ifname,
                         std::string_view reason) {
    const RefusedClaim* before = claims_.find({neigh.ip, neigh.ifindex});
    const std::string reasonBefore = before != nullptr ? before->reason : "";
    if (!claims_.refused(neigh.ip, neigh.ifindex, neigh.mac, std::string(reason), Clock::now()))
        return;
    if (claimTable_) claimTable_->markDirty(neigh.ip.str() + options_.stateDbSeparator + ifname);
    if (reasonBefore == reason) return;
    // One line per address, port and reason, however often the claim repeats.
    std::string holder;
    if (const HostBinding* b = bindings_.find(neigh.ip)) {
        holder = ", bound to " + b->ifname;
    } else if (const HostRecord* rec = registry_.find(neigh.ip)) {
        holder = ", held on " + portName(rec->ifindex);
    }
    log::warning("refused claim: ", neigh.ip.str(), " heard on ", ifname, " from ",
                 neigh.mac ? formatMac(*neigh.mac) : "no MAC", " (", reason, holder, ")");
}

std::optional<std::string> Daemon::esTrustRefusal(const IpAddr& ip, int svi,
                                                  const std::optional<MacAddr>& mac, Source source,
                                                  const std::string& esPort) {
    auto it = ports_.find(svi);
    if (it == ports_.end()) return std::nullopt;  // the caller finds no SVI and refuses
    const Port& port = it->second;
    if (source == Source::EsPeer) {
        netlink::NeighborEntry synced{svi, ip, mac, NUD_PERMANENT, 0, 0};
        InterfaceView view{port.managed, port.link.operUp, port.addresses};
        Verdict v =
            classifyNeighbor(synced, false, view, own_, PolicyOptions{cfg_.ipv4, cfg_.ipv6});
        if (!v.accept) return "ES-peer host refused: " + std::string(reasonName(v.reason));
    }
    BindingVerdict b = bindings_.check(ip, port.link.name);
    std::string reason;
    if (b == BindingVerdict::BoundElsewhere || b == BindingVerdict::NotBoundHere) {
        reason = bindingVerdictName(b);
    } else if (const HostBinding* hb = bindings_.find(ip); b == BindingVerdict::Bound &&
                                                           hb != nullptr && !hb->port.empty() &&
                                                           !esPort.empty() && esPort != hb->port) {
        reason = "bound-elsewhere";  // the right SVI, behind another ES port
    }
    if (reason.empty()) return std::nullopt;
    refuseClaim(netlink::NeighborEntry{svi, ip, mac, 0, 0, 0}, port.link.name, reason);
    return "refused: " + reason;
}

void Daemon::askBoundHosts(const Port& port) {
    // A port back up (after the host-port hold, or a cable) has lost its neighbors, and
    // a bonded host sees no reason to speak again: its planned hosts are asked at once,
    // and an answer from a bound address routes it (onHeard).
    if (evpn_ || isSvi(port)) return;
    for (const auto& ip : bindings_.boundTo(port.link.name)) {
        if (registry_.find(ip) != nullptr) continue;
        HostRecord ask;
        ask.ip = ip;
        ask.ifindex = port.link.ifindex;
        sendProbe(ask);
    }
}

void Daemon::onHeard(int ifindex, const IpAddr& ip, const std::optional<MacAddr>& mac) {
    auto now = Clock::now();
    registry_.hostSeen(ifindex, ip, mac, now);
    auto it = ports_.find(ifindex);
    if (it == ports_.end() || !it->second.managed || ip.isLinkLocal() || ip.isUnspecified() ||
        own_.count(ip) != 0)
        return;
    // The kernel guard drops these before the neighbor table sees them, so this is where
    // a claim against the binding shows up (and the only place, with the guard on).
    const Port& port = it->second;
    BindingVerdict b = bindings_.check(ip, port.link.name);
    netlink::NeighborEntry heard{ifindex, ip, mac, NUD_STALE, 0, 0};
    if (b == BindingVerdict::BoundElsewhere || b == BindingVerdict::NotBoundHere)
        return refuseClaim(heard, port.link.name, bindingVerdictName(b));
    // A host held on another port, heard here: the kernel says nothing when its entry here
    // was already there (STALE stays STALE), so what is heard is the claim. It is a move
    // once the holder stops answering, a refused duplicate before. (EVPN-MH decides its
    // SVI hosts from the kernel and FRR together: es_attachment.h.)
    // A bound address heard on its own port with no record yet (it answered
    // askBoundHosts, or spoke before the kernel's neighbor event) is routed from here too.
    const HostRecord* rec = registry_.find(ip);
    if (evpn_ || (rec == nullptr ? b != BindingVerdict::Bound : rec->ifindex == ifindex)) return;
    InterfaceView view{port.managed, port.link.operUp, port.addresses};
    if (!classifyNeighbor(heard, false, view, own_, PolicyOptions{cfg_.ipv4, cfg_.ipv6}).accept)
        return;
    int capPort = 0;
    if (isSvi(port)) {  // on an SVI, only behind the member the bridge FDB names
        auto member = placeSviHost(heard, port);
        if (!member) return;
        capPort = *member;
    }
    acceptClaim(heard, Source::Local, b == BindingVerdict::Bound, port.link.name, capPort);
    // What was heard is its proof of life (the kernel may hold no entry for it: an answer
    // to our probe teaches it nothing), so that a dump without it keeps it.
    registry_.hostSeen(ifindex, ip, mac, now);
}

void Daemon::acceptClaim(const netlink::NeighborEntry& neigh, Source source, bool bound,
                         const std::string& ifname, int capPort) {
    const uint64_t frozenBefore = registry_.stats().frozen;
    Claim c = registry_.accept(neigh, source, Clock::now(), bound, capPort);
    if (registry_.stats().frozen != frozenBefore) {
        const HostRecord* rec = registry_.find(neigh.ip);
        log::warning("host ", neigh.ip.str(), ": frozen on ",
                     rec != nullptr ? portName(rec->firstIfindex) : "its first port", " after ",
                     cfg_.moveLimit, " moves in ", cfg_.moveWindow.count(),
                     " s; `twinrail clear host-freeze ", neigh.ip.str(), "` thaws it");
    }
    if (c == Claim::Accepted) {
        dropClaim(neigh.ip, neigh.ifindex);
    } else {
        refuseClaim(neigh, ifname, claimName(c));
    }
}

void Daemon::expireClaims(TimePoint now) {
    // A claim nobody repeats ages out: the claimer may be gone without a neighbor event
    // (a dropped ARP leaves no entry to delete). Three holdtimes, and at least 10 s.
    auto maxAge = std::max<Clock::duration>(3 * cfg_.holdtime, std::chrono::seconds(10));
    for (const auto& [ip, ifindex] : claims_.expire(now - maxAge)) {
        if (claimTable_)
            claimTable_->markDirty(ip.str() + options_.stateDbSeparator + portName(ifindex));
    }
}

void Daemon::dropClaim(const IpAddr& ip, int ifindex) {
    if (claims_.gone(ip, ifindex) && claimTable_)
        claimTable_->markDirty(ip.str() + options_.stateDbSeparator + portName(ifindex));
}

std::optional<redis::Fields> Daemon::claimRowFor(const std::string& key) const {
    auto sep = key.rfind(options_.stateDbSeparator);
    if (sep == std::string::npos) return std::nullopt;
    auto ip = IpAddr::parse(key.substr(0, sep));
    if (!ip) return std::nullopt;
    const std::string ifname = key.substr(sep + 1);
    for (const auto& [ifindex, port] : ports_) {
        if (port.link.name != ifname) continue;
        const RefusedClaim* c = claims_.find({*ip, ifindex});
        if (c == nullptr) return std::nullopt;
        return claimRow(*c, Clock::now(), std::chrono::system_clock::now());
    }
    // A port hostrouted has no name for is keyed by its ifindex (portName()).
    int ifindex = 0;
    auto [end, ec] = std::from_chars(ifname.data(), ifname.data() + ifname.size(), ifindex);
    const RefusedClaim* c = ec == std::errc() && end == ifname.data() + ifname.size()
                                ? claims_.find({*ip, ifindex})
                                : nullptr;
    if (c == nullptr) return std::nullopt;
    return claimRow(*c, Clock::now(), std::chrono::system_clock::now());
}

std::vector<std::string> Daemon::allClaimKeys() const {
    std::vector<std::string> keys;
    for (const auto& [ip, ifindex] : claims_.keys())
        keys.push_back(ip.str() + options_.stateDbSeparator + portName(ifindex));
    return keys;
}

}  // namespace twinrail::hostrouted
