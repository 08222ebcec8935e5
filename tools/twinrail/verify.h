// twinrail verify: the fabric-wide dual-homing and cabling audit. A NIC that reaches its
// peers through one plane only keeps training running at half its bandwidth, and neither
// SONiC nor FRR says so. From the plan and every switch's STATE_DB:
//   * every NIC port: learned on the planned leaf and port ("ok"), on another port of
//     that leaf or on another leaf ("miscabled", naming where), or nowhere ("missing");
//     a NIC learned in one plane only is "single-plane";
//   * every fabric link: its BGP session up on the planned ports, with the planned switch
//     (by router id) at the other end;
//   * every claim a leaf refused (HOST_CLAIM_TABLE): an address heard where the plan does
//     not bind it while its owner is routed where it should be. A claim, not a cable: the
//     owner's row stays "ok", and the claim names the port, MAC and the address's owner.
// Pure: the rows in, verdicts out (verify.cpp); main.cpp reads Redis.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "show_views.h"
#include "twinrail/plan/plan.h"

namespace twinrail::cli {

struct SwitchState {
    bool reachable = false;
    std::string error;                      // why not, when not
    std::map<std::string, Fields> hosts;    // HOST_ROUTE_TABLE: ip -> fields
    std::map<std::string, Fields> foreign;  // HOST_FOREIGN_TABLE: ip -> fields
    std::map<std::string, Fields> peers;    // BGP_PEER_STATE_TABLE: port -> fields
    std::map<std::string, Fields> claims;   // HOST_CLAIM_TABLE: ip|port -> fields
    // CONFIG_DB's RoCE QoS tables (roceConfigTables): table -> key -> field -> value.
    nlohmann::json config = nlohmann::json::object();
    std::string configError;  // CONFIG_DB could not be read (the switch's other state was)
    // COUNTERS_DB: the PFC watchdog's PFC_WD_STATUS of each port's lossless queues (those
    // of PORT_QOS_MAP pfc_enable), "<port>:<queue>" -> status; empty where there is none.
    std::map<std::string, std::string> watchdog;
    std::string countersError;
    // STATE_DB PATH_QUALITY_TABLE (pathqd): port -> fields, for its pause_rx_pps.
    std::map<std::string, Fields> quality;
};

struct VerifyOptions {
    // A port that receives more pause frames a second than this (pathqd's pause_rx_pps)
    // is named: its peer is congested and holding it back.
    double maxPausePps = 100;
};

struct VerifyReport {
    View nicPorts;
    View links;
    View claims;
    View lossless;  // RoCE QoS disagreements with the plan, per switch port and cable
    bool healthy = true;
    nlohmann::json json;  // {"healthy", "nic_ports": [...], "links": [...], "claims": [...],
                          // "lossless": {"configured", "problems": [...]}, "unreachable": [...]}
};

// The lossless checks (verify_lossless.cpp): with RoCE QoS on any switch, every switch's
// ports as the plan's RoCE choices say, and both ends of every fabric cable alike; on any
// fabric, the plan's ports with a stormed lossless queue or pause rates above the limit.
void addLossless(const plan::Plan& plan, const std::map<std::string, SwitchState>& state,
                 const VerifyOptions& options, VerifyReport& report);

VerifyReport verifyFabric(const plan::Plan& plan, const std::map<std::string, SwitchState>& state,
                          const VerifyOptions& options = {});

}  // namespace twinrail::cli
