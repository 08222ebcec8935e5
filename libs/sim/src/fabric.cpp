#include "twinrail/sim/fabric.h"

#include <optional>

namespace twinrail::sim {
namespace {

struct Builder {
    const plan::Plan& plan;
    Fabric f;
    // per leaf: port name -> (egress link, ingress link) of its uplinks
    std::unordered_map<std::string, int> uplinkByPort;

    int addLink(int from, int to, double gbps, bool leafUplink) {
        f.links.push_back({from, to, gbps, gbps, true, leafUplink});
        return static_cast<int>(f.links.size()) - 1;
    }

    std::string build() {
        f.planes = plan.request.planes;
        for (const auto& sw : plan.switches) {
            f.switchIds[sw.name] = static_cast<int>(f.switches.size());
            f.switches.push_back({sw.name, sw.spine, sw.plane, true, {}, {}, {}});
        }
        for (auto& node : f.switches)
            if (node.spine) node.downTo.resize(f.switches.size());
        for (const auto& sw : plan.switches) {
            if (sw.spine) continue;
            if (auto err = addLeafUplinks(sw)) return *err;
        }
        for (const auto& sw : plan.switches) {
            if (!sw.spine) continue;
            if (auto err = mapSpinePorts(sw)) return *err;
        }
        return addNics();
    }

    std::optional<std::string> addLeafUplinks(const plan::Switch& sw) {
        int leaf = f.switchIds.at(sw.name);
        for (const auto& port : sw.ports) {
            if (port.role != plan::PortRole::Uplink) continue;
            auto spine = f.switchIds.find(port.peer);
            if (spine == f.switchIds.end() || !f.switches[spine->second].spine) {
                return sw.name + " port " + port.name + ": peer " + port.peer +
                       " is not a spine of the plan";
            }
            double gbps = port.speedGbps;
            int up = addLink(leaf, spine->second, gbps, true);
            int down = addLink(spine->second, leaf, gbps, false);
            f.switches[leaf].uplinks.push_back(up);
            f.switches[leaf].spineOf.push_back(spine->second);
            f.switches[spine->second].downTo[static_cast<size_t>(leaf)].push_back(down);
            f.portLinks[sw.name + "/" + port.name] = {up, down};
            uplinkByPort[sw.name + "/" + port.name] = up;
        }
        return std::nullopt;
    }

    std::optional<std::string> mapSpinePorts(const plan::Switch& sw) {
        for (const auto& port : sw.ports) {
            if (port.role != plan::PortRole::Downlink) continue;
            auto leafSide = f.portLinks.find(port.peer + "/" + port.peerPort);
            if (leafSide == f.portLinks.end()) {
                return sw.name + " port " + port.name + ": peer " + port.peer + " " +
                       port.peerPort + " is not an uplink of the plan";
            }
            f.portLinks[sw.name + "/" + port.name] = {leafSide->second.second,
                                                      leafSide->second.first};
        }
        return std::nullopt;
    }

    std::string addNics() {
        for (size_t s = 0; s < plan.servers.size(); ++s) {
            const auto& srv = plan.servers[s];
            for (const auto& nic : srv.nics) {
                NicNode node{srv.name + "/" + nic.name, static_cast<int>(s), nic.rail, 0, {}};
                int nicId = static_cast<int>(f.nics.size());
                for (const auto& np : nic.ports) {
                    auto leaf = f.switchIds.find(np.leaf);
                    if (leaf == f.switchIds.end() || f.switches[leaf->second].spine) {
                        return node.name + " " + np.name + ": leaf " + np.leaf +
                               " is not a leaf of the plan";
                    }
                    const plan::Switch* sw = plan.findSwitch(np.leaf);
                    const plan::SwitchPort* hostPort = nullptr;
                    for (const auto& p : sw->ports)
                        if (p.name == np.leafPort) hostPort = &p;
                    if (hostPort == nullptr || hostPort->role != plan::PortRole::Host) {
                        return node.name + " " + np.name + ": " + np.leaf + " has no host port " +
                               np.leafPort;
                    }
                    double gbps = hostPort->speedGbps;
                    NicPortNode port{nicId, np.plane, leaf->second, -1, -1, -1, gbps, true};
                    port.toLeaf = addLink(-1, leaf->second, gbps, false);
                    port.fromLeaf = addLink(leaf->second, -1, gbps, false);
                    auto pin = uplinkByPort.find(np.leaf + "/" + hostPort->pinnedUplink);
                    if (pin != uplinkByPort.end()) port.pinnedUplink = pin->second;
                    f.portLinks[np.leaf + "/" + np.leafPort] = {port.fromLeaf, port.toLeaf};
                    f.nicPortIds[node.name + "/" + np.name] = static_cast<int>(f.nicPorts.size());
                    node.ports.push_back(static_cast<int>(f.nicPorts.size()));
                    node.lineGbps += gbps;
                    f.nicPorts.push_back(port);
                }
                f.nics.push_back(std::move(node));
            }
        }
        f.servers = static_cast<int>(plan.servers.size());
        return "";
    }
};

}  // namespace

std::variant<plan::Plan, std::string> withPlanes(const plan::Plan& plan, int planes) {
    if (plan.request.planes == planes) return plan;
    plan::Request r = plan.request;
    r.planes = planes;
    r.nicPorts = planes;
    r.spinesPerPlane = 0;
    auto rebuilt = plan::buildPlan(r);
    if (auto* e = std::get_if<plan::SizingError>(&rebuilt))
        return "the same NICs in " + std::to_string(planes) + " plane(s): " + e->message;
    return std::get<plan::Plan>(std::move(rebuilt));
}

std::variant<Fabric, std::string> buildFabric(const plan::Plan& plan) {
    Builder b{plan, {}, {}};
    std::string err = b.build();
    if (!err.empty()) return err;
    if (b.f.nics.empty()) return std::string("the plan has no server NICs");
    return std::move(b.f);
}

}  // namespace twinrail::sim
