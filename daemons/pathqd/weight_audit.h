// Checks the weights the kernel forwards with against what the link-bandwidth values BGP
// received imply (FRRouting/frr#23295: kernel nexthop groups can diverge from the RIB
// while BGP looks healthy). FRR 8.4 gives each multipath the weight
// floor(bandwidth x 100 / total) (at least 1), and plain ECMP when any path lacks the
// community or the total is 0. Routes whose kernel weights are identical form one group,
// so a route that diverged lands in a group of its own and one BGP lookup per group
// checks them all. Pure: JSON and weights in, verdicts out.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace twinrail::pathqd {

// One multipath of `show bgp ipv4|ipv6 unicast <prefix> json`.
struct BgpPath {
    std::string interface;                 // the BGP unnumbered session's port
    std::optional<double> bytesPerSecond;  // the LB extended community, if any
};
// The paths FRR uses for forwarding (multipath, or the best path alone). Never throws:
// JSON of another shape is an error.
std::optional<std::vector<BgpPath>> parseBgpMultipaths(const std::string& json, std::string& error);

using PortWeights = std::map<std::string, unsigned>;  // ifname -> weight
PortWeights impliedWeights(const std::vector<BgpPath>& paths);

// Whether `kernel` forwards in the proportions `implied` asks for: each port's share
// within one percentage point (FRR's 1% steps), and the same set of ports.
bool weightsAgree(const PortWeights& implied, const PortWeights& kernel);
std::string describeWeights(const PortWeights& w);  // "swp1=25 swp2=75"

}  // namespace twinrail::pathqd
