#include "daemon.h"

#include <linux/neighbour.h>

#include <stdexcept>

#include "twinrail/common/log.h"
#include "twinrail/common/notify.h"

namespace twinrail::planesteer {
namespace {

bool liveNeighbor(const netlink::NeighborEntry& n) {
    return (n.state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT)) != 0;
}

constexpr auto kCountersEvery = std::chrono::seconds(60);

// A reply may come up to `misses` intervals late and still count: a busy host reads its
// sockets late, and the policy gives a plane that long anyway.
std::chrono::milliseconds answerWindow(const SteerParams& s) {
    return s.interval * s.misses;
}

// Runs `f` from a callback of the loop: what it throws is logged, never propagated.
template <class F>
void guarded(const char* what, F&& f) {
    try {
        std::forward<F>(f)();
    } catch (const std::exception& e) {
        log::error(what, ": ", e.what());
    } catch (...) {
        log::error(what, ": unknown exception");
    }
}

}  // namespace

Daemon::Daemon(boost::asio::io_context& io, Config config, Edges edges)
    : cfg_(std::move(config)), edges_(std::move(edges)), probeTimer_(io) {
    if (!edges_.kernel || !edges_.packetPort || !edges_.tc || !edges_.tcShow)
        throw std::invalid_argument("planesteer: an edge is missing (kernel, ports or tc)");
    if (!edges_.now) edges_.now = [] { return Clock::now(); };
    for (const auto& [name, bond] : cfg_.bonds)
        bonds_.push_back(std::make_unique<Bond>(name, bond, cfg_));
    kernel_ = edges_.kernel(*this);
}

void Daemon::start() {
    NonceKey key = randomNonceKey();
    for (auto& b : bonds_) {
        b->pins = std::make_unique<TcPins>(*edges_.tc, edges_.tcShow, b->name, b->ports);
        b->pins->start();
        Bond* bond = b.get();
        b->prober = std::make_unique<ArpProber>(
            edges_.packetPort, b->ports, edges_.now,
            [this, bond](size_t port, const IpAddr& peer, const MacAddr& mac) {
                guarded("ARP answer", [&] {
                    if (peer == bond->cfg.gateway) bond->gatewayMac = mac;
                    bond->policy.answered(peer, port, edges_.now());
                });
            });
        b->prober->start();
        if (b->cfg.gateway) {
            b->echo = std::make_unique<EchoProber>(
                edges_.packetPort, b->ports, cfg_.sampleOneIn, key, edges_.now,
                [this, bond](size_t port, const IpAddr& peer) {
                    guarded("echo answer",
                            [&] { bond->policy.answered(peer, port, edges_.now()); });
                },
                [this, bond](const IpAddr& dst) {
                    guarded("sampled packet", [&] { sampled(*bond, dst); });
                });
            b->echo->start();
        }
        setLimits(*b);
    }
    lastCounters_ = edges_.now();
    startNotices();
    kernel_->start();
    armProbe();
    log::notice("steering ", bonds_.size(), " bond(s): a probe per peer and port every ",
                cfg_.steer.interval.count(), " ms, every ", cfg_.steer.activeInterval.count(),
                " ms for the ", cfg_.maxActivePeers,
                " peers sent to most recently, a port silent after ", cfg_.steer.misses);
    sdNotify("READY=1\nSTATUS=steering " + std::to_string(bonds_.size()) + " bonds");
}

void Daemon::startNotices() {
    if (cfg_.noticePort == 0) return;
    if (!edges_.notices || !edges_.wallNs)
        throw std::invalid_argument("planesteer: notice_port without a notice socket or clock");
    intake_ = std::make_unique<NoticeIntake>(cfg_);
    notices_ = edges_.notices(std::nullopt, cfg_.noticePort, [this](const fnn::Datagram& d) {
        guarded("fast notice", [&] { onNotice(d); });
    });
    log::notice("fast notices on UDP port ", cfg_.noticePort, " from ", cfg_.noticeSenders.size(),
                " plane(s)");
}

