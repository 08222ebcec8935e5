// Rows more than one part of a SONiC overlay writes (sonic_overlay.cpp, sonic_evpn.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "twinrail/plan/sonic_target.h"

namespace twinrail::plan {

// A rail SVI with the one gateway MAC of both planes' leaves and its gateway prefix: SAG
// where the release has it (SAG|GLOBAL gateway_mac and static_anycast_gateway on the SVI;
// intfmgrd also installs the MAC's FDB entry), else VLAN_INTERFACE mac_addr (202505 on).
// sonicRefusal has refused a release with neither. `proxyArp`: intfmgrd's proxy ARP on
// the SVI (bonded hosts reach each other through the gateway).
void sonicGatewayRows(const Plan& plan, const SonicOptions& options, const std::string& vlan,
                      const std::string& gatewayPrefix, bool proxyArp, nlohmann::json& db);

}  // namespace twinrail::plan
