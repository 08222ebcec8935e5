// Sizing a dual-plane, rail-optimized 2-tier Clos: from a GPU count and a switch model to
// leaves, spines and links per leaf-spine pair. Pure arithmetic, no I/O.
//
// The rules are the seed's (section 4.1):
// - NIC port k of every NIC goes to plane k; rail n (GPU/NIC n of a server) to the rail-n leaf.
// - A leaf gives downlinks:uplinks in the oversubscription ratio (1:1: half its ports each).
// - A small fabric puts several rails on one leaf; a large one repeats one leaf per rail in
//   groups of as many servers as a leaf has downlinks.
// - Spines are filled: the fewest spines per plane whose ports hold every leaf's uplinks, with
//   the same number of links from each leaf to each spine.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "twinrail/plan/roce.h"

namespace twinrail::plan {

struct SwitchModel {
    std::string name;
    int ports = 0;               // physical ports
    int portSpeedGbps = 0;       // speed of one physical port
    std::vector<int> breakouts;  // ways a port can be split, 1 included (800G: 1,2,4,8)
    bool operator==(const SwitchModel&) const = default;
};

// The catalog: CX864E-N (64x800G) and CX732Q-N (32x400G).
const std::vector<SwitchModel>& switchCatalog();
std::optional<SwitchModel> findModel(const std::string& name);

// How a NIC's ports attach to its leaves (one leaf per plane, no link between them):
//   Bond    the seed's 3.1.1: the NIC bonds its ports (one MAC, one IP, balance-xor
//           layer3+4) and sends every ARP on both; each leaf proxies ARP and turns the
//           host into a /32 in its plane; the host runs no routing protocol.
//   Routed  the NIC's ports are separate routed links; the host learns both planes'
//           routes over receive-only BGP and routes over both (was --host-bgp).
//   EvpnMh  the seed's 3.1.2: the two leaves share an Ethernet segment over EVPN.
enum class Attach { Bond, Routed, EvpnMh };
const char* attachName(Attach a);  // "bond", "routed", "evpn-mh"
std::optional<Attach> parseAttach(const std::string& name);

struct Request {
    int gpus = 0;
    int gpusPerServer = 8;  // = rails
    int nicSpeedGbps = 400;
    int nicPorts = 2;  // ports per NIC, spread over the planes
    int planes = 2;
    SwitchModel leafModel;
    SwitchModel spineModel;
    int oversubscription = 1;  // leaf downlink:uplink capacity = N:1
    int uplinkSpeedGbps = 0;   // 0: the NIC speed if a port breaks out to it, else the port speed
    int spinesPerPlane = 0;    // 0: the fewest that hold the leaves
    Attach attach = Attach::Bond;
    // The MAC of every rail gateway (every host port of every leaf, both planes) in the
    // modes where a host sees its two leaves as one gateway (bond, evpn-mh).
    std::string gatewayMac = "00:00:5e:00:01:01";
    // Leaf uplink load balancing: Ecmp (BGP multipath, pathqd's weights when it runs) or
    // Static, the seed's static smart routing: traffic entering a downlink leaves through
    // the uplink the plan pins it to (SwitchPort::pinnedUplink), falling back to multipath.
    // The others are ECMP routes with adaptive forwarding on every switch's fabric ports,
    // configured in SONiC's Local ARS tables (libs/ars, arsd): Ars, flowlet ARS on local
    // port quality; ArsGlobal, the same with the path beyond each next hop counted
    // (GLOBAL_ARS); Spray, per-packet random (SWITCH_HASH|GLOBAL ecmp_hash_algorithm RANDOM).
    enum class Lb { Ecmp, Static, Ars, ArsGlobal, Spray } lb = Lb::Ecmp;
    // RoCEv2 QoS, one set for NICs, switches and NCCL (roce.h).
    RoceQos roce;
    bool hostBgp() const { return attach == Attach::Routed; }
    bool operator==(const Request&) const = default;
};

struct Sizing {
    int planes = 0;
    int servers = 0;
    int rails = 0;
    int nicPortSpeedGbps = 0;
    int nicPortsPerPlane = 0;  // ports of one NIC in one plane (1 with 2 ports, 2 planes)
    int uplinkSpeedGbps = 0;
    int leafDownBreakout = 1;  // a downlink port carries this many NIC ports
    int leafUpBreakout = 1;
    int spineBreakout = 1;
    int leafDownPhysical = 0;  // physical ports of a leaf used for servers
    int leafUpPhysical = 0;
    int leafDownlinks = 0;  // NIC ports a leaf can take
    int leafUplinks = 0;
    int spineRadix = 0;          // spine ports at uplink speed
    int serversPerLeafRail = 0;  // servers whose rail-n NIC fits one leaf
    int railsPerLeaf = 1;        // >1 in small fabrics
    int groups = 1;              // >1 in large fabrics: one leaf per rail per group
    int serversPerGroup = 0;
    int leavesPerPlane = 0;
    int spinesPerPlane = 0;     // 0 when a plane is a single leaf
    int linksPerLeafSpine = 0;  // at uplink speed
    int spinePortsUsed = 0;     // per spine
    int maxGpusTwoTier = 0;     // largest GPU count this model holds in 2 tiers
    int leavesTotal() const;
    int spinesTotal() const;
    bool operator==(const Sizing&) const = default;
};

struct SizingError {
    std::string message;
};

// Fills the defaults (models, uplink speed) and checks every input; errors name the input.
std::variant<Request, SizingError> normalize(Request request);
std::variant<Sizing, SizingError> size(const Request& normalizedRequest);

}  // namespace twinrail::plan