// An admitted loss: the bond's peers it names are silent on that plane from now on, until
// the plane answers again; the pins follow at once, not at the next probe round.
void Daemon::onNotice(const fnn::Datagram& d) {
    std::map<std::string, IpAddr> addresses;
    for (const auto& b : bonds_)
        if (b->address) addresses.emplace(b->name, b->address->addr);
    auto now = edges_.now();
    auto v = intake_->admit(d.bytes, d.source, d.destination, addresses, edges_.wallNs(), now);
    auto* n = std::get_if<NoticeForBond>(&v);
    if (n == nullptr) return;  // counted; logCounters reports refusals
    Bond* b = nullptr;
    for (auto& candidate : bonds_)
        if (candidate->name == n->bond) b = candidate.get();
    if (b == nullptr || !n->lost) return;
    size_t named = 0;
    for (const auto& subject : n->notice.subjects)
        named += b->policy.notified(subject, n->port, now);
    log::info(b->name, ": ", fnn::describe(n->notice), ": ", named, " peer(s) off ",
              b->ports[n->port]);
    if (named > 0 && b->pins) decide(*b);
}

fnn::GuardCounters Daemon::noticeCounters() const {
    return intake_ ? intake_->counters() : fnn::GuardCounters{};
}

void Daemon::stop() {
    // Pins stay: the plane that lost a peer is still without it. A restart finds them,
    // removes them, and decides again within a few probes.
    probeTimer_.cancel();
    for (auto& b : bonds_)
        if (b->pins) b->pins->stop();
}

void Daemon::applyConfig(const Config& next) {
    guarded("config", [&] { reconfigure(next); });
}

void Daemon::reconfigure(const Config& next) {
    if (next.bonds != cfg_.bonds || next.sampleOneIn != cfg_.sampleOneIn ||
        next.noticePort != cfg_.noticePort || next.noticeSenders != cfg_.noticeSenders) {
        log::error(
            "config rejected, keeping the running config: bonds (with their notice keys), "
            "sample_one_in and the fast notices' port and senders need a restart");
        return;
    }
    cfg_ = next;
    for (auto& b : bonds_) {
        b->policy.setParams(cfg_.steer);
        b->schedule.setParams(scheduleParams(cfg_));
        for (const auto& peer : b->onlink.setCapacity(cfg_.maxOnlinkPeers)) forget(*b, peer);
        for (const auto& peer : b->remote.setCapacity(cfg_.maxRemotePeers)) forget(*b, peer);
        setLimits(*b);
        if (b->pins) b->pins->poke();
    }
    log::notice("config applied");
}

// Outstanding requests: each peer, each port, each round of a window (and one more), and
// the active peers' rounds at their own interval.
void Daemon::setLimits(Bond& b) {
    auto window = answerWindow(cfg_.steer);
    size_t rounds = static_cast<size_t>(cfg_.steer.misses) + 1;
    size_t perRound = (cfg_.maxOnlinkPeers + cfg_.maxRemotePeers) * b.ports.size();
    size_t activeRounds = static_cast<size_t>(window / cfg_.steer.activeInterval) + 1;
    size_t active = cfg_.maxActivePeers * b.ports.size() * activeRounds;
    if (b.prober) b.prober->setLimits(window, (cfg_.maxOnlinkPeers + 1) * b.ports.size() + 1);
    if (b.echo) b.echo->setLimits(window, perRound * rounds + active);
}

const Bond* Daemon::bond(const std::string& name) const {
    for (const auto& b : bonds_)
        if (b->name == name) return b.get();
    return nullptr;
}

Bond* Daemon::bondOf(int ifindex) {
    for (auto& b : bonds_)
        if (b->ifindex == ifindex) return b.get();
    return nullptr;
}

void Daemon::onLink(const netlink::LinkState& link, bool removed) {
    guarded("link event", [&] { linkChanged(link, removed); });
}

void Daemon::linkChanged(const netlink::LinkState& link, bool removed) {
    for (auto& b : bonds_) {
        if (link.name == b->name) {
            b->ifindex = removed ? 0 : link.ifindex;
            b->mac = link.mac;
        }
        for (size_t p = 0; p < b->ports.size(); ++p) {
            if (link.name != b->ports[p]) continue;
            b->portIfindex[p] = removed ? 0 : link.ifindex;
            bool wasUp = b->policy.portUp(p);
            b->policy.setPortUp(p, !removed && link.operUp, edges_.now());
            if (!b->policy.portUp(p) && b->prober) b->prober->portDown(p);
            // Back up: pin everything to the other port now, before the bond uses it.
            if (!wasUp && b->policy.portUp(p) && b->pins) decide(*b);
        }
    }
}

