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
// An uplink that is down, or whose next hop is not known, has no PIN rule: its downlinks
// fall back to the routed multipath, as the kernel pins do (aclorch would keep a rule
// whose next hop is gone pointing at it: the rule goes first). Unlike the kernel pins, a
// destination the pinned spine lost is not un-pinned prefix by prefix: an ACL matches no
// routes (docs/static-routing.md).
//
// aclorch's rules for these rows (sonic-swss aclorch.cpp): upper-case fields, one action
// per rule, a physical port in IN_PORTS, no ':' in a table or rule name.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "twinrail/common/ip.h"
#include "twinrail/redis/client.h"
#include "uplink_pins.h"

namespace twinrail::hostrouted {

inline constexpr const char* kPinAclTable = "TWINRAIL_PIN";  // the planner's ACL_TABLE
inline constexpr int kPinRulePriority = 1000;
inline constexpr int kLocalRulePriority = 9000;

struct AclUplink {
    bool operUp = false;
    std::optional<IpAddr> nextHop;  // the peer's IPv6 link-local address on the uplink
};

struct AclPinView {
    PinState state = PinState::Fallback;
    std::string reason;  // why not pinned
    std::string redirect;  // "<next hop>@<uplink>" when pinned
};

struct AclPinPlan {
    std::map<std::string, redis::Fields> rules;  // by rule name ("PIN_Ethernet0")
    std::map<std::string, AclPinView> pins;      // by downlink
};

// `pins`: downlink -> uplink; `local`: the leaf's own subnets and addresses (any host
// bits are masked off).
AclPinPlan aclPinPlan(const std::map<std::string, std::string>& pins,
                      const std::map<std::string, AclUplink>& uplinks,
                      const std::vector<IpPrefix>& local);

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
