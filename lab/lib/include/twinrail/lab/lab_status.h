// The state of a running lab, from its namespaces, FRR and routes (twinrail-lab status).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "twinrail/lab/plan_lab.h"

namespace twinrail::lab {

// {"lab", "healthy", "switches": [{name, role, plane, processes{..: bool}, bgp{established,
// configured}, host_routes}], "nics": [{name, address, bgp, peers_all_planes, ...}]}
nlohmann::json labStatus(const std::string& name);
// The IPv4 unicast BGP sessions of the FRR in namespace `ns`: {established, configured,
// youngest_ms: how long the most recently established one has been up, -1 if none}.
nlohmann::json bgpSessions(const std::string& ns);
std::string statusTable(const nlohmann::json& status);

}  // namespace twinrail::lab
