#include "daemon.h"

#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include "state_rows.h"
#include "twinrail/common/log.h"
#include "twinrail/common/notify.h"
#include "twinrail/redis/warm_restart.h"

namespace twinrail::hostrouted {
namespace {

constexpr auto kStatsPeriod = std::chrono::seconds(1);
constexpr auto kSnapshotDebounce = std::chrono::milliseconds(200);
// Probes and expiries are due at spread-out instants; waking on a 10 ms grid handles all
// that fall in one slot together (at most 100 wakeups/s however many hosts), delaying
// none by more than 10 ms against keepalives and holdtimes of seconds.
constexpr auto kTimerGrid = std::chrono::milliseconds(10);

Limits limitsOf(const Config& c) {
    return Limits{c.maxRoutes, c.maxRoutesPerPort, c.routeRate, c.routeBurst};
}
Liveness livenessOf(const Config& c) {
    return Liveness{c.keepalive, c.holdtime};
}
MoveGuard movesOf(const Config& c) {
    return MoveGuard{c.moveLimit, c.moveWindow};
}
PolicyOptions policyOf(const Config& c) {
    return PolicyOptions{c.ipv4, c.ipv6};
}

}  // namespace

Daemon::Daemon(boost::asio::io_context& io, Config config, DaemonOptions options, Edges edges)
    : io_(io),
      cfg_(std::move(config)),
      options_(options),
      edges_(std::move(edges)),
      routes_(*edges_.routes),
      frr_(*edges_.frr),
      registry_(*this, limitsOf(cfg_), livenessOf(cfg_), movesOf(cfg_)),
      monitor_(edges_.kernel(*this)),
      prober_(
          edges_.prober([this](int ifindex, const IpAddr& ip,
                               const std::optional<MacAddr>& mac) { onHeard(ifindex, ip, mac); },
                        [this] { afterWork(); })),
      frrRecheckTimer_(io),
      guard_(*edges_.tc,
             [](const std::string& port, const std::string& error) {
                 log::warning("ARP/ND guard on ", port, ": ", error);
             }),
      registryTimer_(io),
      auditTimer_(io),
      statsTimer_(io),
      snapshotTimer_(io) {}

Daemon::~Daemon() {
    try {
        stop();
    } catch (...) {  // NOLINT(bugprone-empty-catch): nothing to do while being destroyed
    }
}

// STATE_DB's tables, resynced on every (re)connect; the reconcile is announced then.
void Daemon::startStateDb() {
    if (!edges_.stateDb) return;
    stateDb_ = edges_.stateDb.get();
    hostTable_ = std::make_unique<redis::StateTable>(
        io_, *stateDb_, kHostRouteTable, options_.stateDbSeparator,
        [this](const std::string& key) { return hostRowFor(key); },
        [this] { return allHostKeys(); });
    claimTable_ = std::make_unique<redis::StateTable>(
        io_, *stateDb_, kClaimTable, options_.stateDbSeparator,
        [this](const std::string& key) { return claimRowFor(key); },
        [this] { return allClaimKeys(); });
    foreignTable_ = std::make_unique<redis::StateTable>(
        io_, *stateDb_, kForeignTable, options_.stateDbSeparator,
        [this](const std::string& key) { return foreignRowFor(key); },
        [this] {
            std::vector<std::string> keys;
            for (const auto& ip : foreign_.keys()) keys.push_back(ip.str());
            return keys;
        });
    if (pinner_) pinner_->attachStateDb(*stateDb_, options_.stateDbSeparator);
    if (aclPinner_) aclPinner_->attachStateDb(*stateDb_, options_.stateDbSeparator);
    if (holder_) holder_->attachStateDb(*stateDb_, options_.stateDbSeparator);
    if (cfg_.advertise == Advertise::NetworkTable) startNetworkTable();
    stateDb_->onConnected([this] {
        if (networkTable_) networkTable_->resyncAll();
        if (pinner_) pinner_->resyncState();
        if (aclPinner_) aclPinner_->resyncState();
        if (holder_) holder_->stateDbConnected();
        hostTable_->resyncAll();
        foreignTable_->resyncAll();
        claimTable_->resyncAll();
        publishStats();
        // The start-up reconcile is done (routes adopted before this handler existed).
        redis::announceReconciled(*stateDb_, "hostrouted", options_.stateDbSeparator);
    });
    stateDb_->start();
}

void Daemon::start() {
    auto now = Clock::now();
    applyBindings();
    // Routes from a previous run are adopted, not flushed: unchanged hosts see no change.
    size_t adopted = 0;
    for (int family : {AF_INET, AF_INET6}) {
        uint32_t table = family == AF_INET ? cfg_.routeTable : RT_TABLE_MAIN;
        for (const auto& route : routes_.dump(family, table, cfg_.routeProtocol)) {
            registry_.adoptRoute(route, now);
            ++adopted;
        }
    }
    prober_->start();
    auto before = registry_.stats();
    if (!cfg_.uplinkPins.empty()) startPins();  // before the links snapshot: it needs them
    if (cfg_.evpnMh) startEvpn();               // its first view comes after the kernel snapshot
    if (!cfg_.fabricPrefixes.empty()) startHold();  // before the links snapshot: it needs them
    monitor_->start();
    if (pinner_) pinner_->start();
    if (aclPinner_) aclPinner_->start();
    if (holder_) holder_->start();
    const auto& after = registry_.stats();
    log::notice("start-up reconcile: ", adopted, " routes found in the kernel, ",
                after.withdrawn - before.withdrawn, " removed (host gone), ",
                after.added - before.added, " added, ", registry_.installedCount(),
                " installed now");
    startStateDb();
    startNotices();
    checkFrr();
    if (options_.checkFrr) {
        frr_.watchRestarts([this](const std::string& daemon) { onFrrRestart(daemon); });
        AuditMode mode{cfg_.advertise != Advertise::ImportTable, nullptr};
        if (networkTable_) {
            mode.republish = [this](const std::vector<IpAddr>& ips) {
                networkTable_->republish(ips);
            };
        }
        auditor_ = std::make_unique<ImportAuditor>(
            io_, frr_, routes_, edges_.routeDumper(), [this] { return ourImportedRoutes(); },
            [this] { publishStats(); }, std::move(mode));
        auditor_->start(cfg_.ipv4 ? cfg_.frrAuditInterval : std::chrono::seconds(0));
    }
    armAuditTimer();
    armStatsTimer();
    sdNotify("READY=1\nSTATUS=" + std::to_string(registry_.installedCount()) + " host routes");
}

void Daemon::stop() {
    for (auto* t :
         {&registryTimer_, &auditTimer_, &statsTimer_, &snapshotTimer_, &frrRecheckTimer_})
        t->cancel();
    if (auditor_) auditor_->stop();
    frr_.stopWatching();
    if (pinner_) pinner_->stop();
    if (aclPinner_) aclPinner_->stop();
    if (holder_) holder_->stop();  // held ports stay down, as routes stay in place
    guard_.stop();                 // the filters stay: a restart must not open the ports
    if (evpn_) evpn_->stop();
    if (stateDb_ != nullptr) stateDb_->stop();
}

void Daemon::applyConfig(const Config& next) {
    auto check = checkRuntimeChange(cfg_, next);
    if (const auto* err = std::get_if<ConfigError>(&check)) {
        ++configRejected_;
        log::error("config rejected, keeping the running config: ", err->str());
        return;
    }
    if (next == cfg_) return;
    bool frrRelevant =
        next.ipv4 != cfg_.ipv4 || next.ipv6 != cfg_.ipv6 || next.manageFrr != cfg_.manageFrr;
    cfg_ = next;
    applyPinConfig();
    applyHoldConfig();
    registry_.setLimits(limitsOf(cfg_));
    registry_.setLiveness(livenessOf(cfg_), Clock::now());
    registry_.setMoveGuard(movesOf(cfg_));
    applyBindings();
    applyUnfreeze(Clock::now());
    log::notice("config applied: ", cfg_.interfaces.size(), " interface patterns");
    // Managed ports, families or policy may have changed: re-evaluate everything.
    requestSnapshot("config change");
    if (frrRelevant) checkFrr();
    if (auditor_)
        auditor_->setInterval(cfg_.ipv4 ? cfg_.frrAuditInterval : std::chrono::seconds(0));
    armAuditTimer();
}

netlink::HostRoute Daemon::routeFor(const IpAddr& ip, int ifindex) const {
    uint32_t table = ip.isV4() ? cfg_.routeTable : static_cast<uint32_t>(RT_TABLE_MAIN);
    return netlink::HostRoute{ip, ifindex, table, cfg_.routeProtocol};
}

void Daemon::onLink(const netlink::LinkState& link, bool removed) {
    if (pinner_) pinner_->onLink(link, removed);
    if (aclPinner_) aclPinner_->onLink(link, removed);
    auto it = ports_.find(link.ifindex);
    bool wasUp = it != ports_.end() && it->second.link.operUp && it->second.managed;
    const int masterBefore = it != ports_.end() ? it->second.link.master : 0;
    const bool operBefore = it != ports_.end() && it->second.link.operUp;
    if (!inSnapshot_) sviMemberChanged(link, masterBefore, operBefore, removed);
    // A port's VLAN list holds for the bridge it came from only.
    if (removed || link.master != masterBefore) portVlans_.erase(link.ifindex);
    if (removed) {
        if (it != ports_.end()) ports_.erase(it);
        proxyWritten_.erase(link.name);  // its sysctls went with it
        sonicWarnings_.erase(link.name);
        if (guarded_.erase(link.name) > 0) guard_.clearPort(link.name);  // re-made if it returns
        for (const auto& ip : foreign_.portGone(link.ifindex))
            if (foreignTable_) foreignTable_->markDirty(ip.str());
        for (const auto& [ip, ifindex] : claims_.portGone(link.ifindex)) {
            if (claimTable_)
                claimTable_->markDirty(ip.str() + options_.stateDbSeparator + link.name);
        }
        registry_.portDown(link.ifindex, Clock::now());
        if (holder_ && !inSnapshot_) holder_->portsChanged(ports_);
        return;
    }
    Port& port = ports_[link.ifindex];
    port.link = link;
    port.managed = cfg_.managesInterface(link.name);
    applyProxy(port);
    guardPort(link.name);
    bool isUp = port.link.operUp && port.managed;
    if (inSnapshot_) return;
    if (holder_) holder_->portsChanged(ports_);
    // An ES port's loss withdraws its hosts at once, before FRR's next read says so.
    if (evpn_ && !port.managed && operBefore != link.operUp) evpn_->portsChanged();
    if (wasUp && !isUp) {
        log::info("port ", link.name, " down: withdrawing its host routes");
        noticePortLost(link.ifindex);  // first: the notice goes out before any route work
        registry_.portDown(link.ifindex, Clock::now());
    } else if (!wasUp && isUp) {
        requestSnapshot("port " + link.name + " up");
        askBoundHosts(port);
    }
}

void Daemon::onAddress(const netlink::AddressEntry& addr, bool removed) {
    Port& port = ports_[addr.ifindex];
    auto& list = port.addresses;
    auto it = std::find(list.begin(), list.end(), addr.prefix);
    if (removed && it != list.end()) list.erase(it);
    if (!removed && it == list.end()) list.push_back(addr.prefix);
    rebuildOwnAddresses();
    if (aclPinner_) aclPinner_->setLocal(localPrefixes());
    if (!inSnapshot_ && port.managed) requestSnapshot("address change");
}

void Daemon::onNeighbor(const netlink::NeighborEntry& neigh, bool removed) {
    static const Port kUnknown;
    auto it = ports_.find(neigh.ifindex);
    const Port& port = it == ports_.end() ? kUnknown : it->second;
    if (aclPinner_ && !port.managed) aclPinner_->onNeighbor(neigh, removed);  // uplinks' peers
    if (evpn_ && port.managed) return evpn_->onNeighbor(neigh, removed);
    InterfaceView view{port.managed, port.link.operUp, port.addresses};
    Verdict v = classifyNeighbor(neigh, removed, view, own_, policyOf(cfg_));
    auto now = Clock::now();
    noteForeign(neigh, v.reason == Reason::OutsideSubnets && port.managed);
    if (!v.accept) {
        if (port.managed && log::enabled(log::Priority::Debug)) {
            log::debug("neighbor ", neigh.ip.str(), " on ", port.link.name, ": ",
                       reasonName(v.reason));
        }
        // Only this port's own host goes; a claim from here is over.
        registry_.reject(neigh.ip, neigh.ifindex, now);
        dropClaim(neigh.ip, neigh.ifindex);
        sviNeighbors_.forget(neigh.ip, neigh.ifindex);
        return;
    }
    BindingVerdict b = bindings_.check(neigh.ip, port.link.name);
    if (b == BindingVerdict::BoundElsewhere || b == BindingVerdict::NotBoundHere) {
        registry_.reject(neigh.ip, neigh.ifindex, now);  // held here before a binding said no
        return refuseClaim(neigh, port.link.name, bindingVerdictName(b));
    }
    int capPort = 0;  // the port max_routes_per_port counts: the SVI member it is behind
    if (isSvi(port)) {
        auto member = placeSviHost(neigh, port);
        if (!member) return;
        capPort = *member;
    }
    acceptClaim(neigh, v.source, b == BindingVerdict::Bound, port.link.name, capPort);
}

void Daemon::noteForeign(const netlink::NeighborEntry& neigh, bool foreign) {
    bool changed = foreign ? foreign_.seen(neigh.ip, neigh.ifindex, neigh.mac, Clock::now())
                           : foreign_.gone(neigh.ip);
    if (changed && foreignTable_) foreignTable_->markDirty(neigh.ip.str());
}

std::optional<redis::Fields> Daemon::foreignRowFor(const std::string& key) const {
    auto ip = IpAddr::parse(key);
    const ForeignHost* h = ip ? foreign_.find(*ip) : nullptr;
    if (h == nullptr) return std::nullopt;
    auto it = ports_.find(h->ifindex);
    return redis::Fields{
        {"ifname", it == ports_.end() ? std::to_string(h->ifindex) : it->second.link.name},
        {"mac", h->mac ? formatMac(*h->mac) : ""},
        {"since", wallClock(h->since, Clock::now(), std::chrono::system_clock::now())}};
}

void Daemon::onSnapshotBegin() {
    inSnapshot_ = true;
    // Links and addresses are rebuilt from the dump, so vanished ones do not linger. The
    // old table is kept until the snapshot completes: an aborted one must not leave
    // ports without their addresses, which would reject (withdraw) their hosts.
    portsBeforeSnapshot_ = std::move(ports_);
    ports_.clear();
    own_.clear();
    fdb_.beginSnapshot();
    sviNeighbors_.clear();  // the snapshot's neighbors tell them again
    registry_.beginSnapshot();
}

void Daemon::onSnapshotEnd() {
    fdb_.endSnapshot();
    registry_.endSnapshot(Clock::now());
    portsBeforeSnapshot_.reset();
    inSnapshot_ = false;
    if (holder_) holder_->portsChanged(ports_);
}

void Daemon::onSnapshotAborted() {
    // What the partial dumps delivered was applied as events; nothing is swept.
    // Link states are newer than the saved ones; addresses are kept from before unless
    // the port is new, since the address dump may not have run.
    if (portsBeforeSnapshot_) {
        for (auto& [ifindex, port] : ports_) {
            auto old = portsBeforeSnapshot_->find(ifindex);
            if (old == portsBeforeSnapshot_->end()) {
                portsBeforeSnapshot_->emplace(ifindex, std::move(port));
                continue;
            }
            old->second.link = port.link;
            old->second.managed = port.managed;
        }
        ports_ = std::move(*portsBeforeSnapshot_);
        portsBeforeSnapshot_.reset();
    }
    rebuildOwnAddresses();
    inSnapshot_ = false;
}

void Daemon::rebuildOwnAddresses() {
    own_.clear();
    for (const auto& [idx, p] : ports_)
        for (const auto& a : p.addresses) own_.insert(a.addr);
}

void Daemon::onBurstEnd() {
    afterWork();
}

void Daemon::installRoute(const IpAddr& ip, int ifindex) {
    routes_.submit(netlink::RouteOp::Replace, routeFor(ip, ifindex));
    if (notifier_) portHosts_.routed(ip, ifindex);
}

void Daemon::removeRoute(const IpAddr& ip, int ifindex) {
    routes_.submit(netlink::RouteOp::Remove, routeFor(ip, ifindex));
    if (notifier_) portHosts_.withdrawn(ip, ifindex, Clock::now());
}

void Daemon::sendProbe(const HostRecord& host) {
    auto it = ports_.find(host.ifindex);
    if (it == ports_.end() || !it->second.link.mac) return;
    ProbeTarget t{host.ifindex, host.ip, host.mac, *it->second.link.mac, IpAddr{}};
    for (const auto& a : it->second.addresses) {
        if (host.ip.isV4() && a.contains(host.ip)) t.ourIp = a.addr;
        // NUD probes come from our link-local address, as the kernel's do.
        if (host.ip.isV6() && a.addr.isV6() && a.addr.isLinkLocal()) t.ourIp = a.addr;
    }
    if (t.ourIp.family() == 0) return;
    prober_->probe(t);
}

void Daemon::hostChanged(const IpAddr& ip) {
    if (hostTable_) hostTable_->markDirty(ip.str());
    if (networkTable_) networkTable_->markDirty(ip);
}

void Daemon::afterWork() {
    for (const auto& r : routes_.flush()) {
        if (r.error == 0) continue;
        if (r.op == netlink::RouteOp::Remove && r.error == ESRCH) continue;  // already gone
        log::warning("kernel refused to ", r.op == netlink::RouteOp::Replace ? "add" : "remove",
                     " host route ", r.route.dst.str(), ": ", std::strerror(r.error));
        if (r.op == netlink::RouteOp::Replace) registry_.routeFailed(r.route.dst, r.error);
    }
    armRegistryTimer();
}

void Daemon::armRegistryTimer() {
    auto next = registry_.nextDeadline();
    if (!next) return;
    auto grid = std::chrono::duration_cast<Clock::duration>(kTimerGrid);
    auto slot =
        Clock::time_point(((next->time_since_epoch() + grid - Clock::duration(1)) / grid) * grid);
    if (registryTimer_.expiry() == slot) return;
    registryTimer_.expires_at(slot);
    registryTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        registry_.onTimer(Clock::now());
        afterWork();
    });
}

