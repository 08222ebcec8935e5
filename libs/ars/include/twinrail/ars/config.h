// ARS settings in the shape of SONiC's Local ARS tables (doc/ARS/Local_ARS_HLD.md, rev 1.4):
// ARS_PROFILE, ARS_OBJECT, ARS_INTERFACES, ARS_NEXTHOPS, and packet spray as
// SWITCH_HASH|GLOBAL ecmp_hash_algorithm RANDOM (sonic-hash.yang). twinrail's additions:
//  - GLOBAL_ARS|<ars_obj_name> (proto/linux/twinrail-global-ars.yang): global ARS, FARE's rule on
//    that object (DatapathSettings::global), in a table of its own so that SONiC's tables
//    keep SONiC's fields; field `enabled` (default true);
//  - ARS_OBJECT assign_mode per_flowlet_random and per_packet_random, SAI's
//    SAI_ARS_MODE_FLOWLET_RANDOM and SAI_ARS_MODE_PER_PACKET_RANDOM, beside SONiC's
//    per_flowlet_quality and per_packet_quality.
// The same config_db document drives the software path (arsd) here and an ASIC on a SONiC
// switch. Units where SONiC leaves them to the platform (docs: the software path):
//  past load = percent of the port's capacity sent per sampling interval, future load =
//  kilobytes queued; a range of 0..0 (SONiC's default) is the default range below.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "twinrail/ars/datapath.h"
#include "twinrail/common/ip.h"

namespace twinrail::ars {

// The table twinrail adds for global ARS.
inline constexpr const char* kGlobalArsTable = "GLOBAL_ARS";

// The ranges used when ARS_PROFILE leaves min and max at 0 (the HLD's own example).
inline constexpr uint32_t kDefaultPastLoadMax = 100;     // percent of capacity
inline constexpr uint32_t kDefaultFutureLoadMax = 1000;  // kilobytes queued
// The flow table's largest size: max_flows above it is refused (a BPF map of this many
// entries is a few tens of MB).
inline constexpr uint32_t kMaxFlowTable = 1U << 20;

// ARS_PROFILE ars_nhg_path_selector_mode: which multipath routes ARS takes.
//   Global     every one (spray, too: SWITCH_HASH RANDOM applies to every ECMP route)
//   Interface  a route whose every next hop leaves through an ARS_INTERFACES port
//   Nexthop    that, and every next hop's address is in ARS_NEXTHOPS
enum class NhgSelector { Global, Interface, Nexthop };
const char* nhgSelectorName(NhgSelector s);  // "global", "interface", "nexthop"

struct ArsInterface {
    std::string name;
    uint32_t scalingFactor = 0;  // ARS_INTERFACES scaling_factor (0: from the port's speed)
    bool operator==(const ArsInterface&) const = default;
};

struct LoadRange {
    uint32_t min = 0, max = 0;  // the value at band 7 and at band 0
    bool operator==(const LoadRange&) const = default;
};

struct ArsConfig {
    bool enabled = false;  // no ARS tables and no RANDOM hash: arsd attaches nothing
    DatapathSettings datapath;
    std::string profile;  // the ARS_PROFILE key ("" with spray alone)
    std::string object;   // the ARS_OBJECT key in use ("" with spray alone)
    NhgSelector selector = NhgSelector::Interface;
    // The flow table's entries: ARS_OBJECT max_flows (SONiC's default 512) rounded up to a
    // power of two, so a flow's hash indexes it with a mask.
    uint32_t maxFlows = 512;
    // How often port quality is re-sampled, as configured (SONiC's default 16 us); the
    // software path samples no faster than its own floor (arsd's kSamplingFloorUs).
    uint32_t samplingIntervalUs = 16;
    // ARS_PROFILE's EWMA inputs: past load (bytes sent) and future load (bytes queued),
    // their relative weights (SONiC's default 16 each: equal) and the ranges that map onto
    // bands 7..0.
    uint32_t pastLoadWeight = 16, futureLoadWeight = 16;
    LoadRange pastLoad{0, kDefaultPastLoadMax};
    LoadRange futureLoad{0, kDefaultFutureLoadMax};
    bool ipv4 = true, ipv6 = true;         // ARS_PROFILE ipv4_enable / ipv6_enable
    std::vector<ArsInterface> interfaces;  // ARS_INTERFACES: the eligible egress ports
    // ARS_NEXTHOPS (default VRF only) as host prefixes (/32, /128), filled only with the
    // nexthop selector: a route is eligible when every next hop's address is in one.
    std::vector<IpPrefix> nexthops;
    bool operator==(const ArsConfig&) const = default;
};

// The whole document's ARS tables; an error names the table, key and field the way every
// twinrail daemon does (service/config_fields.h): "ARS_OBJECT|x field flowlet_idle_time: 0
// is outside 2..2047". Tables absent: enabled = false.
std::variant<ArsConfig, std::string> parseArsConfig(const nlohmann::json& configDb);

// The CONFIG_DB tables parseArsConfig reads (for a daemon's ServiceSpec::tables).
std::vector<std::string> arsTables();

}  // namespace twinrail::ars
