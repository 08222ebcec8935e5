// The lab's switches in SONiC's layout (`twinrail-lab up --nos sonic`), the pure part:
// what the lab does in SONiC's place, decided from the planner's SONiC overlay alone.
//
//   - The kernel shape SONiC's managers give a switch (vlanmgrd, intfmgrd): a bridge per
//     VLAN row, its members enslaved, the SVI's addresses, proxy ARP and MAC, link-local
//     only router ports, the loopback. Driven by the overlay's rows, not by plan knowledge.
//   - database_config.json as SONiC's database container writes it, for one lab switch.
//   - The plan with the switches' ports renamed to the HWSKU's EthernetN, so every lab
//     command (fail, restore, status, verify) works on the names the switch has.
//   - The overrides the lab needs where it cannot provide what swss would.
// No I/O here: every function is unit-tested alone (lab/lib/test/sonic_layout_test.cpp).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "twinrail/lab/shell.h"
#include "twinrail/plan/plan.h"
#include "twinrail/plan/sonic_release.h"
#include "twinrail/plan/sonic_sku.h"

namespace twinrail::lab {

// The release the lab's switches run unless --sonic-release (or evpn-mh: master) says
// otherwise: the planner's default. From 202411 on host routes reach BGP by `redistribute
// table-direct`, which this machine's FRR 8.4 lacks: the lab's FRR takes the same table
// the older way (labFrrConf). Before 202411 (`--sonic-release 202405`, routed NICs) they
// do as SONiC then did: ADVERTISE_NETWORK_TABLE, through the lab's stand-in for bgpcfgd.
inline constexpr plan::SonicRelease kLabSonicRelease = plan::kSonicDefaultRelease;

// A row of the overlay the lab cannot apply; the message names the table and key.
struct SonicLayoutError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// The commands that give a switch namespace the kernel state SONiC's vlanmgrd and
// intfmgrd derive from these CONFIG_DB rows (run in order, inside the namespace):
//   VLAN|VlanX                      bridge VlanX (vlan-unaware), up
//   VLAN_INTERFACE|VlanX            mac_addr -> the bridge's MAC; proxy_arp enabled ->
//                                   proxy_arp=1, proxy_arp_pvlan=1; grat_arp -> arp_accept
//   VLAN_MEMBER|VlanX|EthernetN     EthernetN enslaved (untagged only: no 802.1Q here)
//   VLAN_INTERFACE|VlanX|a/len      the address on the bridge
//   INTERFACE|EthernetN             ipv6_use_link_local_only: IPv6 on, no global address
//   INTERFACE|EthernetN|a/len       the address on the port
//   LOOPBACK_INTERFACE|Loopback0|a  on lo (this kernel has no dummy devices)
// A VLAN member that is one of the PORTCHANNEL rows is left to sonicSegmentCommands.
// Throws SonicLayoutError for a row it cannot apply (a bad name or prefix, a tagged
// member, a member of a VLAN that has no VLAN row).
std::vector<Argv> sonicKernelCommands(const nlohmann::json& configDb);
// EVPN-MH, once the segments' ports exist (zebra takes an ES only on an interface it has
// not seen before its config, so they come after FRR starts):
//   VLAN_MEMBER|VlanX|PortChannelN  PortChannelN enslaved: the lab's veth of that name
//                                   stands in for the LAG (this kernel has no bonds)
//   VXLAN_TUNNEL_MAP|t|map_V_VlanX  VXLAN device t-<VLAN id> (vxlanmgrd's name), VNI V,
//                                   local = VXLAN_TUNNEL|t src_ip, in VlanX; no learning,
//                                   ARP suppressed, no flooding (as the Linux layout)
std::vector<Argv> sonicSegmentCommands(const nlohmann::json& configDb);

// The sysctls SONiC's intfmgrd owns on an interface: what the lab set (above) must still
// be there after twinrail's daemons ran.
inline const std::vector<std::string>& intfmgrdSysctls() {
    static const std::vector<std::string> k{"proxy_arp", "proxy_arp_pvlan", "arp_accept"};
    return k;
}

// database_config.json for one lab switch: one instance on `unixSocket`, the DBs with
// SONiC's ids and separators (APPL_DB 0 ':', ASIC_DB 1, COUNTERS_DB 2, CONFIG_DB 4 '|',
// STATE_DB 6 '|', ...), as dockers/docker-database/database_config.json.j2 has them.
nlohmann::json labDatabaseConfig(const std::string& unixSocket);

// Where the lab cannot stand in for swss: no syncd (COUNTERS_DB) and no fpmsyncd (APPL_DB
// ROUTE_TABLE, ASIC_DB), so pathqd reads the kernel's counters and weights; and the lab's
// scale (veth ports report 10 Gbit/s; probes between namespaces jitter) and liveness
// timers, as the Linux layout has them.
void applyLabOverrides(nlohmann::json& configDb);

// The switch's full config_db.json: the SKU's factory default (PORT, DEVICE_METADATA)
// with the overlay's rows merged in (overlay fields win), as `config load` of both.
nlohmann::json mergeConfigDb(const nlohmann::json& base, const nlohmann::json& overlay);

// The plan's switch ports as the HWSKU names them (`portMaps`: switch -> plan port ->
// EthernetN): switch ports, their peers' ports, the NICs' leaf ports and pinned uplinks.
// Throws SonicLayoutError when a switch or a port has no name in the maps.
plan::Plan withSkuPortNames(const plan::Plan& plan,
                            const std::map<std::string, plan::PortMap>& portMaps);

// The lab's record of the renaming (sonic.json in the lab's state directory):
// {"nos": "sonic", "release": "<name>", "ports": {switch: {planPort: EthernetN}}}.
nlohmann::json sonicRecord(plan::SonicRelease release,
                           const std::map<std::string, plan::PortMap>& portMaps);
// A port argument of a lab command (`fail NODE:PORT`): a plan name (swp3) becomes the
// switch's EthernetN; an EthernetN name, or any port of a node the record does not
// rename (a NIC, a Linux-layout lab: `record` null), stays as given.
std::string labPortName(const nlohmann::json& record, const std::string& node,
                        const std::string& port);

// The frr.conf the lab's FRR loads: the overlay's, without the FPM lines (there is no
// fpmsyncd here, and this zebra runs without the fpm module, which would refuse them), and
// `redistribute table-direct N` as FRR 8.4 can: `ip import-table N` and `redistribute
// table N` (the same routes to BGP; the copy in zebra's RIB matters only with FPM).
std::string labFrrConf(const std::string& sonicFrrConf);

}  // namespace twinrail::lab
