#include "daemon.h"

#include <linux/neighbour.h>

#include "twinrail/common/log.h"
#include "twinrail/common/notify.h"

namespace twinrail::planesteer {
namespace {

bool liveNeighbor(const netlink::NeighborEntry& n) {
    return (n.state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT)) != 0;
}

}  // namespace

Daemon::Daemon(boost::asio::io_context& io, Config config)
    : io_(io), cfg_(std::move(config)), monitor_(io, *this), probeTimer_(io) {
    for (const auto& [name, bond] : cfg_.bonds)
        bonds_.push_back(std::make_unique<Bond>(name, bond, cfg_.steer));
}

void Daemon::start() {
    for (auto& b : bonds_) {
        b->pins = std::make_unique<TcPins>(io_, b->name);
        b->pins->clearLeftovers();
        Bond* bond = b.get();
        b->prober = std::make_unique<ArpProber>(
            io_, b->ports, [bond](size_t port, const IpAddr& peer, const MacAddr& mac) {
                if (peer == bond->cfg.gateway) bond->gatewayMac = mac;
                bond->policy.answered(peer, port, Clock::now());
            });
        b->prober->start();
        if (!b->cfg.gateway) continue;
        b->echo = std::make_unique<EchoProber>(
            io_, b->ports, cfg_.sampleOneIn,
            [bond](size_t port, const IpAddr& peer) {
                bond->policy.answered(peer, port, Clock::now());
            },
            [this, bond](const IpAddr& dst) { sampled(*bond, dst); });
        b->echo->start();
    }
    monitor_.start();
    armProbe();
    log::notice("steering ", bonds_.size(), " bond(s): a probe per peer and port every ",
                cfg_.steer.interval.count(), " ms, a port silent after ", cfg_.steer.misses);
    sdNotify("READY=1\nSTATUS=steering " + std::to_string(bonds_.size()) + " bonds");
}

void Daemon::stop() {
    // Pins stay: the plane that lost a peer is still without it. A restart finds them,
    // removes them, and decides again within a few probes.
    probeTimer_.cancel();
}

void Daemon::applyConfig(const Config& next) {
    if (next.bonds != cfg_.bonds || next.sampleOneIn != cfg_.sampleOneIn) {
        log::error(
            "config rejected, keeping the running config: bonds and sample_one_in need a "
            "restart");
        return;
    }
    cfg_ = next;
    for (auto& b : bonds_) b->policy.setParams(cfg_.steer);
    log::notice("config applied");
}

Bond* Daemon::bondOf(int ifindex) {
    for (auto& b : bonds_)
        if (b->ifindex == ifindex) return b.get();
    return nullptr;
}

void Daemon::onLink(const netlink::LinkState& link, bool removed) {
    for (auto& b : bonds_) {
        if (link.name == b->name) {
            b->ifindex = removed ? 0 : link.ifindex;
            b->mac = link.mac;
        }
        for (size_t p = 0; p < b->ports.size(); ++p) {
            if (link.name != b->ports[p]) continue;
            b->portIfindex[p] = removed ? 0 : link.ifindex;
            bool wasUp = b->policy.portUp(p);
            b->policy.setPortUp(p, !removed && link.operUp, Clock::now());
            // Back up: pin everything to the other port now, before the bond uses it.
            if (!wasUp && b->policy.portUp(p) && b->pins) decide(*b);
        }
    }
}

void Daemon::onAddress(const netlink::AddressEntry& addr, bool removed) {
    Bond* b = bondOf(addr.ifindex);
    if (b == nullptr || !addr.prefix.addr.isV4()) return;
    if (removed && b->address && b->address->addr == addr.prefix.addr) b->address.reset();
    if (!removed) b->address = addr.prefix;
}

void Daemon::onNeighbor(const netlink::NeighborEntry& n, bool removed) {
    Bond* b = bondOf(n.ifindex);
    if (b == nullptr || !n.ip.isV4()) return;
    if (b->cfg.gateway == n.ip) {  // the way to the other rails, not a peer
        if (!removed && liveNeighbor(n) && n.mac) b->gatewayMac = n.mac;
        return;
    }
    if (removed || !liveNeighbor(n)) {
        if (b->remote.count(n.ip) == 0) forget(*b, n.ip);
        return;
    }
    if (inSnapshot_) b->seenInSnapshot.insert(n.ip);
    if (!b->policy.hasPeer(n.ip) && b->policy.peerCount() < cfg_.maxPeers)
        b->policy.addPeer(n.ip, Clock::now());
}

