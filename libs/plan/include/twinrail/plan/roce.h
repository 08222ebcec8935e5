// The fabric's one set of RoCEv2 QoS choices, and what each side derives from it: the
// switches' maps, PFC and ECN (SONiC: sonic_qos.cpp), each server NIC's DCB (a systemd unit
// of iproute2 `dcb` lines) and the collective library's traffic class (NCCL). One struct in
// the plan's request, so NIC, switch and NCCL cannot disagree by construction; and one
// checker that reads the three artefacts back, so a hand edit that makes them disagree is
// found (roceAgreement).
//
// The defaults are the common RoCEv2 ones (NVIDIA's and SONiC's lossless profile alike):
// RoCE data in DSCP 26 on priority 3, the only lossless priority (PFC on 3 alone); CNPs in
// DSCP 48 on priority 6, a strict queue, so a congestion notification never waits behind
// the data it is about; everything else best effort on priority 0.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace twinrail::plan {

struct RoceQos {
    int priority = 3;     // the lossless 802.1p priority = traffic class = queue = PG
    int dscp = 26;        // RoCEv2 data
    int cnpPriority = 6;  // CNPs: strict-priority queue, lossy
    int cnpDscp = 48;
    // Cable lengths SONiC sizes each lossless PG's headroom by (CABLE_LENGTH): the plan has
    // no lengths of its own, so these are per link class, the longest of the class.
    int hostCableM = 30;     // leaf to NIC (a rail spans racks)
    int fabricCableM = 100;  // leaf to spine
    bool operator==(const RoceQos&) const = default;
};

// Why these choices cannot be planned, or nothing: out of range (priority 0..7, DSCP
// 0..63, cable 1..10000 m), CNPs sharing the data's priority or DSCP, or priority 0 (the
// best-effort class every unmapped DSCP falls into would be lossless).
std::optional<std::string> roceQosProblem(const RoceQos& qos);

// The IP traffic class byte the NIC puts on RoCE data (NCCL_IB_TC): the DSCP in the upper
// six bits, ECT(0) in the lower two, so switches can mark congestion instead of dropping.
int roceTrafficClass(const RoceQos& qos);

// The server's DCB unit (twinrail-roce-dcb.service): per NIC port, PFC on `priority` only
// and the DSCP -> priority entries for RoCE and CNPs (a DSCP entry makes the NIC trust
// DSCP; iproute2 6.1 has no `dcb apptrust`). `ports` are the server's NIC port names.
std::string roceDcbUnit(const RoceQos& qos, const std::string& server,
                        const std::vector<std::string>& ports);
// /etc/nccl.conf lines: NCCL_IB_TC and NCCL_IB_GID_INDEX (3: the RoCEv2 GID of the port's
// IPv4 address on mlx5 and most NICs; `show_gids` tells).
std::string ncclConfig(const RoceQos& qos);

// A switch port that carries RoCE, as the plan names it; fabric: leaf-spine (its cable
// length is the fabric one).
struct RocePort {
    std::string name;
    bool fabric = false;
};
// The switch-side checks of roceAgreement on `ports` (what `twinrail verify` checks on a
// running switch's CONFIG_DB, with the plan's ports).
std::vector<std::string> roceSwitchAgreement(const RoceQos& qos, const nlohmann::json& configDb,
                                             const std::vector<RocePort>& ports);
// The CONFIG_DB tables those checks read.
const std::vector<std::string>& roceConfigTables();

// Reads a leaf's or spine's CONFIG_DB rows (its overlay: the ports that carry RoCE are
// its PATHQD_PORT, VLAN and PortChannel members), a server's DCB unit and nccl.conf back
// and returns every disagreement with `qos` (one line each: what, where, found, wanted).
// Empty ones are skipped (a switch alone, a server alone).
std::vector<std::string> roceAgreement(const RoceQos& qos, const nlohmann::json& configDb,
                                       const std::string& dcbUnit, const std::string& ncclConf);

// A Linux switch's RoCE QoS unit (twinrail-roce-qos.service, linux_qos.cpp): per port the
// DCB lines a NIC gets (PFC on `priority`, the DSCP entries), an ETS root with the CNP
// priority on a strict band and RoCE's on a DWRR band of its own, and RED with ECN on that
// band at the plan's WRED thresholds; what mlxsw offloads to a Spectrum ASIC. The
// headroom of the cable length and a PFC watchdog have no Linux equivalent.
std::string roceLinuxSwitchUnit(const RoceQos& qos, const std::string& sw,
                                const std::vector<RocePort>& ports);
// Reads that unit back: the DCB lines as roceAgreement does, then per port the ETS bands
// and the RED marking; every disagreement with `qos`, one line each.
std::vector<std::string> roceLinuxSwitchAgreement(const RoceQos& qos, const std::string& unit);

}  // namespace twinrail::plan
