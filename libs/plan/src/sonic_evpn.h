// EVPN-MH rows of a SONiC leaf's overlay (sonic_evpn.cpp), for sonic_overlay.cpp and
// sonic_frr.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "twinrail/plan/sonic_target.h"

namespace twinrail::plan {

// The leaf's ES, VLAN, VXLAN, AUX and hostrouted rows into `db`; an error names the
// switch (no free port for the AUX link, a release without EVPN_ETHERNET_SEGMENT).
std::optional<std::string> sonicEvpnRows(const Plan& plan, const Switch& sw, const Sku& sku,
                                         const PortMap& ports, const SonicOptions& options,
                                         nlohmann::json& db);
// Why EVPN-MH cannot run on this release, or nothing (not EVPN-MH).
std::optional<std::string> sonicEvpnReleaseRefusal(const Plan& plan, const SonicOptions& options);
// zebra's ES lines: interface PortChannel<N> / evpn mh es-id <Type 0 ESI>.
std::string sonicEvpnZebraConfig(const EvpnMhLeaf& leaf);

}  // namespace twinrail::plan
