// Hosts on SVIs, the daemon's side (svi_hosts.h has the rules and the two kernel shapes:
// a VLAN-unaware bridge that is the SVI, or SONiC's vlan device on a VLAN-aware `Bridge`,
// told apart by the link kind the kernel reports). A host heard on an SVI is
// routed through the SVI and counted, bound and withdrawn by the member port the bridge
// FDB puts it behind. A member port going down withdraws its hosts at once; when it comes
// back, the SVI's waiting neighbors are probed, and their answers teach the bridge again.
// Not with EVPN-MH, which places its SVI hosts from FRR's view (evpn_mh.h).
#include "daemon.h"
#include "twinrail/common/log.h"

namespace twinrail::hostrouted {

bool Daemon::isSvi(const Port& port) const {
    return sviBridge(port).has_value();
}

std::optional<SviBridge> Daemon::sviBridge(const Port& port) const {
    if (evpn_ || !port.managed) return std::nullopt;
    auto lower = port.link.lower != 0 ? ports_.find(port.link.lower) : ports_.end();
    return sviBridgeOf(port.link, lower == ports_.end() ? nullptr : &lower->second.link);
}

std::vector<const Port*> Daemon::svisOver(int bridge, uint16_t vlan) const {
    std::vector<const Port*> out;
    for (const auto& [ifindex, port] : ports_) {
        auto sb = sviBridge(port);
        if (sb && sb->bridge == bridge && (vlan == 0 || sviSees(*sb, bridge, vlan)))
            out.push_back(&port);
    }
    return out;
}

std::optional<int> Daemon::placeSviHost(const netlink::NeighborEntry& neigh, const Port& svi) {
    sviNeighbors_.remember(neigh);
    SviLookup in;
    auto sb = sviBridge(svi);
    if (neigh.mac && sb) in.fdbPort = fdb_.portOf(*sb, *neigh.mac);
    if (in.fdbPort) {
        if (auto it = ports_.find(*in.fdbPort); it != ports_.end()) {
            in.fdbPortName = it->second.link.name;
            in.fdbPortUp = it->second.link.operUp && it->second.link.master == sb->bridge;
        }
    }
    if (const HostRecord* rec = registry_.find(neigh.ip); rec && rec->ifindex == neigh.ifindex)
        in.heldBehind = rec->capPort;
    if (const HostBinding* hb = bindings_.find(neigh.ip); hb && hb->ifname == svi.link.name)
        in.boundPort = hb->port;
    SviPlacement place = placeOnSvi(in);
    switch (place.verdict) {
        case SviVerdict::Behind:
        case SviVerdict::Keep:
            return place.port;
        case SviVerdict::MemberDown:
            registry_.reject(neigh.ip, neigh.ifindex, Clock::now());
            return std::nullopt;
        case SviVerdict::WrongPort:
            registry_.reject(neigh.ip, neigh.ifindex, Clock::now());
            refuseClaim(neigh, svi.link.name, "bound-elsewhere");
            return std::nullopt;
        case SviVerdict::Unresolved:
            // The bridge forgot the MAC (or never knew it): a unicast probe is flooded to
            // every member, and the host's answer puts it back in the FDB.
            if (!inSnapshot_) probeNeighbor(neigh);
            return std::nullopt;
    }
    return std::nullopt;
}

void Daemon::onFdb(const netlink::FdbEntry& fdb, bool removed) {
    // Learned, or moved to another member: the hosts of that MAC are placed again, on the
    // SVIs that see the entry's VLAN only (a VLAN-aware bridge serves many SVIs). A deletion
    // (ageing, or the member's flush on link down) changes nothing by itself.
    if (!fdb_.update(fdb, removed) || inSnapshot_) return;
    for (const Port* svi : svisOver(fdb.master, fdb.vlan)) {
        if (fdb.vlan == 0 && svi->link.kind != "bridge") continue;  // untagged: no VLAN's SVI
        for (const auto& neigh : sviNeighbors_.withMac(svi->link.ifindex, fdb.mac))
            onNeighbor(neigh, false);
    }
}

void Daemon::sviMemberChanged(const netlink::LinkState& link, int masterBefore, bool upBefore,
                              bool removed) {
    if (evpn_) return;
    // A member's bridge is the SVI itself (VLAN-unaware) or the bridge under the SVIs'
    // vlan devices (VLAN-aware): either way, the SVIs over it are concerned.
    auto svisOf = [this](int master) {
        return master != 0 ? svisOver(master, 0) : std::vector<const Port*>{};
    };
    const bool upNow = !removed && link.operUp;
    const bool stays = upNow && link.master == masterBefore;
    if (auto svis = svisOf(masterBefore); !svis.empty() && upBefore && !stays) {
        log::info("member ", link.name, " of ", svis.front()->link.name,
                  svis.size() > 1 ? " (and other SVIs)" : "",
                  removed ? " removed" : (upNow ? " left the bridge" : " down"),
                  ": withdrawing the hosts behind it");
        registry_.capPortDown(link.ifindex, Clock::now());
    }
    if (!upNow || (stays && upBefore)) return;
    for (const Port* svi : svisOf(link.master)) {
        for (const auto& neigh : sviNeighbors_.on(svi->link.ifindex)) {
            const HostRecord* rec = registry_.find(neigh.ip);
            if (rec == nullptr || rec->ifindex != neigh.ifindex) probeNeighbor(neigh);
        }
    }
}

void Daemon::probeNeighbor(const netlink::NeighborEntry& neigh) {
    if (!neigh.mac) return;
    HostRecord target;
    target.ip = neigh.ip;
    target.ifindex = neigh.ifindex;
    target.mac = neigh.mac;
    sendProbe(target);
}

bool Daemon::insideManagedSubnet(const IpAddr& ip) const {
    if (own_.count(ip) != 0) return false;
    for (const auto& [ifindex, port] : ports_) {
        if (!port.managed) continue;
        for (const auto& a : port.addresses) {
            if (!a.addr.isLinkLocal() && a.length < a.addr.maxPrefixLen() && a.contains(ip))
                return true;
        }
    }
    return false;
}

bool Daemon::advertisedNow(const IpAddr& ip) const {
    const HostRecord* rec = registry_.find(ip);
    return rec != nullptr && rec->state == RouteState::Installed && rec->kernelIfindex != 0;
}

void Daemon::startNetworkTable() {
    NetworkTable::Sources sources{[this](const IpAddr& ip) { return advertisedNow(ip); },
                                  [this] {
                                      std::vector<IpAddr> live;
                                      registry_.forEach([&live, this](const HostRecord& r) {
                                          if (advertisedNow(r.ip)) live.push_back(r.ip);
                                      });
                                      return live;
                                  },
                                  [this](const IpAddr& ip) { return insideManagedSubnet(ip); }};
    networkTable_ = std::make_unique<NetworkTable>(io_, *stateDb_, options_.stateDbSeparator,
                                                   std::move(sources));
}

}  // namespace twinrail::hostrouted
