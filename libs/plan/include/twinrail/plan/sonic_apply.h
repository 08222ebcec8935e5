// `twinrail sonic-apply`: a switch's planned files (overlay, frr.conf, breakouts) onto that
// switch as it is now (its running CONFIG_DB, e.g. a factory t1 preset), in SONiC's order,
// as the commands of SONiC's own CLI. Pure: the CLI reads the files and writes the bundle.
//
// The order, and why:
// 1. dynamic port breakout per cage whose BREAKOUT_CFG is not the plan's mode yet (`config
//    interface breakout`, -f to drop what the old ports had), and the speed where the plan
//    runs a mode's alternative: DPB does nothing when BREAKOUT_CFG already names the mode,
//    so the overlay never carries it;
// 2. DEVICE_METADATA's type (a back-end leaf, ComputeAI), which the QoS templates read;
// 3. `config qos reload` for the plan's ports (or all of them when the switch has no
//    lossless buffer pool yet): the buffer and QoS rows of ports DPB made;
// 4. the preset's rows that SONiC would refuse beside the plan's, deleted: a router
//    interface address on a port that becomes a VLAN or PortChannel member (portsorch
//    refuses such a member), other addresses on a link-local-only fabric port, the other
//    Loopback0 address, every BGP_NEIGHBOR (bgpcfgd renders them into FRR even in
//    split-unified mode, where the plan's sessions are in frr.conf);
// 5. `config load` of the overlay: a field-by-field merge (sonic-cfggen --write-to-db),
//    never a replace, so the switch's own fields (hwsku, mac, platform, buffers) stay;
// 6. frr.conf where the bgp container finds it (/etc/sonic/frr is its /etc/frr);
// 7. `config save`, and a restart of bgp, which reads docker_routing_config_mode and
//    frr.conf only when it starts.
// Refused (exit 65 from the CLI), before anything is written: a buffer model other than
// the plan's, a port the plan needs that the switch does not have after its breakouts, an
// Ethernet segment whose ESI differs between CONFIG_DB's EVPN_ETHERNET_SEGMENT and
// frr.conf's `evpn mh es-id` (nothing in SONiC renders one from the other: a hand edit of
// one file would split the pair's view of the segment).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "twinrail/plan/sonic_sku.h"
#include "twinrail/plan/sonic_target.h"

namespace twinrail::plan {

// NOLINTNEXTLINE(bugprone-exception-escape): json's noexcept move checks an invariant
struct SonicApplyInput {
    nlohmann::json running;                     // the switch's CONFIG_DB, as config_db.json
    nlohmann::json overlay;                     // configs/<switch>/config_db.overlay.json
    std::map<std::string, Breakout> breakouts;  // configs/<switch>/breakouts.json
    SonicOptions options;                       // configs/<switch>/sonic-target.json
    std::string frrConf;                        // configs/<switch>/frr.conf
};

struct SonicApplyStep {
    std::vector<std::string> argv;  // a SONiC command, run from the bundle's folder
    std::string why;
};

struct SonicApply {
    std::vector<SonicApplyStep> steps;
    // Keys deleted in step 4 ("TABLE|key"), each with the reason.
    std::vector<std::pair<std::string, std::string>> deletions;
    nlohmann::json afterBreakout;  // the running config as DPB leaves it (emulated)
    nlohmann::json target;         // what CONFIG_DB holds after the steps
    // RFC 6902 from afterBreakout to target, for `config apply-patch` on a switch that
    // needs no breakout and no QoS reload (a plan change on a deployed switch): then
    // patchApplies. Not otherwise (a patch computed before them would not fit after).
    nlohmann::json patch = nlohmann::json::array();
    bool patchApplies = false;
};

// The bundle's plan, or why the switch cannot take the plan (names the row or port).
std::variant<SonicApply, std::string> sonicApply(const SonicApplyInput& input);

// The running config's PORT rows as a SKU (names, lanes, index, alias, speed): the cages
// DPB splits, without the SKU's files.
std::variant<Sku, std::string> skuOfRunningConfig(const nlohmann::json& running);

// sonic-target.json: {"release": "<name>", "buffer_model": "traditional|dynamic"}.
nlohmann::json sonicTargetJson(const SonicOptions& options);
std::variant<SonicOptions, std::string> parseSonicTarget(const nlohmann::json& j);

// A minimal RFC 6902 patch from `from` to `to` (config_db.json shapes): never `add` of a
// table or row `from` already has (that would replace it whole), field by field inside.
nlohmann::json configDbPatch(const nlohmann::json& from, const nlohmann::json& to);

// `steps` as a bash script: set -euo pipefail, each command echoed, every word quoted.
std::string sonicApplyScript(const std::vector<SonicApplyStep>& steps, const std::string& header);

}  // namespace twinrail::plan
