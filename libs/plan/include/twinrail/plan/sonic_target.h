// The planner's SONiC target (`twinrail-plan --nos sonic`): per switch an overlay for its
// own config_db.json (never PORT: SONiC owns it from the HWSKU), an frr.conf for
// docker_routing_config_mode split-unified, and optionally the same rows as an RFC 6902
// patch for `config apply-patch`. Pure; docs/planner.md ("The SONiC target") says why
// each row has the shape it has.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "twinrail/plan/evpn_mh.h"
#include "twinrail/plan/plan.h"
#include "twinrail/plan/sonic_release.h"
#include "twinrail/plan/sonic_sku.h"

namespace twinrail::plan {

// Rail r of a leaf is VLAN kSonicVlanBase + r (rails are at most gpusPerServer, and one
// leaf holds one group, so the id is unique on the switch).
inline constexpr int kSonicVlanBase = 1000;
// pathqd's quantisation when PATHQD|global sets no `levels` (quality.h QualityModel).
inline constexpr int kPathqdDefaultLevels = 32;

// How the switch sizes lossless buffers (DEVICE_METADATA|localhost buffer_model):
// traditional (buffermgrd: pfc_enable, the port's speed and CABLE_LENGTH, looked up in the
// SKU's pg_profile_lookup.ini) or dynamic (buffermgrd -a: lossless PGs are BUFFER_PG rows
// with profile NULL; pfc_enable is never read).
enum class SonicBufferModel { Traditional, Dynamic };

struct SonicOptions {
    SonicRelease release = kSonicDefaultRelease;
    SonicBufferModel bufferModel = SonicBufferModel::Traditional;
};

// Why this plan cannot be expressed on SONiC, or nothing: a feature the release lacks
// (sonic_release.h: the one gateway MAC of bonded hosts, EVPN-MH, ARS), routed NICs it
// cannot lay out.
std::optional<std::string> sonicRefusal(const Plan& plan, const SonicOptions& options = {});
// The release checks of sonicRefusal alone, without the routed layout's (which
// sonicSwitchConfig checks per switch).
std::optional<std::string> sonicFeatureRefusal(const Plan& plan, const SonicOptions& options);

// NOLINTNEXTLINE(bugprone-exception-escape): json's noexcept move checks an invariant
struct SonicSwitchConfig {
    nlohmann::json overlay;  // never PORT or BREAKOUT_CFG: SONiC's, from the SKU and DPB
    std::string frrConf;
    // Cages to split with `config interface breakout` before the overlay is loaded (DPB
    // does nothing when BREAKOUT_CFG already names the mode, so the overlay never does).
    std::map<std::string, Breakout> breakouts;
};
// breakouts.json: {"<base port>": {"brkout_mode": "<platform.json key>", "speed":
// "<Mb/s>"}}, what `twinrail sonic-apply` runs DPB with; and back (errors name the key).
nlohmann::json sonicBreakoutsJson(const std::map<std::string, Breakout>& breakouts);
std::variant<std::map<std::string, Breakout>, std::string> parseSonicBreakouts(
    const nlohmann::json& j);
// The ACL table and table type of static smart routing (--lb static; hostrouted's
// APPL_DB rules go into it).
inline constexpr const char* kSonicPinAcl = "TWINRAIL_PIN";
// Errors name the switch and port (a port the HWSKU cannot give, a rail beyond the VLANs).
std::variant<SonicSwitchConfig, std::string> sonicSwitchConfig(const Plan& plan, const Switch& sw,
                                                               const Sku& sku,
                                                               const SonicOptions& options);

// A CONFIG_DB key as an RFC 6901 JSON pointer token (~ as ~0, / as ~1).
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
