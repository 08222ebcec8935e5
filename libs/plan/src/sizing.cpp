#include "twinrail/plan/sizing.h"
#include <cctype>

#include <algorithm>
#include <climits>
#include <cstdint>

namespace twinrail::plan {

const char* attachName(Attach a) {
    switch (a) {
        case Attach::Bond:
            return "bond";
        case Attach::Routed:
            return "routed";
        case Attach::EvpnMh:
            return "evpn-mh";
    }
    return "?";
}

std::optional<Attach> parseAttach(const std::string& name) {
    for (Attach a : {Attach::Bond, Attach::Routed, Attach::EvpnMh})
        if (name == attachName(a)) return a;
    return std::nullopt;
}
namespace {

constexpr int kMaxBreakout = 64;

std::string str(int v) {
    return std::to_string(v);
}

bool hasBreakout(const SwitchModel& m, int ways) {
    return std::find(m.breakouts.begin(), m.breakouts.end(), ways) != m.breakouts.end();
}

// How many ways a port of `m` splits to reach `speed`, or 0 when it cannot.
int breakoutFor(const SwitchModel& m, int speed) {
    if (speed <= 0 || m.portSpeedGbps % speed != 0) return 0;
    int ways = m.portSpeedGbps / speed;
    return hasBreakout(m, ways) ? ways : 0;
}

std::optional<std::string> checkModel(const SwitchModel& m, const std::string& what) {
    if (m.ports < 2 || m.ports > 4096) return what + " model " + m.name + ": ports must be 2..4096";
    if (m.portSpeedGbps <= 0) return what + " model " + m.name + ": port speed must be positive";
    if (!hasBreakout(m, 1)) return what + " model " + m.name + ": breakouts must include 1";
    for (int b : m.breakouts) {
        // Real ports split at most 8 ways; 64 keeps every port count (ports x breakout,
        // at most 262144) and the spine search below small and within int.
        if (b > kMaxBreakout) {
            return what + " model " + m.name + ": breakout " + str(b) + " is more than " +
                   str(kMaxBreakout) + " ways";
        }
        if (b < 1 || m.portSpeedGbps % b != 0) {
            return what + " model " + m.name + ": breakout " + str(b) + " does not divide " +
                   str(m.portSpeedGbps) + "G";
        }
    }
    return std::nullopt;
}

// The largest divisor of `n` that is at most `limit` (at least 1).
int largestDivisorAtMost(int n, int limit) {
    for (int d = std::min(n, limit); d > 1; --d)
        if (n % d == 0) return d;
    return 1;
}

}  // namespace

const std::vector<SwitchModel>& switchCatalog() {
    static const std::vector<SwitchModel> kCatalog = {
        {"CX864E-N", 64, 800, {1, 2, 4, 8}},
        {"CX732Q-N", 32, 400, {1, 2, 4}},
    };
    return kCatalog;
}

std::optional<SwitchModel> findModel(const std::string& name) {
    for (const auto& m : switchCatalog())
        if (m.name == name) return m;
    return std::nullopt;
}

int Sizing::leavesTotal() const {
    return leavesPerPlane * planes;
}
int Sizing::spinesTotal() const {
    return spinesPerPlane * planes;
}

namespace {
bool validGatewayMac(const std::string& mac) {
    if (mac.size() != 17) return false;
    for (size_t i = 0; i < mac.size(); ++i) {
        bool colon = i % 3 == 2;
        if (colon != (mac[i] == ':')) return false;
        if (!colon && !std::isxdigit(static_cast<unsigned char>(mac[i]))) return false;
    }
    int first = std::stoi(mac.substr(0, 2), nullptr, 16);
    return (first & 1) == 0;  // not a multicast/broadcast address
}
}  // namespace

std::variant<Request, SizingError> normalize(Request r) {
    auto fail = [](std::string m) { return SizingError{std::move(m)}; };
    if (r.planes != 1 && r.planes != 2) return fail("planes must be 1 or 2, not " + str(r.planes));
    if (r.gpusPerServer < 1 || r.gpusPerServer > 64)
        return fail("gpus per server must be 1..64, not " + str(r.gpusPerServer));
    if (r.gpus < 1) return fail("the GPU count must be positive");
    if (r.gpus % r.gpusPerServer != 0) {
        return fail(str(r.gpus) + " GPUs are not whole servers of " + str(r.gpusPerServer) +
                    " GPUs");
    }
    if (r.nicPorts < 1 || r.nicSpeedGbps < 1 || r.nicSpeedGbps % r.nicPorts != 0) {
        return fail("a " + str(r.nicSpeedGbps) + "G NIC does not split into " + str(r.nicPorts) +
                    " equal ports");
    }
    if (r.nicPorts % r.planes != 0) {
        return fail("a NIC's " + str(r.nicPorts) + " ports cannot be spread evenly over " +
                    str(r.planes) + " planes");
    }
    if (r.oversubscription < 1 || r.oversubscription > 16)
        return fail("oversubscription must be 1..16 (downlink:uplink N:1)");
    if (r.attach == Attach::EvpnMh && r.lb == Request::Lb::Static) {
        return fail(
            "static smart routing pins a host port's traffic by its ingress port; with "
            "evpn-mh hosts enter through the rail bridge: use --lb ecmp");
    }
    if (r.attach == Attach::EvpnMh && r.planes != 2) {
        return fail(
            "the evpn-mh attachment pairs a plane-1 leaf with a plane-2 leaf: use 2 planes");
    }
    if (r.attach != Attach::Routed && r.nicPorts != r.planes) {
        return fail(std::string("the ") + attachName(r.attach) +
                    " attachment needs one NIC port per plane (" + str(r.nicPorts) +
                    " ports over " + str(r.planes) +
                    " planes would put one NIC on two ports of a leaf, which would see its "
                    "host move between them); use --attach routed");
    }
    if (!validGatewayMac(r.gatewayMac)) {
        return fail("gateway MAC \"" + r.gatewayMac +
                    "\" is not a unicast MAC of 6 hex pairs (aa:bb:cc:dd:ee:ff)");
    }
    if (auto why = roceQosProblem(r.roce)) return fail("RoCE QoS: " + *why);
    if (r.leafModel.name.empty()) return fail("no switch model given");
    if (r.spineModel.name.empty()) r.spineModel = r.leafModel;
    if (auto e = checkModel(r.leafModel, "leaf")) return fail(*e);
    if (auto e = checkModel(r.spineModel, "spine")) return fail(*e);
    if (r.uplinkSpeedGbps == 0) {
        r.uplinkSpeedGbps = breakoutFor(r.leafModel, r.nicSpeedGbps) != 0 &&
                                    breakoutFor(r.spineModel, r.nicSpeedGbps) != 0
                                ? r.nicSpeedGbps
                                : r.leafModel.portSpeedGbps;
    }
    if (r.spinesPerPlane < 0) return fail("spines per plane cannot be negative");
    return r;
}

std::variant<Sizing, SizingError> size(const Request& r) {
    auto fail = [](std::string m) { return SizingError{std::move(m)}; };
    Sizing s;
    s.planes = r.planes;
    s.servers = r.gpus / r.gpusPerServer;
    s.rails = r.gpusPerServer;
    s.nicPortSpeedGbps = r.nicSpeedGbps / r.nicPorts;
    s.nicPortsPerPlane = r.nicPorts / r.planes;
    s.uplinkSpeedGbps = r.uplinkSpeedGbps;
    const SwitchModel& leaf = r.leafModel;
    s.leafDownBreakout = breakoutFor(leaf, s.nicPortSpeedGbps);
    if (s.leafDownBreakout == 0) {
        return fail(leaf.name + ": a " + str(leaf.portSpeedGbps) + "G port does not break out to " +
                    str(s.nicPortSpeedGbps) + "G NIC ports");
    }
    s.leafUpBreakout = breakoutFor(leaf, s.uplinkSpeedGbps);
    s.spineBreakout = breakoutFor(r.spineModel, s.uplinkSpeedGbps);
    if (s.leafUpBreakout == 0 || s.spineBreakout == 0) {
        return fail("uplink speed " + str(s.uplinkSpeedGbps) + "G is not a breakout of " +
                    (s.leafUpBreakout == 0 ? leaf.name : r.spineModel.name) + " ports");
    }
    // Oversubscription N:1 gives N/(N+1) of the leaf's ports to servers.
    const int n = r.oversubscription;
    if (leaf.ports % (n + 1) != 0) {
        return fail(leaf.name + ": " + str(leaf.ports) + " ports do not split " + str(n) +
                    ":1 between servers and spines");
    }
    s.leafUpPhysical = leaf.ports / (n + 1);
    s.leafDownPhysical = leaf.ports - s.leafUpPhysical;
    s.leafDownlinks = s.leafDownPhysical * s.leafDownBreakout;
    s.leafUplinks = s.leafUpPhysical * s.leafUpBreakout;
    s.spineRadix = r.spineModel.ports * s.spineBreakout;
    s.serversPerLeafRail = s.leafDownlinks / s.nicPortsPerPlane;
    if (s.serversPerLeafRail == 0) {
        // Else the group arithmetic below divides by zero (found by fuzz/plan_fuzz).
        return fail(leaf.name + ": " + str(s.leafDownlinks) +
                    " server ports per leaf cannot take " + str(s.nicPortsPerPlane) +
                    " ports of one NIC in a plane");
    }

    if (s.servers <= s.serversPerLeafRail) {
        // Small: every server fits one leaf per rail, so a leaf takes several whole rails.
        s.railsPerLeaf = largestDivisorAtMost(s.rails, s.serversPerLeafRail / s.servers);
        s.groups = 1;
        s.serversPerGroup = s.servers;
        s.leavesPerPlane = s.rails / s.railsPerLeaf;
    } else {
        s.railsPerLeaf = 1;
        s.serversPerGroup = s.serversPerLeafRail;
        // Rounded up without servers + serversPerGroup - 1, which overflows near INT_MAX.
        s.groups = s.servers / s.serversPerGroup + (s.servers % s.serversPerGroup != 0 ? 1 : 0);
        s.leavesPerPlane = s.groups * s.rails;
    }
    // A 2-tier plane holds at most one leaf per spine port (one link to each spine).
    int maxGroups = s.spineRadix / s.rails;
    // Up to 262144 x 262144 x 64: computed wide and capped at what an int holds.
    s.maxGpusTwoTier = static_cast<int>(
        std::min<int64_t>(int64_t{maxGroups} * s.serversPerLeafRail * s.rails, INT_MAX));
    if (s.leavesPerPlane > s.spineRadix) {
        return fail(str(r.gpus) + " GPUs need " + str(s.leavesPerPlane) +
                    " leaves per plane, but a " + r.spineModel.name + " spine has " +
                    str(s.spineRadix) + " ports at " + str(s.uplinkSpeedGbps) +
                    "G, so a 2-tier plane holds at most " + str(s.spineRadix) + " leaves (" +
                    str(s.maxGpusTwoTier) + " GPUs); this needs a third tier or a larger spine");
    }
    if (s.leavesPerPlane == 1) {
        if (r.spinesPerPlane > 0)
            return fail("a plane of one leaf has no spines; drop the spine count");
        return s;  // one leaf per plane: every NIC port is on it, no spine tier
    }
    const int u = s.leafUplinks;
    auto holds = [&s, u](int p) {
        return u % p == 0 && int64_t{s.leavesPerPlane} * (u / p) <= s.spineRadix;
    };
    if (r.spinesPerPlane > 0) {
        if (!holds(r.spinesPerPlane)) {
            return fail(str(r.spinesPerPlane) + " spines per plane do not work: each leaf's " +
                        str(u) + " uplinks must split evenly over the spines, and " +
                        str(s.leavesPerPlane) + " leaves must fit " + str(s.spineRadix) +
                        " spine ports");
        }
        s.spinesPerPlane = r.spinesPerPlane;
    } else {
        for (int p = 1; p <= u; ++p) {
            if (holds(p)) {
                s.spinesPerPlane = p;
                break;
            }
        }
    }
    s.linksPerLeafSpine = u / s.spinesPerPlane;
    s.spinePortsUsed = s.leavesPerPlane * s.linksPerLeafSpine;
    return s;
}

}  // namespace twinrail::plan
