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
            in.fdbPortUp = it->second.link.operUp && it->second.link.master == sb->bridge &&
                           memberInVlan(*in.fdbPort, sb->vlan);
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

bool Daemon::memberInVlan(int port, uint16_t vlan) const {
    if (vlan == 0) return true;  // a VLAN-unaware bridge: any
    auto it = portVlans_.find(port);
    return it == portVlans_.end() || it->second.count(vlan) > 0;
}

// `bridge vlan del vid X dev EthernetN` while EthernetN stays in another VLAN (vlanmgrd
// sets nomaster only when none is left): the kernel flushes the member's VLAN-X entries,
// which alone looks like ageing (Keep). The port's new VLAN list says it at once: its hosts
// on VLAN X's SVI are withdrawn, and when it joins again, that SVI's waiting hosts are
// probed, as after a member comes back up.
void Daemon::onPortVlans(const netlink::PortVlans& pv) {
    if (evpn_) return;
    auto known = portVlans_.find(pv.ifindex);
    // No list and none before: a VLAN-unaware bridge; no list after one: no VLAN left.
    if (!pv.vlans && known == portVlans_.end()) return;
    const bool first = known == portVlans_.end();
    const std::set<uint16_t> before = first ? std::set<uint16_t>{} : known->second;
    const std::set<uint16_t> now = pv.vlans.value_or(std::set<uint16_t>{});
    portVlans_[pv.ifindex] = now;
    // In a snapshot the neighbors are placed again after this, by the new list.
    if (inSnapshot_ || (!first && before == now)) return;
    auto port = ports_.find(pv.ifindex);
    const std::string name = port != ports_.end() ? port->second.link.name : "?";
    for (const Port* svi : svisOver(pv.master, 0)) {
        const uint16_t vlan = sviBridge(*svi)->vlan;
        if (vlan == 0) continue;
        const bool in = now.count(vlan) > 0, was = first || before.count(vlan) > 0;
        if (was && !in) {
            log::info("member ", name, " left ", svi->link.name, "'s VLAN ", vlan,
                      ": withdrawing the hosts behind it there");
            registry_.capPortLeft(pv.ifindex, svi->link.ifindex, Clock::now());
        } else if (in && !was) {
            for (const auto& neigh : sviNeighbors_.on(svi->link.ifindex)) {
                const HostRecord* rec = registry_.find(neigh.ip);
                if (rec == nullptr || rec->ifindex != neigh.ifindex) probeNeighbor(neigh);
            }
        }
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
