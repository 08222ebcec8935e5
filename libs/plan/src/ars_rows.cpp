#include "ars_rows.h"

namespace twinrail::plan {

void addLbRows(const Plan& plan, const Switch& sw,
               const std::function<std::string(const std::string&)>& portName, bool softwarePath,
               nlohmann::json& db) {
    using Lb = Request::Lb;
    const Lb lb = plan.request.lb;
    if (lb == Lb::Spray) {
        // Only the algorithm: the hash fields stay the switch's (sonic-hash.yang's other
        // leaves are untouched), and RANDOM ignores them anyway.
        db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash_algorithm"] = "RANDOM";
        return;
    }
    if (lb != Lb::Ars && lb != Lb::ArsGlobal) return;
    nlohmann::json profile = {{"algorithm", "ewma"},
                              {"ars_nhg_path_selector_mode", "interface"},
                              {"default_ars_object", kArsName},
                              {"ipv4_enable", "true"},
                              {"ipv6_enable", "true"}};
    if (softwarePath) profile["sampling_interval"] = std::to_string(kLinuxArsSamplingUs);
    db["ARS_PROFILE"][kArsName] = profile;
    // SONiC's defaults, written out: flowlets on quality, 256 us idle (half a fabric RTT
    // on an ASIC; twinrail-lab sweeps it against its own RTT), 512 flows.
    db["ARS_OBJECT"][kArsName] = {
        {"assign_mode", "per_flowlet_quality"}, {"flowlet_idle_time", "256"}, {"max_flows", "512"}};
    // Fabric ports: a leaf's uplinks, a spine's ports (its parallel links to a leaf).
    for (const auto& p : sw.ports) {
        if (p.role == PortRole::Host) continue;
        db["ARS_INTERFACES"][portName(p.name)] = {{"ars_obj_name", kArsName}};
    }
    if (lb != Lb::ArsGlobal) return;
    db["GLOBAL_ARS"][kArsName] = {{"enabled", "true"}};
    // Global ARS takes the path beyond's share from pathqd's weights and handles congestion
    // itself, per packet; pathqd then carries capacity alone. With its congestion penalty on
    // too, the two loops chase the same queues at a millisecond and at seconds, and the
    // software path measured worse for it (docs/load-balancing.md). SONiC's ASIC has no
    // remote input (GLOBAL_ARS runs as local ARS there), so its pathqd is left as it is.
    if (softwarePath) db["PATHQD"]["global"]["max_penalty"] = "0";
}

}  // namespace twinrail::plan
