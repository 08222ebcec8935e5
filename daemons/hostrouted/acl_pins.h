// Static smart routing on SONiC (--lb static, platform sonic): the ASIC forwards, so the
// kernel's policy tables (uplink_pins.h) would pin nothing; SONiC's own tool is ACL-based
// PBR. The planner puts the ACL table (type TWINRAIL_PIN: IN_PORTS, IP_TYPE, DST_IP and
// DST_IPV6 matches, PACKET_ACTION and REDIRECT_ACTION) on the leaf's host ports in
// CONFIG_DB; the rules, which name the uplink's current next hop and carry REDIRECT_ACTION
// (no release's sonic-acl.yang models it), are hostrouted's, in APPL_DB ACL_RULE_TABLE,
// which aclorch reads as it reads CONFIG_DB's (orchdaemon, every release since 2020).
//
// The rules, highest priority first:
// - LOCAL_<n>: traffic to the leaf's own subnets (its rail SVIs, its addresses) and to
//   link-local and multicast destinations is forwarded as routing says;
// - PIN_<downlink>: every other IP packet in on the downlink is redirected to the next hop
//   of its pinned uplink ("<next hop>@<uplink>": the spine's IPv6 link-local address, which
//   neighsyncd puts in neighorch on a link-local-only port).
// - P_<uplink>_<prefix>: where main does not route a prefix through the uplink (its spine
//   lost it, or pathqd's weight there fell below pin_min_weight_ratio of the heaviest),
//   the uplink's downlinks forward it as routing says; where main routes a more specific
//   prefix inside such a one through the uplink again, they are redirected again. The
//   priority grows with the prefix length (1001 + length), so the ACL's answer is main's
//   longest match, as the kernel pins' policy tables give it. Only prefixes whose answer
//   differs from the one enclosing them get a rule: none in a healthy fabric.
// An uplink that is down, or whose next hop is not known, has no rules: its downlinks
// fall back to the routed multipath, as the kernel pins do (aclorch would keep a rule
// whose next hop is gone pointing at it: the rule goes first). So does an uplink that
// would need more than kMaxPrefixRulesPerUplink prefix rules (the ACL's room is the
// ASIC's).
//
// aclorch's rules for these rows (sonic-swss aclorch.cpp): upper-case fields, one action
// per rule, a physical port in IN_PORTS, no ':' in a table or rule name.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "twinrail/common/ip.h"
#include "twinrail/redis/client.h"
#include "uplink_pins.h"

namespace twinrail::hostrouted {

inline constexpr const char* kPinAclTable = "TWINRAIL_PIN";  // the planner's ACL_TABLE
inline constexpr int kPinRulePriority = 1000;
inline constexpr int kLocalRulePriority = 9000;
inline constexpr size_t kMaxPrefixRulesPerUplink = 1024;

// Main's prefixes, each with the pinned uplinks main routes it through (pinnedEntry's
// rule, weights included). Link-local and multicast prefixes are left out.
using AclRoutes = std::map<IpPrefix, std::set<std::string>>;

struct AclUplink {
    bool operUp = false;
    std::optional<IpAddr> nextHop;  // the peer's IPv6 link-local address on the uplink
};

struct AclPinView {
    PinState state = PinState::Fallback;
    std::string reason;    // why not pinned
    std::string redirect;  // "<next hop>@<uplink>" when pinned
};

struct AclPinPlan {
    std::map<std::string, redis::Fields> rules;  // by rule name ("PIN_Ethernet0")
    std::map<std::string, AclPinView> pins;      // by downlink
};

// `pins`: downlink -> uplink; `local`: the leaf's own subnets and addresses (any host
// bits are masked off); `routes`: main's prefixes and the uplinks they go through.
AclPinPlan aclPinPlan(const std::map<std::string, std::string>& pins,
                      const std::map<std::string, AclUplink>& uplinks,
                      const std::vector<IpPrefix>& local, const AclRoutes& routes);

// The neighbor to redirect to on an uplink, from the kernel's entries there: the lowest
// IPv6 link-local address in a usable state (not FAILED or INCOMPLETE), or nothing.
struct UplinkNeighbor {
    IpAddr ip;
    uint16_t state = 0;  // NUD_* bits
};
std::optional<IpAddr> aclNextHop(const std::vector<UplinkNeighbor>& neighbors);

// The network of `prefix` (host bits cleared), as an ACL match wants it.
IpPrefix networkOf(const IpPrefix& prefix);

}  // namespace twinrail::hostrouted