void Daemon::onSnapshotBegin() {
    inSnapshot_ = true;
    for (auto& b : bonds_) b->seenInSnapshot.clear();
}

void Daemon::onSnapshotEnd() {
    inSnapshot_ = false;
    for (auto& b : bonds_) {
        for (const auto& peer : b->policy.peers())
            if (b->seenInSnapshot.count(peer) == 0 && b->remote.count(peer) == 0) forget(*b, peer);
    }
}

void Daemon::armProbe() {
    probeTimer_.expires_after(cfg_.steer.interval);
    probeTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        probeAll();
        armProbe();
    });
}

void Daemon::forget(Bond& b, const IpAddr& peer) {
    b.policy.removePeer(peer);
    b.remote.erase(peer);
    if (b.pinned.erase(peer) > 0) b.pins->unpin(peer);
}

// A sampled outgoing packet: a peer on another rail when it is in the fabric but not in
// the bond's own subnet (on-link peers are the neighbor table's).
void Daemon::sampled(Bond& b, const IpAddr& dst) {
    if (!b.address || !b.cfg.fabric || !remotePeer(dst, *b.address, *b.cfg.fabric, *b.cfg.gateway))
        return;
    auto it = b.remote.find(dst);
    if (it != b.remote.end()) {
        it->second = Clock::now();
        return;
    }
    if (b.policy.peerCount() >= cfg_.maxPeers) return;
    b.remote.emplace(dst, Clock::now());
    b.policy.addPeer(dst, Clock::now());
}

// The gateway answers ARP for itself on both planes' leaves with the one gateway MAC.
void Daemon::askGateway(Bond& b) {
    for (size_t p = 0; p < b.ports.size(); ++p)
        if (b.policy.portUp(p)) b.prober->probe(p, *b.mac, b.address->addr, *b.cfg.gateway);
}

void Daemon::probeAll() {
    auto now = Clock::now();
    for (auto& b : bonds_) {
        if (!b->mac || !b->address) continue;  // the bond is not up yet
        std::vector<IpAddr> idle;
        for (const auto& [peer, seen] : b->remote)
            if (now - seen > cfg_.remoteIdle) idle.push_back(peer);
        for (const auto& peer : idle) forget(*b, peer);
        if (b->echo && !b->gatewayMac) askGateway(*b);
        for (const auto& peer : b->policy.peers()) {
            if (peer == b->address->addr) continue;
            // Echo through the gateway when there is one: the probe takes the traffic's own
            // path, forwarded by the leaf's hardware, not its CPU (ARP is trapped to the
            // CPU, and control-plane policing drops ARP floods). ARP otherwise: a fabric
            // of one subnet, or before anything resolved the gateway.
            bool echo = b->echo && b->gatewayMac;
            if (!echo && b->remote.count(peer) > 0) continue;  // only the gateway reaches it
            for (size_t p = 0; p < b->ports.size(); ++p) {
                if (!b->policy.portUp(p)) continue;
                if (echo) {
                    b->echo->probe(p, *b->gatewayMac, b->address->addr, peer);
                } else {
                    b->prober->probe(p, *b->mac, b->address->addr, peer);
                }
            }
        }
        decide(*b);
    }
}

void Daemon::decide(Bond& b) {
    auto now = Clock::now();
    for (const auto& peer : b.policy.peers()) {
        auto want = b.policy.pinFor(peer, now);
        auto it = b.pinned.find(peer);
        if (want && (it == b.pinned.end() || it->second != *want)) {
            b.pinned[peer] = *want;
            b.pins->pin(peer, b.ports[*want]);
        } else if (!want && it != b.pinned.end()) {
            b.pinned.erase(it);
            b.pins->unpin(peer);
        }
    }
}

}  // namespace twinrail::planesteer
