// The evpn-mh attachment (the seed's 3.1.2): leaf k of plane 1 and leaf k of plane 2 serve
// the same NICs and form an EVPN multihoming pair. Derived from the plan, nothing stored:
//   * an AUX link between the two (port aux1, a /31 from 10.253.0.0/16), which carries
//     their l2vpn evpn BGP session and the VXLAN between them; the planes never meet on
//     it (no ipv4 unicast on that session);
//   * per host port an Ethernet segment: an 802.3ad bond of one member (hbond<N> over the
//     port), es-id N, and an es-sys-mac shared by the pair (the LACP system the host sees);
//   * per rail a bridge (br-rail<r>, the SVI: the rail gateway with the one gateway MAC on
//     both leaves) and a VXLAN device (vx-rail<r>, VNI 10000 + r, local = the AUX address);
//   * route targets set by hand, <plane-1 leaf's ASN>:<VNI> on both, since the pair's ASNs
//     differ and auto-derived targets would too.
// The bridge is VLAN-unaware: what FRR 8.4 supports and what the lab can build (these
// kernels have no vlan_filtering); see docs/evpn-mh.md.
#pragma once

#include <string>
#include <vector>

#include "twinrail/plan/plan.h"

namespace twinrail::plan {

struct EvpnSegment {
    std::string bond;  // hbond<N>: the ES interface FRR configures
    std::string port;  // its one member, the host port
    int esId = 0;
};

struct EvpnBridge {
    int rail = 0;
    std::string bridge;  // br-rail<r>
    std::string vxlan;   // vx-rail<r>
    uint32_t vni = 0;
    std::string gateway;  // a.b.c.d/len
    std::string routeTarget;
    std::vector<std::string> members;  // the bonds of this rail's host ports
};

struct EvpnMhLeaf {
    std::string peer;  // the other plane's leaf
    uint32_t peerAsn = 0;
    std::string auxPort = "aux1";
    std::string auxAddress;  // a.b.c.d/31
    std::string peerAuxAddress;
    std::string esSysMac;
    std::vector<EvpnSegment> segments;
    std::vector<EvpnBridge> bridges;
};

// The leaf's EVPN-MH side; throws std::invalid_argument for a spine, or a leaf without a
// pair in the other plane.
EvpnMhLeaf evpnMhLeaf(const Plan& plan, const Switch& leaf);

// zebra's ES lines (interface hbond<N> / evpn mh es-id / es-sys-mac).
std::string evpnZebraConfig(const EvpnMhLeaf& leaf);
// Lines inside `router bgp`: the AUX neighbor, and its address families.
std::string evpnBgpConfig(const Plan& plan, const EvpnMhLeaf& leaf);
// iproute2 commands that build the link layer on a Linux switch: the bonds (unless
// `bonds` is false: the lab stands a veth of the bond's name in for each), bridges, VXLAN
// devices, the AUX address and the SVIs. Run before FRR starts.
std::string evpnLinkCommands(const Plan& plan, const EvpnMhLeaf& leaf, bool bonds);

}  // namespace twinrail::plan