void Daemon::onAddress(const netlink::AddressEntry& addr, bool removed) {
    guarded("address event", [&] { addressChanged(addr, removed); });
}

void Daemon::addressChanged(const netlink::AddressEntry& addr, bool removed) {
    Bond* b = bondOf(addr.ifindex);
    if (b == nullptr || !addr.prefix.addr.isV4()) return;
    if (removed && b->address && b->address->addr == addr.prefix.addr) b->address.reset();
    if (!removed) b->address = addr.prefix;
}

void Daemon::onNeighbor(const netlink::NeighborEntry& n, bool removed) {
    guarded("neighbor event", [&] { neighborChanged(n, removed); });
}

void Daemon::neighborChanged(const netlink::NeighborEntry& n, bool removed) {
    Bond* b = bondOf(n.ifindex);
    if (b == nullptr || !n.ip.isV4()) return;
    if (b->cfg.gateway == n.ip) {  // the way to the other rails, not a peer
        if (!removed && liveNeighbor(n) && n.mac) b->gatewayMac = n.mac;
        return;
    }
    if (b->remote.contains(n.ip)) return;  // one budget per peer: the remote one has it
    if (removed || !liveNeighbor(n)) {
        forget(*b, n.ip);
        return;
    }
    if (inSnapshot_) b->seenInSnapshot.insert(n.ip);
    auto now = edges_.now();
    auto t = b->onlink.touch(n.ip, now);
    if (t.evicted) forget(*b, *t.evicted);
    if (t.added) b->policy.addPeer(n.ip, now);
}

void Daemon::onSnapshotBegin() {
    inSnapshot_ = true;
    for (auto& b : bonds_) b->seenInSnapshot.clear();
}

void Daemon::onSnapshotEnd() {
    inSnapshot_ = false;
    guarded("snapshot", [&] {
        for (auto& b : bonds_) {
            for (const auto& peer : b->policy.peers()) {
                if (b->seenInSnapshot.count(peer) == 0 && !b->remote.contains(peer))
                    forget(*b, peer);
            }
        }
    });
}

// Nothing is known to be gone: no peer is forgotten on partial data.
void Daemon::onSnapshotAborted() {
    inSnapshot_ = false;
}

void Daemon::armProbe() {
    auto tick = cfg_.steer.interval;
    for (const auto& b : bonds_) tick = std::min(tick, b->schedule.tick());
    probeTimer_.expires_after(tick);
    probeTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        ++rounds_;
        probeAll();
        armProbe();
    });
}

void Daemon::forget(Bond& b, const IpAddr& peer) {
    b.policy.removePeer(peer);
    b.schedule.remove(peer);
    b.onlink.remove(peer);
    b.remote.remove(peer);
    if (b.pins) b.pins->want(peer, std::nullopt);  // applied at the next poke
}

// A sampled outgoing packet: traffic to a known peer makes it active (probe_schedule.h);
// a new peer on another rail when it is in the fabric but not in the bond's own subnet
// (on-link peers are the neighbor table's).
void Daemon::sampled(Bond& b, const IpAddr& dst) {
    auto now = edges_.now();
    if (b.onlink.contains(dst)) {  // one budget per peer: the on-link one has it
        b.schedule.traffic(dst, now);
        return;
    }
    if (!b.address || !b.cfg.fabric || !remotePeer(dst, *b.address, *b.cfg.fabric, *b.cfg.gateway))
        return;
    auto t = b.remote.touch(dst, now);
    if (t.evicted) forget(b, *t.evicted);
    if (t.added) b.policy.addPeer(dst, now);
    b.schedule.traffic(dst, now);
}

// The gateway answers ARP for itself on both planes' leaves with the one gateway MAC.
void Daemon::askGateway(Bond& b) {
    for (size_t p = 0; p < b.ports.size(); ++p)
        if (b.policy.portUp(p)) b.prober->probe(p, *b.mac, b.address->addr, *b.cfg.gateway);
}

void Daemon::probeAll() {
    auto now = edges_.now();
    if (now - lastCounters_ >= kCountersEvery) guarded("counters", [this] { logCounters(); });
    for (auto& b : bonds_) guarded("probe round", [&] { probe(*b, now); });
}

