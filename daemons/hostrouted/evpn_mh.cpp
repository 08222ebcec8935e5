// EVPN multihoming (evpn_mh.h): decisions per host address, and their writes.
#include "evpn_mh.h"

#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include <cstring>

#include "host_policy.h"
#include "twinrail/common/log.h"

namespace twinrail::hostrouted {
namespace {
constexpr uint8_t kZebraProtocol = RTPROT_ZEBRA;
}  // namespace

EvpnMh::EvpnMh(boost::asio::io_context& io, const Config& cfg, frr::Channel& frr,
               std::unique_ptr<netlink::PolicyWriter> writer, HostRegistry& registry,
               const Ports& ports, const std::set<IpAddr>& own, const BindingIndex& bindings,
               Hooks hooks)
    : cfg_(cfg),
      writer_(std::move(writer)),
      registry_(registry),
      ports_(ports),
      own_(own),
      bindings_(bindings),
      hooks_(std::move(hooks)),
      sync_(
          io, frr, cfg.evpnPollInterval, [this](const EvpnView& /*view*/) { onView(); },
          [this](const EvpnView& v) { confirmPeerActive(v); }) {
    if (!cfg_.evpnVty.empty()) frr.setZebraSocket(cfg_.evpnVty);
}

void EvpnMh::start(netlink::RouteProgrammer& routes) {
    if (!cfg_.evpnPeer.empty()) {
        startDetours(routes);
    }
    sync_.start();
}

void EvpnMh::stop() {
    sync_.stop();
}

void EvpnMh::startDetours(netlink::RouteProgrammer& routes) {
    const uint8_t proto = cfg_.routeProtocol;
    // AUX ingress never takes a detour (two leaves with the ES down would bounce it).
    netlink::PolicyRule fromPeer{AF_INET, cfg_.evpnDetourPriority, cfg_.evpnPeerInterface,
                                 RT_TABLE_MAIN, proto};
    netlink::PolicyRule detour{AF_INET, cfg_.evpnDetourPriority + 1, "", cfg_.evpnDetourTable,
                               proto};
    for (const auto& rule : {fromPeer, detour})
        writer_->submit(netlink::PolicyOp{netlink::PolicyOp::AddRule, {}, rule, {}});
    // Detours of a previous run are known again, so that the first decisions remove the
    // ones no longer wanted, and keep the others without a rewrite.
    for (const auto& r : routes.dump(AF_INET, cfg_.evpnDetourTable, proto)) detours_.insert(r.dst);
    flush();
    log::info("EVPN-MH: hosts whose ES port is down here are sent to ", cfg_.evpnPeer, " over ",
              cfg_.evpnPeerInterface, " (table ", cfg_.evpnDetourTable, ", ", detours_.size(),
              " in place)");
}

void EvpnMh::setDetour(const IpAddr& ip, bool wanted) {
    wanted = wanted && !cfg_.evpnPeer.empty() && ip.isV4();
    if (wanted == (detours_.count(ip) > 0)) return;
    netlink::KernelRoute r;
    r.dst = IpPrefix{ip, 32};
    r.table = cfg_.evpnDetourTable;
    r.protocol = cfg_.routeProtocol;
    if (!wanted) {
        writer_->submit(netlink::PolicyOp{netlink::PolicyOp::RemoveRoute, r, {}, {}});
        detours_.erase(ip);
        return;
    }
    int aux = 0;
    for (const auto& [idx, p] : ports_)
        if (p.link.name == cfg_.evpnPeerInterface) aux = idx;
    if (aux == 0) return;  // no AUX link (yet): tried again on the next decision
    r.nexthops.push_back(netlink::WeightedNexthop{aux, *IpAddr::parse(cfg_.evpnPeer), 1, false});
    writer_->submit(netlink::PolicyOp{netlink::PolicyOp::ReplaceRoute, r, {}, {}});
    detours_.insert(ip);
}

// The same detour for what the bridge carries (hosts of the rail talking to this one): its
// MAC goes to the bridge's VXLAN port, whose default entry sends it to the ES peer.
void EvpnMh::setFdbDetour(const MacAddr& mac, int bridge, bool wanted) {
    int vxlan = 0;
    for (const auto& [idx, p] : ports_)
        if (p.link.master == bridge && p.link.kind == "vxlan") vxlan = idx;
    auto it = fdbDetours_.find(mac);
    auto op = [this, &mac](netlink::PolicyOp::Kind kind, int ifindex) {
        writer_->submit(
            netlink::PolicyOp{kind, {}, {}, netlink::StaticNeighbor{ifindex, {}, mac, 0, true}});
    };
    if (wanted) {
        if (vxlan == 0 || (it != fdbDetours_.end() && it->second == vxlan)) return;
        op(netlink::PolicyOp::ReplaceNeighbor, vxlan);
        fdbDetours_[mac] = vxlan;
        return;
    }
    if (it != fdbDetours_.end()) {
        op(netlink::PolicyOp::RemoveNeighbor, it->second);
        fdbDetours_.erase(it);
    } else if (vxlan != 0 && fdbChecked_.insert(mac).second) {
        op(netlink::PolicyOp::RemoveNeighbor, vxlan);  // one a previous run may have left
    }
}

void EvpnMh::flush() {
    for (const auto& r : writer_->flush()) {
        if (r.error == 0 || (r.op.kind == netlink::PolicyOp::AddRule && r.error == EEXIST))
            continue;
        if (r.op.kind == netlink::PolicyOp::RemoveNeighbor && r.error == ENOENT) continue;
        const bool neighbor = r.op.kind == netlink::PolicyOp::ReplaceNeighbor ||
                              r.op.kind == netlink::PolicyOp::RemoveNeighbor;
        std::string what = !neighbor ? "EVPN-MH detour " + r.op.route.dst.addr.str()
                           : r.op.neighbor.fdb
                               ? "EVPN-MH detour of MAC " + formatMac(r.op.neighbor.mac)
                               : "static neighbor " + r.op.neighbor.ip.str();
        log::warning(what, ": ", std::strerror(r.error));
        // Tried again on the next decision.
        if (!neighbor && r.op.kind == netlink::PolicyOp::ReplaceRoute)
            detours_.erase(r.op.route.dst.addr);
        if (neighbor && r.op.neighbor.fdb && r.op.kind == netlink::PolicyOp::ReplaceNeighbor)
            fdbDetours_.erase(r.op.neighbor.mac);
    }
}

std::set<std::string> EvpnMh::downPortNames() const {
    std::set<std::string> down;
    for (const auto& [idx, p] : ports_)
        if (!p.link.operUp) down.insert(p.link.name);
    return down;
}

int EvpnMh::sviOfPort(const std::string& portName) const {
    for (const auto& [idx, p] : ports_) {
        if (p.link.name != portName || p.link.master == 0) continue;
        auto svi = ports_.find(p.link.master);
        return svi != ports_.end() && svi->second.managed ? p.link.master : 0;
    }
    return 0;
}

void EvpnMh::onNeighbor(const netlink::NeighborEntry& neigh, bool removed) {
    if (removed) {
        sviNeighbors_.erase(neigh.ip);
        // Ours removed by someone else: decideEsHost puts it back if still wanted.
        if (auto it = ownNeighbors_.find(neigh.ip); it != ownNeighbors_.end()) {
            if (neigh.protocol == cfg_.routeProtocol || neigh.protocol == 0)
                ownNeighbors_.erase(it);
        }
    } else {
        sviNeighbors_[neigh.ip] = neigh;
        if (neigh.protocol == cfg_.routeProtocol && neigh.mac) {
            // Ours, maybe from before a restart: remembered so it can be removed.
            ownNeighbors_[neigh.ip] =
                netlink::StaticNeighbor{neigh.ifindex, neigh.ip, *neigh.mac, neigh.protocol};
        }
    }
    decide(neigh.ip, downPortNames());
    flush();
}

void EvpnMh::onView() {
    portsChanged();
}

void EvpnMh::confirmPeerActive(const EvpnView& view) {
    const auto asOf = sync_.viewAsOf();
    registry_.peerViewRead(asOf);
    for (const auto& [ip, n] : view.neighbors) {
        if (!n.peerActive) continue;
        const HostRecord* rec = registry_.find(ip);
        if (rec != nullptr && rec->source == Source::EsPeer)
            registry_.hostSeen(rec->ifindex, ip, std::nullopt, asOf);
    }
    hooks_.afterWork();
}

void EvpnMh::portsChanged() {
    std::set<IpAddr> ips;
    for (const auto& [ip, n] : sviNeighbors_) ips.insert(ip);
    for (const auto& [ip, n] : ownNeighbors_) ips.insert(ip);
    ips.insert(detours_.begin(), detours_.end());
    registry_.forEach([&ips](const HostRecord& r) {
        if (r.source == Source::EsPeer) ips.insert(r.ip);
    });
    if (const auto& v = sync_.view())
        for (const auto& [ip, n] : v->neighbors) ips.insert(ip);
    auto down = downPortNames();
    for (const auto& ip : ips) decide(ip, down);
    flush();
    hooks_.afterWork();
}

void EvpnMh::decide(const IpAddr& ip, const std::set<std::string>& downPorts) {
    KernelNeighborFacts k;
    const netlink::NeighborEntry* kernel = nullptr;
    if (auto it = sviNeighbors_.find(ip); it != sviNeighbors_.end()) {
        kernel = &it->second;
        auto port = ports_.find(kernel->ifindex);
        if (port != ports_.end()) {
            InterfaceView view{port->second.managed, port->second.link.operUp,
                               port->second.addresses};
            k.usable =
                classifyNeighbor(*kernel, false, view, own_, PolicyOptions{cfg_.ipv4, cfg_.ipv6})
                    .accept;
        }
        k.present = true;
        k.ours = kernel->protocol == cfg_.routeProtocol;
        k.installedByZebra = kernel->protocol == kZebraProtocol;
        k.externLearned = kernel->isExtLearned();
    }
    const EvpnView* view = sync_.view() ? &*sync_.view() : nullptr;
    // The host's MAC and segment in FRR's view, once: the static neighbor and the FDB detour
    // both need them.
    const EvpnMac* mac = nullptr;
    const EvpnSegment* es = nullptr;
    if (view != nullptr) {
        auto fn = view->neighbors.find(ip);
        mac = fn == view->neighbors.end() ? nullptr : view->macOf(fn->second);
        es = mac != nullptr ? view->segmentOf(*mac) : nullptr;
    }
    const int bridge = es != nullptr ? sviOfPort(es->accessPort) : 0;
    EsDecision d = decideAttachment(ip, k, view, downPorts);
    if (d.route && d.source == Source::EsPeer && !cfg_.acceptEvpn) {
        d = EsDecision{false, Source::Local, false, false, "ES-peer hosts off (accept_evpn false)"};
    }
    if (d.route) {
        // An ES peer's host passes the policy the leaf's own hosts pass, and both pass the
        // plan's binding (the SVI, and the ES port behind it).
        const bool local = d.source == Source::Local && kernel != nullptr;
        int svi = local ? kernel->ifindex : bridge;
        if (svi == 0 && kernel != nullptr) svi = kernel->ifindex;
        std::optional<MacAddr> claimMac = kernel != nullptr ? kernel->mac : std::nullopt;
        if (!local && mac != nullptr) claimMac = mac->mac;
        if (auto why = hooks_.trustRefusal(ip, svi, claimMac, d.source,
                                           es != nullptr ? es->accessPort : std::string())) {
            d = EsDecision{false, Source::Local, false, false, *why};
        }
    }
    auto now = Clock::now();
    std::optional<netlink::StaticNeighbor> wanted;
    if (d.route && d.source == Source::Local && kernel != nullptr) {
        const bool fresh = registry_.find(ip) == nullptr;
        registry_.accept(*kernel, Source::Local, now, bindings_.find(ip) != nullptr);
        // zebra advertises a host to its ES peer only once the kernel holds it REACHABLE:
        // a new host learned STALE (from its ARP request) is confirmed by a probe at once.
        if (fresh && (kernel->state & NUD_REACHABLE) == 0) {
            if (const HostRecord* rec = registry_.find(ip)) hooks_.probe(*rec);
        }
    } else if (d.route && d.source == Source::EsPeer) {
        // Where the host is: the SVI of the ES port its MAC was learned on (FRR), or where
        // our entry from before a restart sits.
        netlink::StaticNeighbor n{0, ip, {}, cfg_.routeProtocol};
        if (kernel != nullptr && kernel->mac) n = {kernel->ifindex, ip, *kernel->mac, n.protocol};
        if (es != nullptr) {
            n.ifindex = bridge;
            n.mac = mac->mac;
        }
        if (n.ifindex == 0) {
            d = EsDecision{false, Source::Local, false, false,
                           "its ES port is in no managed bridge"};
        } else {
            wanted = n;
            registry_.acceptEsPeer(ip, n.ifindex, n.mac, now, bindings_.find(ip) != nullptr);
        }
    }
    if (!d.route) registry_.rejectAny(ip, now);
    noteEsPort(ip, d.route && es != nullptr ? es->accessPort : std::string());
    // A usable entry someone else owns (zebra's partial sync) is left alone: the kernel
    // forwards with it, and replacing it would only start a tug of war with zebra.
    const bool othersUsable = k.present && k.usable && !k.ours;
    setOwnNeighbor(ip, d.ownNeighbor && !othersUsable ? wanted : std::nullopt);
    setDetour(ip, d.detour);
    if (bridge != 0 && !cfg_.evpnPeer.empty()) setFdbDetour(mac->mac, bridge, d.detour);
    auto& why = why_[ip];
    if (why != d.why) {
        log::info("host ", ip.str(), ": ", d.route ? "routed, " : "not routed, ", d.why,
                  d.detour && !cfg_.evpnPeer.empty() ? "; detoured to the ES peer" : "");
        why = d.why;
    }
    if (!d.route && kernel == nullptr && ownNeighbors_.count(ip) == 0 && detours_.count(ip) == 0)
        why_.erase(ip);
}

void EvpnMh::noteEsPort(const IpAddr& ip, const std::string& port) {
    auto it = esPorts_.find(ip);
    const std::string before = it == esPorts_.end() ? "" : it->second;
    // FRR not read yet, or the MAC not in its view: keep what it said last for a host
    // still routed; forget it when the host is not.
    if (port.empty() && registry_.find(ip) != nullptr) return;
    if (port == before) return;
    if (port.empty()) {
        esPorts_.erase(it);
    } else {
        esPorts_[ip] = port;
    }
    if (hooks_.esPortChanged) hooks_.esPortChanged(ip);
}

std::string EvpnMh::esPortOf(const IpAddr& ip) const {
    auto it = esPorts_.find(ip);
    return it == esPorts_.end() ? "" : it->second;
}

void EvpnMh::setOwnNeighbor(const IpAddr& ip, std::optional<netlink::StaticNeighbor> wanted) {
    auto it = ownNeighbors_.find(ip);
    if (!wanted) {
        if (it == ownNeighbors_.end()) return;
        writer_->submit(netlink::PolicyOp{netlink::PolicyOp::RemoveNeighbor, {}, {}, it->second});
        ownNeighbors_.erase(it);
        return;
    }
    auto k = sviNeighbors_.find(ip);
    bool inKernel = k != sviNeighbors_.end() && k->second.protocol == cfg_.routeProtocol &&
                    k->second.ifindex == wanted->ifindex && k->second.mac == wanted->mac &&
                    (k->second.state & NUD_PERMANENT) != 0;
    if (it != ownNeighbors_.end() && it->second == *wanted && inKernel) return;
    if (it != ownNeighbors_.end() && it->second.ifindex != wanted->ifindex) {
        writer_->submit(netlink::PolicyOp{netlink::PolicyOp::RemoveNeighbor, {}, {}, it->second});
    }
    writer_->submit(netlink::PolicyOp{netlink::PolicyOp::ReplaceNeighbor, {}, {}, *wanted});
    ownNeighbors_[ip] = *wanted;
}

}  // namespace twinrail::hostrouted
