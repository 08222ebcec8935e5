// buildPlan(): names, cabling and addresses from a sizing. Every number here follows from
// the sizing, so the same request always gives the same plan, byte for byte.
#include <cstdint>
#include <string>

#include "twinrail/plan/plan.h"

namespace twinrail::plan {
namespace {

constexpr uint32_t kLoopbackBase = (10U << 24) | (254U << 16);  // 10.254.0.0/16
constexpr uint32_t kPlaneLoopbacks = 16384;                     // a /18 per plane
constexpr uint32_t kSpineLoopbackOffset = 8192;
constexpr uint32_t kRailBase = (10U << 24) | (128U << 16);  // 10.128.0.0/9
constexpr uint32_t kRailSpace = 1U << 23;
constexpr uint32_t kAsnBase = 4200000000U;  // private 4-byte ASNs (RFC 6996)
constexpr uint32_t kAsnPerPlane = 100000;
constexpr uint32_t kHostAsn = 4200999999U;

std::string ipv4(uint32_t a) {
    return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." +
           std::to_string((a >> 8) & 255) + "." + std::to_string(a & 255);
}

std::string portName(int physical, int lane, int breakout) {
    std::string n = "swp" + std::to_string(physical);
    return breakout > 1 ? n + "s" + std::to_string(lane) : n;
}

std::string leafName(int plane, int n) {
    return "p" + std::to_string(plane) + "-leaf" + std::to_string(n);
}
std::string spineName(int plane, int n) {
    return "p" + std::to_string(plane) + "-spine" + std::to_string(n);
}

int subnetBits(int serversPerGroup) {
    int bits = 8;                                      // at least a /24, easy to read
    while ((1 << bits) < serversPerGroup + 3) ++bits;  // network, gateway, broadcast
    return bits;
}

class Builder {
  public:
    Builder(const Request& r, const Sizing& s) : r_(r), s_(s) {}

    std::variant<Plan, SizingError> build() {
        plan_.request = r_;
        plan_.sizing = s_;
        plan_.hostAsn = r_.hostBgp() ? kHostAsn : 0;
        if (auto e = checkAddressSpace()) return *e;
        for (int p = 1; p <= s_.planes; ++p) {
            for (int l = 0; l < s_.leavesPerPlane; ++l) plan_.switches.push_back(leaf(p, l));
            for (int k = 0; k < s_.spinesPerPlane; ++k) plan_.switches.push_back(spine(p, k));
        }
        addSubnets();
        for (int srv = 0; srv < s_.servers; ++srv) plan_.servers.push_back(server(srv));
        addUplinks();
        assignUplinkPins(plan_);
        return std::move(plan_);
    }

  private:
    std::optional<SizingError> checkAddressSpace() const {
        if (static_cast<uint32_t>(s_.leavesPerPlane) >= kSpineLoopbackOffset ||
            static_cast<uint32_t>(s_.spinesPerPlane) >= kPlaneLoopbacks - kSpineLoopbackOffset)
            return SizingError{"addressing: more than 8191 leaves or spines per plane"};
        uint64_t need = static_cast<uint64_t>(s_.groups) * s_.rails
                        << subnetBits(s_.serversPerGroup);
        if (need > kRailSpace) {
            return SizingError{"addressing: " + std::to_string(s_.groups * s_.rails) +
                               " rail subnets do not fit 10.128.0.0/9"};
        }
        return std::nullopt;
    }

    Switch leaf(int plane, int l) const {
        Switch sw;
        sw.name = leafName(plane, l + 1);
        sw.plane = plane;
        sw.index = l + 1;
        sw.asn =
            kAsnBase + static_cast<uint32_t>(plane) * kAsnPerPlane + static_cast<uint32_t>(l + 1);
        sw.loopback = ipv4(kLoopbackBase + static_cast<uint32_t>(plane - 1) * kPlaneLoopbacks +
                           static_cast<uint32_t>(l + 1));
        const int leavesPerGroup = s_.rails / s_.railsPerLeaf;
        sw.group = l / leavesPerGroup + 1;
        int firstRail = (l % leavesPerGroup) * s_.railsPerLeaf + 1;
        for (int k = 0; k < s_.railsPerLeaf; ++k) sw.rails.push_back(firstRail + k);
        return sw;
    }

    Switch spine(int plane, int k) const {
        Switch sw;
        sw.name = spineName(plane, k + 1);
        sw.spine = true;
        sw.plane = plane;
        sw.index = k + 1;
        sw.asn =
            kAsnBase + static_cast<uint32_t>(plane) * kAsnPerPlane;  // one AS per plane's spines
        sw.loopback = ipv4(kLoopbackBase + static_cast<uint32_t>(plane - 1) * kPlaneLoopbacks +
                           kSpineLoopbackOffset + static_cast<uint32_t>(k + 1));
        return sw;
    }

    Switch& switchAt(int plane, bool isSpine, int index0) {
        const int perPlane = s_.leavesPerPlane + s_.spinesPerPlane;
        const int at = (plane - 1) * perPlane + (isSpine ? s_.leavesPerPlane + index0 : index0);
        return plan_.switches[static_cast<size_t>(at)];
    }

    void addSubnets() {
        int bits = subnetBits(s_.serversPerGroup);
        for (int g = 1; g <= s_.groups; ++g) {
            for (int rail = 1; rail <= s_.rails; ++rail) {
                uint32_t idx = static_cast<uint32_t>((g - 1) * s_.rails + rail - 1);
                uint32_t base = kRailBase + (idx << bits);
                plan_.subnets.push_back(
                    {g, rail, ipv4(base) + "/" + std::to_string(32 - bits), ipv4(base + 1)});
            }
        }
    }

