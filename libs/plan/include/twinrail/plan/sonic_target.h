// The planner's SONiC target (`twinrail-plan --nos sonic`): per switch an overlay for its
// own config_db.json (never PORT: SONiC owns it from the HWSKU), an frr.conf for
// docker_routing_config_mode split-unified, and optionally the same rows as an RFC 6902
// patch for `config apply-patch`. Pure; docs/planner.md ("The SONiC target") says why
// each row has the shape it has.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "twinrail/plan/evpn_mh.h"
#include "twinrail/plan/plan.h"
#include "twinrail/plan/sonic_sku.h"

namespace twinrail::plan {

// From this release on (FRR 10.0.1 and later), `redistribute table-direct` exists and
// host routes reach BGP without a copy in zebra's RIB (and so none over FPM).
inline constexpr int kSonicTableDirectRelease = 202411;
inline constexpr int kSonicDefaultRelease = 202505;
// Rail r of a leaf is VLAN kSonicVlanBase + r (rails are at most gpusPerServer, and one
// leaf holds one group, so the id is unique on the switch).
inline constexpr int kSonicVlanBase = 1000;
// EVPN-MH needs EVPN_ETHERNET_SEGMENT, whose YANG model (sonic-evpn.yang) is in SONiC's
// master from 2026-05-27: `config reload` aborts on a table without a model, so the first
// release branched after it.
inline constexpr int kSonicEvpnMhRelease = 202611;
// pathqd's quantisation when PATHQD|global sets no `levels` (quality.h QualityModel).
inline constexpr int kPathqdDefaultLevels = 32;

struct SonicOptions {
    int release = kSonicDefaultRelease;  // YYYYMM
};

// Why this plan cannot be expressed on SONiC, or nothing: routed NICs it cannot lay out,
// or EVPN-MH on a release before kSonicEvpnMhRelease.
std::optional<std::string> sonicRefusal(const Plan& plan, const SonicOptions& options = {});

// NOLINTNEXTLINE(bugprone-exception-escape): json's noexcept move checks an invariant
struct SonicSwitchConfig {
    nlohmann::json overlay;
    std::string frrConf;
};
// Errors name the switch and port (a port the HWSKU cannot give, a rail beyond the VLANs).
std::variant<SonicSwitchConfig, std::string> sonicSwitchConfig(const Plan& plan, const Switch& sw,
                                                               const Sku& sku,
                                                               const SonicOptions& options);

// The overlay as an RFC 6902 patch onto `base` (the switch's config_db.json, or
// sonicBaseConfigDb()): `add /TABLE/key` per row (a table `base` lacks is added empty
// first), and per field for rows `base` already has (DEVICE_METADATA|localhost keeps its
// hwsku, mac and platform). Keys are escaped as RFC 6901 says (~ as ~0, / as ~1).
nlohmann::json sonicPatch(const nlohmann::json& base, const nlohmann::json& overlay);
std::string jsonPointerToken(const std::string& key);

// orchagent's IntfsOrch::setIntf rule: no two router interfaces of one VRF may carry
// overlapping prefixes. Checks INTERFACE, VLAN_INTERFACE, LOOPBACK_INTERFACE,
// PORTCHANNEL_INTERFACE and VLAN_SUB_INTERFACE `name|prefix` keys; one line per clash
// ("VLAN_INTERFACE|Vlan1001|10.128.0.1/24 overlaps INTERFACE|Ethernet8|10.128.0.1/24"),
// and for a prefix that does not parse.
std::vector<std::string> overlappingRouterInterfaces(const nlohmann::json& configDb);

// Routed hosts on SONiC (sonic_routed.cpp). The rail VLAN's SVI of a plane-p leaf carries
// one address, the subnet's (broadcast - p): a NIC's BGP session over each port goes to
// its own address, and orchagent refuses a second prefix of the subnet on the same SVI
// (IntfsOrch::setIntf checks every router interface of the VRF, this one too). The
// subnet's gateway is not used: a routed NIC sends to its BGP next hops only.
std::string sonicRoutedPeer(const RailSubnet& subnet, int plane);
// Why routed hosts cannot be laid out this way on SONiC, or nothing: a NIC with two ports
// on one leaf (one SVI holds one MAC per neighbor), or a rail subnet without room for the
// per-plane addresses above its hosts. With `only`, the NICs cabled to that switch alone
// (what sonicSwitchConfig checks for each switch; the whole plan is sonicRefusal's).
std::optional<std::string> sonicRoutedRefusal(const Plan& plan, const Switch* only = nullptr);
// The NIC's frr.conf when its leaves run SONiC: a /32 to each port's peer address through
// that port, and a receive-only session from the NIC's own address to each.
std::string sonicHostFrrConfig(const Plan& plan, const Server& server, const Nic& nic);
// EVPN-MH leaves on SONiC (sonic_evpn.cpp). The AUX link of the pair takes the fastest
// front-panel port the plan leaves free (the first by index among equals; on the catalog
// models one of the two 10G SFP+ ports); nothing when the plan uses every cage.
std::optional<std::string> sonicAuxPort(const Sku& sku, const PortMap& ports);
// Why an EVPN-MH leaf has no AUX port on this SKU, or nothing (not EVPN-MH, a spine).
std::optional<std::string> sonicEvpnAuxRefusal(const Plan& plan, const Switch& sw, const Sku& sku,
                                               const PortMap& ports);
// The leaf's EVPN-MH objects (evpn_mh.h) under SONiC's names: an ES is PortChannel<es-id>
// over the SKU's EthernetN, a rail's bridge its VLAN (VlanN), its VXLAN device
// vtep-<VLAN id> (vxlanmgrd's <tunnel>-<VLAN id>), and `aux` the AUX port. `ports` null:
// the plan's ports already carry the SKU's names (the lab's plan).
EvpnMhLeaf sonicEvpnMhLeaf(const Plan& plan, const Switch& leaf, const PortMap* ports,
                           const std::string& aux);
// A segment's ESI, Type 0 (operator-configured), the same on both leaves of the pair:
// 00, the pair's es-sys-mac, 00, the es-id in two bytes.
std::string sonicEsi(const EvpnMhLeaf& leaf, const EvpnSegment& segment);
// The VXLAN tunnel (VXLAN_TUNNEL, VXLAN_EVPN_NVO) the pair's rails map onto.
inline constexpr const char* kSonicVtep = "vtep";
// The split-unified frr.conf (sonic_frr.cpp); the port names are the SKU's.
std::string sonicFrrConfig(const Plan& plan, const Switch& sw, const PortMap& ports,
                           const SonicOptions& options);

}  // namespace twinrail::plan
