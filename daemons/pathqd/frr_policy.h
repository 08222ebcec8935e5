// The FRR configuration pathqd owns, as a pure function of the published levels.
//
// FRR 8.4 computes a path's multipath weight from the link-bandwidth value it
// *received* on the wire; a value set by the receiver's own inbound route-map shows in
// `show bgp` but does not change its weights (checked on this machine, docs/pathqd.md,
// "pathqd in FRR"). So both segments are applied on the spine, where they reach the leaf
// on the wire:
//  * inbound, per downlink (routes from leaf L): tag with this spine's egress level
//    toward L (large community ASN:1:level, plus the raw metrics at publish time) and
//    the link-bandwidth community;
//  * outbound, per downlink (routes sent to leaf M): link-bandwidth = min(tagged level,
//    M's own uplink level that M's pathqd reports over the link), one route-map entry
//    per possible tagged level; untagged routes get M's uplink level.
// Parallel links (FARE's rule, per switch rather than per session): routes from leaf L
// are tagged with the sum of this spine's levels over its links to L that are up, in
// levels per N links (N: the most parallel links to one neighbor; the planner gives every
// pair the same); toward leaf M over k parallel links Q, the path bandwidth
// min(tag x N, sum of M's uplink levels over them) is split over the k sessions in
// proportion to each link's level, so M's total toward this spine is the FARE value
// whatever k is. With one link this is min(tag, M's level), as before.
// Large community encoding (global admin = local ASN): 1 level (1..levels),
// 2 utilisation per mille, 3 queue KiB, 4 queueing delay us (latency above the
// link floor), 5 capacity Mbps; the metrics are a snapshot taken when the level changed.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "twinrail/frr/running_config.h"

namespace twinrail::pathqd {

inline constexpr const char* kListPrefix = "TWINRAIL-PQ-L";
inline constexpr const char* kInPrefix = "TWINRAIL-PQ-IN-";
inline constexpr const char* kOutPrefix = "TWINRAIL-PQ-OUT-";
inline constexpr int kUntaggedSeq = 1000;

struct MetricSnapshot {
    uint32_t utilPermille = 0;
    uint32_t queueKiB = 0;
    uint32_t latencyUs = 0;
    uint32_t capacityMbps = 0;
    bool operator==(const MetricSnapshot&) const = default;
};

struct DownlinkState {
    int level = 1;      // this switch's egress level toward the leaf (1..levels)
    int peerLevel = 0;  // the leaf's reported uplink level; 0 = unknown (no penalty)
    MetricSnapshot metrics;
    // The switch at the far end; ports with the same neighbor are parallel links
    // (empty: the port alone). A port that is down carries nothing.
    std::string neighbor;
    bool up = true;
    bool operator==(const DownlinkState&) const = default;
};

struct PolicyInput {
    uint32_t asn = 0;
    int levels = 16;
    bool ipv4 = true, ipv6 = true;
    std::map<std::string, DownlinkState> downlinks;  // by port
};

enum class Refresh { None, In, Out };

struct PolicyLine {
    frr::ConfigLine line;
    std::string port;  // empty for shared lines
    Refresh refresh = Refresh::None;
    // When a line starting with this is present, the line counts as present: the metric
    // communities are a snapshot of the last level change, and rewriting them alone
    // (after a restart, say) would re-advertise every prefix for nothing.
    std::string presentIfStartsWith;
};

std::vector<PolicyLine> desiredPolicy(const PolicyInput& in);

// What to send: the missing lines, the soft refreshes they need, and the ports whose
// neighbor already has a route-map pathqd does not own (left alone, reported).
struct PolicyDiff {
    std::vector<frr::ConfigLine> add;
    std::vector<frr::ConfigLine> remove;  // "no ..." lines for ports no longer configured
    std::set<std::pair<std::string, Refresh>> refresh;
    std::map<std::string, std::string> conflicts;  // port -> the foreign route-map line
};

PolicyDiff diffPolicy(const frr::RunningConfig& running, const PolicyInput& in);

// The last line of defence before vtysh, behind the name checks of the config reader:
// vtysh runs each line of a -c argument as a command of its own, so a line (or context,
// or refreshed port) holding a control character is taken out of the diff, never sent.
// Returns what was taken out, for the log.
bool hasControlChar(std::string_view text);
std::vector<std::string> dropUnsafeLines(PolicyDiff& diff);
// The first argument with a control character, or nullptr: checked on the whole argument
// vector just before it runs (the BGP header comes from FRR's own running config).
const std::string* unsafeVtyshArg(const std::vector<std::string>& args);

// vtysh arguments for a diff: one invocation with the configuration, then the soft
// refreshes ("clear bgp ipv4 unicast swp1 soft in").
std::vector<std::string> policyVtyshArgs(const frr::RunningConfig& running, const PolicyDiff& diff,
                                         const PolicyInput& in);

}  // namespace twinrail::pathqd
