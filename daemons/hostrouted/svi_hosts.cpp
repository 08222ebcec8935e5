#include "svi_hosts.h"

namespace twinrail::hostrouted {

std::optional<SviBridge> sviBridgeOf(const netlink::LinkState& svi,
                                     const netlink::LinkState* lower) {
    if (svi.kind == "bridge") return SviBridge{svi.ifindex, 0};
    // SONiC's VlanX on `Bridge`. A vlan device with no VLAN id (a message without
    // IFLA_INFO_DATA) or on anything but a bridge has no FDB to place hosts with.
    if (svi.kind == "vlan" && svi.vlanId != 0 && lower != nullptr && lower->ifindex == svi.lower &&
        lower->kind == "bridge")
        return SviBridge{lower->ifindex, svi.vlanId};
    return std::nullopt;
}

bool sviSees(const SviBridge& sb, int bridge, uint16_t vlan) {
    return sb.bridge == bridge && (sb.vlan == 0 || sb.vlan == vlan);
}

bool BridgeFdb::update(const netlink::FdbEntry& entry, bool removed) {
    if (!entry.isHostEntry()) return false;
    auto key = std::make_tuple(entry.master, entry.mac, entry.vlan);
    auto it = entries_.find(key);
    if (removed) {
        // Only the entry's own port removes it: a late delete of a moved MAC must not.
        if (it != entries_.end() && it->second.port == entry.ifindex) entries_.erase(it);
        return false;
    }
    if (it == entries_.end()) {
        entries_.emplace(key, Entry{entry.ifindex, true});
        return true;
    }
    it->second.seen = true;
    if (it->second.port == entry.ifindex) return false;
    it->second.port = entry.ifindex;
    return true;
}

std::optional<int> BridgeFdb::portOf(const SviBridge& sb, const MacAddr& mac) const {
    if (sb.vlan != 0) {
        auto it = entries_.find({sb.bridge, mac, sb.vlan});
        if (it == entries_.end()) return std::nullopt;
        return it->second.port;
    }
    // A VLAN-unaware bridge's entries carry no VLAN (0); take the first of this MAC's.
    auto it = entries_.lower_bound({sb.bridge, mac, 0});
    if (it == entries_.end() || std::get<0>(it->first) != sb.bridge ||
        std::get<1>(it->first) != mac)
        return std::nullopt;
    return it->second.port;
}

void BridgeFdb::beginSnapshot() {
    for (auto& [key, e] : entries_) e.seen = false;
}

void BridgeFdb::endSnapshot() {
    std::erase_if(entries_, [](const auto& kv) { return !kv.second.seen; });
}

void SviNeighbors::remember(const netlink::NeighborEntry& neigh) {
    forget(neigh.ip, 0);
    byIp_[neigh.ip] = neigh;
    if (neigh.mac) byMac_[{neigh.ifindex, *neigh.mac}].insert(neigh.ip);
}

void SviNeighbors::forget(const IpAddr& ip, int svi) {
    auto it = byIp_.find(ip);
    if (it == byIp_.end() || (svi != 0 && it->second.ifindex != svi)) return;
    if (it->second.mac) {
        auto m = byMac_.find({it->second.ifindex, *it->second.mac});
        if (m != byMac_.end()) {
            m->second.erase(ip);
            if (m->second.empty()) byMac_.erase(m);
        }
    }
    byIp_.erase(it);
}

std::vector<netlink::NeighborEntry> SviNeighbors::withMac(int svi, const MacAddr& mac) const {
    std::vector<netlink::NeighborEntry> out;
    auto m = byMac_.find({svi, mac});
    if (m == byMac_.end()) return out;
    for (const auto& ip : m->second) out.push_back(byIp_.at(ip));
    return out;
}

std::vector<netlink::NeighborEntry> SviNeighbors::on(int svi) const {
    std::vector<netlink::NeighborEntry> out;
    for (const auto& [ip, n] : byIp_)
        if (n.ifindex == svi) out.push_back(n);
    return out;
}

void SviNeighbors::clear() {
    byIp_.clear();
    byMac_.clear();
}

std::string_view sviVerdictName(SviVerdict v) {
    switch (v) {
        case SviVerdict::Behind:
            return "behind";
        case SviVerdict::Keep:
            return "kept";
        case SviVerdict::MemberDown:
            return "member-down";
        case SviVerdict::WrongPort:
            return "bound-elsewhere";
        case SviVerdict::Unresolved:
            return "unresolved";
    }
    return "unknown";
}

SviPlacement placeOnSvi(const SviLookup& in) {
    if (in.fdbPort) {
        if (!in.fdbPortUp) return {SviVerdict::MemberDown, *in.fdbPort};
        // The binding names the member the plan cabled the host to; the same address
        // behind any other member is another server's claim (docs/trust.md).
        if (!in.boundPort.empty() && in.fdbPortName != in.boundPort)
            return {SviVerdict::WrongPort, *in.fdbPort};
        return {SviVerdict::Behind, *in.fdbPort};
    }
    // FDB entries age (300 s by default) while a quiet host's neighbor entry stays: a host
    // already routed keeps its place; the next frame it sends teaches the bridge again.
    if (in.heldBehind) return {SviVerdict::Keep, *in.heldBehind};
    return {SviVerdict::Unresolved, 0};
}

}  // namespace twinrail::hostrouted
