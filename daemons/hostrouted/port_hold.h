// The host-port hold (uplink/link-state tracking, tied to routes rather than carrier): a
// leaf that has no routes to the fabric must not offer its host ports, or bonded servers
// send into it and their traffic is black-holed until BGP converges. Pure decisions on
// synthetic time; port_holder.h does the I/O (routes in, admin state and STATE_DB out).
//
// The leaf's readiness is the set of `fabric_prefixes` (the other leaves' rail subnets of
// this plane) that have a route in the main table leaving through a non-host port.
//  * At start-up, and whenever the leaf is cut off from the fabric (none of them is
//    present, and no other route leads through the fabric either), every managed port
//    is held: taken admin down. The other routes tell a leaf cut off from a plane whose
//    only other leaf is down: with one listed prefix, its loss alone says nothing. The
//    first decide() is on the first view of the routes: if the leaf already has routes
//    through the fabric but not all the prefixes, hostrouted was restarted on a running
//    leaf (a remote leaf is down) and nothing is held.
//  * Held ports are raised when all are present, or, after `maxHold`, when at least one
//    is (the missing ones are named): a remote leaf that stays down must not keep this
//    leaf's hosts off for good.
//  * While ports are not held, a missing prefix changes nothing: only the loss of every
//    one of them means this leaf is the one cut off.
//  * Only ports hostrouted took down are raised. A port already admin down when a hold
//    begins is an operator's and is left alone however recently it went down (an
//    operator shutting ports during an outage must not get them back), unless a previous
//    run recorded it as held (adopt()).
//  * No prefixes configured: the feature is off, and ports still held are raised.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "host_registry.h"
#include "twinrail/common/ip.h"
#include "twinrail/netlink/route_watch.h"

namespace twinrail::hostrouted {

struct HoldSettings {
    std::vector<IpPrefix> prefixes;  // empty: the hold is off
    std::chrono::seconds maxHold{60};
    bool operator==(const HoldSettings&) const = default;
};

enum class HoldActionKind { Lower, Raise, Record };
struct HoldAction {
    std::string port;
    HoldActionKind kind = HoldActionKind::Record;
    std::string reason;
};

// How the leaf as a whole changed, for the log: "" when it did not.
struct HoldDecision {
    std::vector<HoldAction> actions;
    std::string transition;
    bool warning = false;  // released at the bound with prefixes still missing, or isolated
};

struct HoldRecord {
    bool held = false;
    std::string reason;
    TimePoint since{};
};

class PortHold {
  public:
    PortHold(HoldSettings settings, TimePoint now);

    void setSettings(HoldSettings settings, TimePoint now);
    // The prefixes of the settings that are present now, and whether any route at all
    // leads through the fabric (FabricView; by default: whether any prefix is present).
    void setPresent(std::set<IpPrefix> present, std::optional<bool> fabricRoutes = {});
    // A managed port as the kernel reports it; portGone when it is removed or unmanaged.
    void portSeen(const std::string& name, bool adminUp, TimePoint now);
    void portGone(const std::string& name);
    // A previous run held this port (its STATE_DB row): raised when the hold ends.
    void adopt(const std::string& name);

    HoldDecision decide(TimePoint now);
    // When decide() must run again with no other input: the bound's end.
    std::optional<TimePoint> nextDeadline() const;

    bool enabled() const { return !settings_.prefixes.empty(); }
    bool holding() const { return holding_; }
    std::vector<IpPrefix> missing() const;
    const std::map<std::string, HoldRecord>& records() const { return records_; }
    const HoldSettings& settings() const { return settings_; }

  private:
    struct PortView {
        bool adminUp = false;
        bool ours = false;  // hostrouted holds it down
    };
    std::string missingText() const;

    HoldSettings settings_;
    std::set<IpPrefix> present_;
    bool fabricRoutes_ = false;
    std::map<std::string, PortView> ports_;
    std::set<std::string> adopted_;  // held by a previous run, not seen yet
    std::map<std::string, HoldRecord> records_;
    bool holding_ = false;
    bool decided_ = false;  // decide() ran: the first view was judged
    TimePoint holdSince_{};
    std::string holdReason_;
};

// Which of `wanted` the main table routes to the fabric: an exact-prefix unicast route
// with a next hop on one of `fabricPorts` (the links that are up and not host ports); and
// whether any route a routing protocol installed (not the kernel's connected ones, which
// an uplink has whenever it is up) leads there. A route through a link that went down
// counts as gone even while the kernel still lists it: the kernel drops such IPv4 routes
// without telling anyone.
struct FabricView {
    std::set<IpPrefix> present;
    bool anyRoute = false;
};
FabricView fabricView(const netlink::RouteFeed::Routes& routes, const std::vector<IpPrefix>& wanted,
                      const std::set<int>& fabricPorts);

}  // namespace twinrail::hostrouted
