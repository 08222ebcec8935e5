// Static smart routing (the seed's 3.2.2): traffic that enters a leaf on downlink D
// leaves through the one uplink U the plan pins D to, for every destination the main
// table reaches through U. Pure decisions; uplink_pinner.h does the I/O.
//
// How, with what these kernels have (no VRF): one policy table per pinned uplink and
// `ip rule iif D lookup T(U)` ahead of main. T(U) mirrors the main table prefix by
// prefix, so its longest match is main's longest match:
//  * where main's route for a prefix has next hops through U, T(U) has that prefix
//    through U alone (the BGP route, restricted to U's next hop: no static copy);
//  * every other prefix of main is a `throw` in T(U): the lookup falls back to main, so a
//    destination U's spine no longer reaches (BGP withdrew it there) takes the normal
//    multipath at once, and local hosts stay local.
//  * with pathqd's weights in main (WCMP), a prefix whose path through U carries less than
//    `minWeightRatio` of the heaviest next hop's weight is a throw too: where pathqd found
//    U's path degraded, pinned traffic takes the weighted multipath instead.
// While U is down the rule is removed first and T(U) emptied: everything from D takes
// the normal multipath; when U is back and BGP has routes through it again, T(U) fills
// and the rule returns.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "twinrail/netlink/policy_writer.h"
#include "twinrail/netlink/route_watch.h"

namespace twinrail::hostrouted {

struct PinSettings {
    std::map<std::string, std::string> pins;  // downlink -> uplink
    uint32_t tableBase = 1000;                // T(U) = tableBase + the uplink's rank
    uint32_t rulePriority = 1000;             // ahead of main (32766)
    uint8_t protocol = 201;                   // marks our rules and table routes
    double minWeightRatio = 0.5;              // of the heaviest next hop; 0: pin regardless
    bool ipv4 = true, ipv6 = true;
    bool operator==(const PinSettings&) const = default;
};

// The pinned uplinks, each with its table (distinct uplinks in name order).
std::map<std::string, uint32_t> pinTables(const PinSettings& s);

// What T(U) holds for one prefix, given main's routes for it (ascending metric, as the
// watch keeps them): nullopt for no entry.
std::optional<netlink::KernelRoute> pinnedEntry(
    const std::vector<const netlink::KernelRoute*>& main, int uplinkIfindex, uint32_t table,
    uint8_t protocol, double minWeightRatio = 0.5);

// Whether a present entry already is what pinnedEntry() wants (the kernel reports a
// single next hop's weight as 1 and may add flags we do not compare).
bool sameEntry(const netlink::KernelRoute& present, const netlink::KernelRoute& wanted);

enum class PinState { Pinned, Fallback };
const char* pinStateName(PinState s);

struct UplinkView {
    bool present = false;
    bool operUp = false;
    size_t routesV4 = 0, routesV6 = 0;  // prefixes pinned through it in T(U)
};

struct PinDecision {
    PinState state = PinState::Fallback;
    std::string reason;  // why fallen back; empty when pinned
    std::vector<netlink::PolicyRule> rules;
};

PinDecision decidePin(const PinSettings& s, const std::string& downlink, const std::string& uplink,
                      uint32_t table, const UplinkView& view);

}  // namespace twinrail::hostrouted
