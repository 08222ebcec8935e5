// Which hosts an EVPN-multihomed leaf routes: exactly those attached to it. One pure
// function per host address, from what the kernel holds and what FRR knows.
//
//   * Learned here: a kernel neighbor on the SVI that the kernel resolved itself (no
//     protocol). Routed as Local (and probed, so zebra sees it active and advertises it
//     to the peer), unless FRR says it is on an Ethernet segment that is down here: a
//     STALE entry outlives its ES port, and is no proof of attachment.
//   * Learned by the ES peer: FRR has it local on a segment that is local and oper-up
//     here, active on this leaf or on the peer (peerActive). The kernel holds nothing
//     for it (zebra's sync install is refused on a stock kernel), so hostrouted installs
//     a static neighbor itself (ownNeighbor) and routes it as EsPeer.
//     Its liveness: FRR's peerActive on every read, else its answers to this leaf's own
//     probes (a host whose port to the peer failed answers here); when both stop for a
//     holdtime it is withdrawn, as a local host is.
//   * On a segment that is down here: not routed (the /32 leaves this plane), but
//     detoured to the ES peer over the AUX link (detour), which still reaches it.
//   * Behind a remote VTEP: FRR type "remote", or a kernel entry that zebra installed
//     from a type-2 route (extern_learn). Never routed: that host is reached over VXLAN,
//     through another leaf.
//   * FRR not read yet (start-up): what the kernel holds decides, and a static neighbor
//     hostrouted installed before a restart stays, so a restart withdraws nothing.
#pragma once

#include <set>
#include <string>

#include "evpn_view.h"
#include "host_policy.h"

namespace twinrail::hostrouted {

struct KernelNeighborFacts {
    bool present = false;
    bool usable = false;            // classifyNeighbor accepted it
    bool ours = false;              // hostrouted's static entry (NDA_PROTOCOL = ours)
    bool installedByZebra = false;  // protocol zebra: FRR's partial sync, not a learn
    bool externLearned = false;     // NTF_EXT_LEARNED: a remote VTEP's host
};

struct EsDecision {
    bool route = false;
    Source source = Source::Local;
    bool ownNeighbor = false;  // hostrouted's static neighbor must be in the kernel
    // Not routed here, but still attached to the pair: its ES port is down on this leaf
    // only. Traffic that still arrives (through the rail subnet's route, until the plane
    // has moved it) is sent over the AUX link to the ES peer instead of dropped.
    bool detour = false;
    std::string why;
    bool operator==(const EsDecision&) const = default;
};

// view: nullptr until FRR has been read once. downPorts: ports the kernel has down
// (it tells an ES port's loss before FRR's next read does).
EsDecision decideAttachment(const IpAddr& ip, const KernelNeighborFacts& kernel,
                            const EvpnView* view, const std::set<std::string>& downPorts);

}  // namespace twinrail::hostrouted
