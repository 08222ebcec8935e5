// Which kernel neighbor becomes a host route: one pure function, no I/O. The rules
// follow SONiC's neighsyncd, plus what a routed host-facing port needs (subnet and
// own-address checks, the FRR unnumbered 169.254.0.1 entry, a remote VTEP's entries).
#pragma once

#include <set>
#include <span>
#include <string_view>
#include <vector>

#include "twinrail/common/ip.h"
#include "twinrail/netlink/types.h"

namespace twinrail::hostrouted {

// Local: the kernel learned it on this leaf. EsPeer: the EVPN-MH peer learned it on a
// shared, locally up Ethernet segment (es_attachment.h).
enum class Source { Local, EsPeer };
std::string_view sourceName(Source s);

enum class Reason {
    Accepted,
    Deleted,
    NotManaged,
    LinkDown,
    FamilyDisabled,
    NotUnicast,  // unspecified, loopback, multicast, broadcast
    LinkLocal,   // fe80::/10, 169.254.0.0/16 (FRR unnumbered peers)
    OwnAddress,
    OutsideSubnets,
    NoArp,        // NOARP without NTF_EXT_LEARNED: static/device entries
    RemoteVtep,   // NTF_EXT_LEARNED: zebra installed it from a remote VTEP's route
    NotResolved,  // INCOMPLETE, FAILED, NONE
    NoLinkAddress,
};
std::string_view reasonName(Reason r);

struct InterfaceView {
    bool managed = false;
    bool operUp = false;
    std::span<const IpPrefix> subnets;  // the port's own addresses with their lengths
};

struct PolicyOptions {
    bool ipv4 = true;
    bool ipv6 = true;
};

struct Verdict {
    bool accept = false;
    Source source = Source::Local;
    Reason reason = Reason::Accepted;
};

Verdict classifyNeighbor(const netlink::NeighborEntry& neigh, bool deleted,
                         const InterfaceView& port, const std::set<IpAddr>& ownAddresses,
                         const PolicyOptions& options);

}  // namespace twinrail::hostrouted