    Server server(int srv) {
        Server out;
        out.name = "srv" + std::to_string(srv + 1);
        const int g = srv / s_.serversPerGroup;
        const int inGroup = srv % s_.serversPerGroup;
        out.group = g + 1;
        const int bits = subnetBits(s_.serversPerGroup);
        const int leavesPerGroup = s_.rails / s_.railsPerLeaf;
        for (int rail = 0; rail < s_.rails; ++rail) {
            Nic nic;
            nic.name = "nic" + std::to_string(rail + 1);
            nic.rail = rail + 1;
            uint32_t idx = static_cast<uint32_t>(g * s_.rails + rail);
            nic.address = ipv4(kRailBase + (idx << bits) + 2 + static_cast<uint32_t>(inGroup));
            const int leaf0 = g * leavesPerGroup + rail / s_.railsPerLeaf;
            const int slot = rail % s_.railsPerLeaf;
            for (int k = 0; k < r_.nicPorts; ++k) {
                const int plane = k % s_.planes + 1;
                const int j = k / s_.planes;
                const int portIdx = (slot * s_.serversPerGroup + inGroup) * s_.nicPortsPerPlane + j;
                NicPort np;
                np.name = "port" + std::to_string(k + 1);
                np.plane = plane;
                Switch& lf = switchAt(plane, false, leaf0);
                np.leaf = lf.name;
                np.leafPort = portName(portIdx / s_.leafDownBreakout + 1,
                                       portIdx % s_.leafDownBreakout, s_.leafDownBreakout);
                lf.ports.push_back({np.leafPort, s_.nicPortSpeedGbps, PortRole::Host,
                                    out.name + "/" + nic.name, np.name, ""});
                nic.ports.push_back(np);
            }
            out.nics.push_back(std::move(nic));
        }
        return out;
    }

    void addUplinks() {
        if (s_.spinesPerPlane == 0) return;
        for (int p = 1; p <= s_.planes; ++p) {
            for (int l = 0; l < s_.leavesPerPlane; ++l) {
                for (int u = 0; u < s_.leafUplinks; ++u) {
                    const int sp = u % s_.spinesPerPlane;
                    const int link = u / s_.spinesPerPlane;
                    const int spineIdx = l * s_.linksPerLeafSpine + link;
                    Switch& lf = switchAt(p, false, l);
                    Switch& spn = switchAt(p, true, sp);
                    std::string lp = portName(s_.leafDownPhysical + u / s_.leafUpBreakout + 1,
                                              u % s_.leafUpBreakout, s_.leafUpBreakout);
                    std::string spp = portName(spineIdx / s_.spineBreakout + 1,
                                               spineIdx % s_.spineBreakout, s_.spineBreakout);
                    lf.ports.push_back(
                        {lp, s_.uplinkSpeedGbps, PortRole::Uplink, spn.name, spp, ""});
                    spn.ports.push_back(
                        {spp, s_.uplinkSpeedGbps, PortRole::Downlink, lf.name, lp, ""});
                }
            }
        }
    }

    const Request& r_;
    const Sizing& s_;
    Plan plan_;
};

}  // namespace

const char* roleName(PortRole role) {
    switch (role) {
        case PortRole::Host:
            return "host";
        case PortRole::Uplink:
            return "uplink";
        case PortRole::Downlink:
            return "downlink";
    }
    return "host";
}

const Switch* Plan::findSwitch(const std::string& name) const {
    for (const auto& s : switches)
        if (s.name == name) return &s;
    return nullptr;
}

const RailSubnet* Plan::subnetFor(int group, int rail) const {
    for (const auto& s : subnets)
        if (s.group == group && s.rail == rail) return &s;
    return nullptr;
}

const char* lbName(Request::Lb lb) {
    switch (lb) {
        case Request::Lb::Static:
            return "static";
        case Request::Lb::Ars:
            return "ars";
        case Request::Lb::ArsGlobal:
            return "ars-global";
        case Request::Lb::Spray:
            return "spray";
        case Request::Lb::Ecmp:
            break;
    }
    return "ecmp";
}

std::optional<Request::Lb> parseLb(const std::string& name) {
    for (auto lb : {Request::Lb::Ecmp, Request::Lb::Static, Request::Lb::Ars,
                    Request::Lb::ArsGlobal, Request::Lb::Spray})
        if (name == lbName(lb)) return lb;
    return std::nullopt;
}

void assignUplinkPins(Plan& plan) {
    for (auto& sw : plan.switches) {
        if (sw.spine) continue;
        std::vector<SwitchPort*> down;
        std::vector<const SwitchPort*> up;
        for (auto& p : sw.ports) {
            if (p.role == PortRole::Host) down.push_back(&p);
            if (p.role == PortRole::Uplink) up.push_back(&p);
        }
        for (size_t i = 0; i < down.size(); ++i)
            down[i]->pinnedUplink = up.empty() ? "" : up[i * up.size() / down.size()]->name;
    }
}

std::variant<Plan, SizingError> buildPlan(const Request& request) {
    auto norm = normalize(request);
    if (auto* e = std::get_if<SizingError>(&norm)) return *e;
    const Request& r = std::get<Request>(norm);
    auto sized = size(r);
    if (auto* e = std::get_if<SizingError>(&sized)) return *e;
    return Builder(r, std::get<Sizing>(sized)).build();
}

}  // namespace twinrail::plan
