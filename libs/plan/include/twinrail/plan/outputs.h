// What the planner writes from a plan: the sizing report, the cabling plan and each
// switch's configuration (FRR, and hostrouted/pathqd in the config_db.json shape).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "twinrail/plan/plan.h"

namespace twinrail::plan {

// A few lines per plane and in total, for people.
std::string sizingReport(const Plan& plan);

// One row per cable: server NIC ports to leaves, then leaf uplinks to spines.
// Columns: kind,plane,a_device,a_port,b_device,b_port,speed_gbps
std::string cablingCsv(const Plan& plan);
nlohmann::json cablingJson(const Plan& plan);

// FRR (frr.conf) for a leaf or spine: BGP unnumbered peer groups, multipath-relax,
// maximum-paths, the rail subnets, and the import-table lines hostrouted needs.
std::string frrConfig(const Plan& plan, const Switch& sw);
// SONiC config_db.json shape: DEVICE_METADATA, LOOPBACK_INTERFACE, PORT, INTERFACE, and
// the HOSTROUTED/HOSTROUTED_INTERFACE and PATHQD/PATHQD_PORT tables the daemons read.
nlohmann::json configDb(const Plan& plan, const Switch& sw);
// Where twinrail verify finds each switch's STATE_DB: {"switches": {name: {"redis":
// {"host", "port"}}}}. The planner fills in each switch's loopback and port 6379; an
// operator points them at the switches' management addresses (the lab writes its own).
nlohmann::json inventoryJson(const Plan& plan);
// In the routed attachment: the server NIC's receive-only BGP speaker (the lab's servers).
std::string hostFrrConfig(const Plan& plan, const Server& server, const Nic& nic);

}  // namespace twinrail::plan
