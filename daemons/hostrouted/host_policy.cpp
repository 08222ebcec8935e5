#include "host_policy.h"

#include <linux/neighbour.h>

namespace twinrail::hostrouted {

std::string_view sourceName(Source s) {
    return s == Source::EsPeer ? "es-peer" : "local";
}

std::string_view reasonName(Reason r) {
    switch (r) {
        case Reason::Accepted:
            return "accepted";
        case Reason::Deleted:
            return "deleted";
        case Reason::NotManaged:
            return "interface not managed";
        case Reason::LinkDown:
            return "link down";
        case Reason::FamilyDisabled:
            return "address family disabled";
        case Reason::NotUnicast:
            return "not a unicast host address";
        case Reason::LinkLocal:
            return "link-local address";
        case Reason::OwnAddress:
            return "the switch's own address";
        case Reason::OutsideSubnets:
            return "outside the port's subnets";
        case Reason::NoArp:
            return "NOARP entry";
        case Reason::RemoteVtep:
            return "behind a remote VTEP (extern_learn)";
        case Reason::NotResolved:
            return "not resolved";
        case Reason::NoLinkAddress:
            return "no usable link-layer address";
    }
    return "unknown";
}

namespace {
Verdict reject(Reason r) {
    return Verdict{false, Source::Local, r};
}
}  // namespace

Verdict classifyNeighbor(const netlink::NeighborEntry& neigh, bool deleted,
                         const InterfaceView& port, const std::set<IpAddr>& ownAddresses,
                         const PolicyOptions& options) {
    if (deleted) return reject(Reason::Deleted);
    if (!port.managed) return reject(Reason::NotManaged);
    if (!port.operUp) return reject(Reason::LinkDown);
    const IpAddr& ip = neigh.ip;
    if ((ip.isV4() && !options.ipv4) || (ip.isV6() && !options.ipv6))
        return reject(Reason::FamilyDisabled);
    if (ip.isUnspecified() || ip.isLoopback() || ip.isMulticast() || ip.isLimitedBroadcast())
        return reject(Reason::NotUnicast);
    if (ip.isLinkLocal()) return reject(Reason::LinkLocal);
    if (ownAddresses.count(ip) > 0) return reject(Reason::OwnAddress);
    bool inSubnet = false;
    for (const auto& subnet : port.subnets) {
        if (subnet.isBroadcastOf(ip)) return reject(Reason::NotUnicast);
        if (subnet.contains(ip)) inSubnet = true;
    }
    if (!inSubnet) return reject(Reason::OutsideSubnets);

    const uint16_t state = neigh.state;
    if ((state & (NUD_INCOMPLETE | NUD_FAILED)) != 0 || state == NUD_NONE)
        return reject(Reason::NotResolved);
    // An extern_learn entry is zebra's install of a type-2 route from another VTEP: the
    // host sits behind that VTEP, reached over VXLAN, not on this leaf's ports. (EVPN-MH
    // peer sync never shows up this way on a stock kernel; es_attachment.h reads it
    // from FRR.)
    if (neigh.isExtLearned()) return reject(Reason::RemoteVtep);
    if ((state & NUD_NOARP) != 0) {
        return reject(Reason::NoArp);
    } else if ((state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT)) == 0) {
        return reject(Reason::NotResolved);
    }
    if (!neigh.mac || isZeroMac(*neigh.mac) || isBroadcastOrMulticastMac(*neigh.mac))
        return reject(Reason::NoLinkAddress);
    return Verdict{true, Source::Local, Reason::Accepted};
}

}  // namespace twinrail::hostrouted
