#include "twinrail/lab/reachability.h"

#include <map>
#include <set>
#include <sstream>

#include "route_text.h"
#include "twinrail/lab/plan_lab.h"

namespace twinrail::lab {
namespace {

// Destinations a switch has a route to (host routes and BGP routes, not the discard
// routes that originate its rail subnets).
// A SONiC-layout leaf keeps its own hosts in hostrouted's table only (no `ip import-table`:
// they reach BGP as `network` lines), so that table counts too.
std::set<std::string> routedHosts(const std::string& lab, const std::string& node) {
    std::set<std::string> out;
    std::string routes = inNodeRun(lab, node, {"ip", "route", "show"}).out;
    if (!labSonicRecord(lab).is_null())
        routes += inNodeRun(lab, node, {"ip", "route", "show", "table", "10"}).out;
    std::istringstream in(routes);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == ' ' || line[0] == '\t') continue;
        if (line.find("blackhole") != std::string::npos ||
            line.find("unreachable") != std::string::npos)
            continue;
        out.insert(line.substr(0, line.find(' ')));
    }
    return out;
}

std::vector<NicReach> fromLeaves(const std::string& lab, const plan::Plan& p) {
    std::map<std::string, std::set<std::string>> leafRoutes;
    for (const auto& sw : p.switches)
        if (!sw.spine) leafRoutes[sw.name] = routedHosts(lab, sw.name);
    std::vector<NicReach> out;
    for (const auto& a : p.servers) {
        for (const auto& an : a.nics) {
            NicReach r{PlanLab::nicNode(a, an), an.address};
            for (const auto& b : p.servers) {
                for (const auto& bn : b.nics) {
                    if (&an == &bn) continue;
                    size_t planes = 0;
                    for (const auto& ap : an.ports) {
                        for (const auto& bp : bn.ports) {
                            if (ap.plane != bp.plane) continue;
                            planes += leafRoutes[ap.leaf].count(bn.address) > 0 &&
                                      leafRoutes[bp.leaf].count(an.address) > 0;
                        }
                    }
                    (planes == an.ports.size() ? r.allPlanes
                     : planes > 0              ? r.somePlanes
                                               : r.none)++;
                }
            }
            out.push_back(r);
        }
    }
    return out;
}

std::vector<NicReach> fromNics(const std::string& lab, const plan::Plan& p) {
    std::vector<NicReach> out;
    for (const auto& a : p.servers) {
        for (const auto& an : a.nics) {
            NicReach r{PlanLab::nicNode(a, an), an.address};
            std::vector<std::string> ports;
            for (const auto& np : an.ports) ports.push_back(np.name);
            auto routes = inNodeRun(lab, r.node, {"ip", "route", "show", "proto", "bgp"}).out;
            for (const auto& b : p.servers) {
                for (const auto& bn : b.nics) {
                    if (&an == &bn) continue;
                    size_t used = portsUsed(routes, bn.address, ports).size();
                    (used == ports.size() ? r.allPlanes : used > 0 ? r.somePlanes : r.none)++;
                }
            }
            out.push_back(r);
        }
    }
    return out;
}

}  // namespace

std::vector<NicReach> nicReachability(const std::string& lab, const plan::Plan& p) {
    return p.request.attach == plan::Attach::Routed ? fromNics(lab, p) : fromLeaves(lab, p);
}

bool everyNicReachesEveryNicThroughEveryPlane(const std::vector<NicReach>& reach) {
    for (const auto& r : reach)
        if (r.somePlanes > 0 || r.none > 0) return false;
    return !reach.empty();
}

}  // namespace twinrail::lab