void Daemon::armAuditTimer() {
    auditTimer_.cancel();
    if (cfg_.auditInterval.count() == 0) return;
    auditTimer_.expires_after(cfg_.auditInterval);
    auditTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        monitor_->requestSnapshot("periodic audit");
        armAuditTimer();
    });
}

void Daemon::requestSnapshot(const std::string& reason) {
    if (snapshotQueued_) return;
    snapshotQueued_ = true;
    snapshotTimer_.expires_after(kSnapshotDebounce);
    snapshotTimer_.async_wait([this, reason](const boost::system::error_code& ec) {
        if (ec) return;
        snapshotQueued_ = false;
        monitor_->requestSnapshot(reason);
    });
}

std::optional<redis::Fields> Daemon::hostRowFor(const std::string& key) const {
    auto ip = IpAddr::parse(key);
    const HostRecord* rec = ip ? registry_.find(*ip) : nullptr;
    if (rec == nullptr) return std::nullopt;
    auto it = ports_.find(rec->ifindex);
    std::string ifname = it == ports_.end() ? std::to_string(rec->ifindex) : it->second.link.name;
    // On an SVI, the member the FDB put the host behind (what max_routes_per_port counts).
    // With EVPN-MH, the Ethernet segment's bond (FRR's view).
    std::string port;
    if (rec->capPort != 0 && rec->capPort != rec->ifindex) {
        auto member = ports_.find(rec->capPort);
        port = member == ports_.end() ? std::to_string(rec->capPort) : member->second.link.name;
    } else if (evpn_) {
        port = evpn_->esPortOf(*ip);
    }
    return hostRow(*rec, ifname, port, Clock::now(), std::chrono::system_clock::now());
}

std::vector<std::string> Daemon::allHostKeys() const {
    std::vector<std::string> keys;
    keys.reserve(registry_.size());
    registry_.forEach([&keys](const HostRecord& r) { keys.push_back(r.ip.str()); });
    return keys;
}

void Daemon::armStatsTimer() {
    statsTimer_.expires_after(kStatsPeriod);
    statsTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        const auto& s = registry_.stats();
        if (s.refused > refusedLogged_) {  // one line per period, however hard the storm
            log::warning("refused ", s.refused - refusedLogged_,
                         " new hosts over the caps (max_routes ", cfg_.maxRoutes,
                         ", max_routes_per_port ", cfg_.maxRoutesPerPort, ")");
            refusedLogged_ = s.refused;
        }
        thawFrozen(Clock::now());
        expireClaims(Clock::now());
        publishStats();
        armStatsTimer();
    });
}

}  // namespace twinrail::hostrouted