void Daemon::probe(Bond& b, Clock::time_point now) {
    if (!b.mac || !b.address) return;  // the bond is not up yet
    for (const auto& peer : b.remote.seenBefore(now - cfg_.remoteIdle)) forget(b, peer);
    b.prober->expire();
    if (b.echo) b.echo->expire();
    if (b.echo && !b.gatewayMac) askGateway(b);
    // Echo through the gateway when there is one: the probe takes the traffic's own
    // path, forwarded by the leaf's hardware, not its CPU (ARP is trapped to the CPU,
    // and control-plane policing drops ARP floods). ARP otherwise: a fabric of one
    // subnet, or before anything resolved the gateway; never at the active rate.
    bool echo = b.echo && b.gatewayMac;
    auto round = b.schedule.round(b.policy.peers(), now, echo);
    for (const auto& peer : round.nowActive) b.policy.setActive(peer, true, now);
    for (const auto& peer : round.nowIdle) b.policy.setActive(peer, false, now);
    for (const auto& peer : round.probe) {
        if (peer == b.address->addr) continue;
        if (!echo && b.remote.contains(peer)) continue;  // only the gateway reaches it
        for (size_t p = 0; p < b.ports.size(); ++p) {
            if (!b.policy.portUp(p)) continue;
            if (echo) {
                b.echo->probe(p, *b.gatewayMac, b.address->addr, peer);
            } else {
                b.prober->probe(p, *b.mac, b.address->addr, peer);
            }
        }
    }
    decide(b);
}

void Daemon::decide(Bond& b) {
    auto now = edges_.now();
    // Every round states every peer's wish; TcPins keeps only what differs from what tc
    // already has, one entry per peer however often a wish changes.
    for (const auto& peer : b.policy.peers()) b.pins->want(peer, b.policy.pinFor(peer, now));
    b.pins->poke();
}

void Daemon::logCounters() {
    lastCounters_ = edges_.now();
    uint64_t refused = 0;
    for (const auto& b : bonds_) {
        b->pins->verify();
        MatchCounters arp = b->prober ? b->prober->matchCounters() : MatchCounters{};
        MatchCounters echo = b->echo ? b->echo->matchCounters() : MatchCounters{};
        ProberCounters arpSent = b->prober ? b->prober->counters() : ProberCounters{};
        ProberCounters echoSent = b->echo ? b->echo->counters() : ProberCounters{};
        const PinCounters& pins = b->pins->counters();
        refused += echo.unmatched + echo.mismatched + arp.unmatched + arp.macChanged;
        log::info(
            b->name, ": peers onlink=", b->onlink.size(), " remote=", b->remote.size(),
            " evicted_onlink=", b->onlink.evictions(), " evicted_remote=", b->remote.evictions(),
            " echo_sent=", echoSent.sent, " echo_answers=", echoSent.answers,
            " echo_unmatched=", echo.unmatched, " echo_mismatched=", echo.mismatched,
            " echo_late=", echo.late, " echo_overflow=", echo.overflow, " arp_sent=", arpSent.sent,
            " arp_answers=", arpSent.answers, " arp_unmatched=", arp.unmatched,
            " arp_late=", arp.late, " arp_mac_changed=", arp.macChanged, " pins=", b->pins->size(),
            " pins_queued=", b->pins->queued(), " pins_coalesced=", pins.coalesced,
            " pins_refused=", pins.refused, " tc_errors=", b->pins->errors());
    }
    if (intake_) {
        auto c = intake_->counters();
        uint64_t noticesRefused = 0;
        std::string byReason;
        for (size_t i = 0; i < fnn::kRefusals; ++i) {
            noticesRefused += c.refused[i];
            byReason += std::string(" ") + fnn::refusalName(static_cast<fnn::Refusal>(i)) + "=" +
                        std::to_string(c.refused[i]);
        }
        log::info("fast notices: accepted=", c.accepted, byReason);
        if (noticesRefused > noticesRefusedAtLastLog_) {
            log::warning(noticesRefused - noticesRefusedAtLastLog_,
                         " fast notices refused in the last minute (by reason above)");
        }
        noticesRefusedAtLastLog_ = noticesRefused;
    }
    if (refused > refusedAtLastLog_) {
        log::warning(refused - refusedAtLastLog_,
                     " probe answers refused in the last minute: not answers to our requests "
                     "(forged, replayed, or to someone else's)");
    }
    refusedAtLastLog_ = refused;
}

}  // namespace twinrail::planesteer
