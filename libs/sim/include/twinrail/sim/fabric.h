// The flow model's view of a plan: switches, NIC ports and directed links with their real
// capacities (each direction of a cable is a link of its own, as each direction of a
// full-duplex port is a separate queue). Pure: built from a plan, no I/O.
#pragma once

#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "twinrail/plan/plan.h"

namespace twinrail::sim {

struct Link {
    int from = -1;  // switch id, or -1 for a NIC port
    int to = -1;
    double nominalGbps = 0;
    double capacityGbps = 0;  // after degradation
    bool up = true;
    bool leafUplink = false;  // leaf -> spine: what the uplink figures count
};

struct SwitchNode {
    std::string name;
    bool spine = false;
    int plane = 1;
    bool up = true;
    std::vector<int> uplinks;  // leaf: links leaf -> spine, in port order
    std::vector<int> spineOf;  // leaf: the spine at the end of uplinks[i]
    // spine: for each switch id, the links spine -> that leaf (parallel links)
    std::vector<std::vector<int>> downTo;
};

struct NicPortNode {
    int nic = -1;
    int plane = 1;
    int leaf = -1;          // switch id
    int toLeaf = -1;        // link NIC -> leaf
    int fromLeaf = -1;      // link leaf -> NIC
    int pinnedUplink = -1;  // link id of the leaf uplink static smart routing pins it to
    double gbps = 0;
    bool up = true;
};

struct NicNode {
    std::string name;  // srv<n>/nic<rail>
    int server = 0;    // 0-based, plan order
    int rail = 1;
    double lineGbps = 0;  // all its ports, as planned (the ideal's rate)
    std::vector<int> ports;
};

struct Fabric {
    int planes = 1;
    std::vector<SwitchNode> switches;
    std::vector<NicPortNode> nicPorts;
    std::vector<NicNode> nics;
    std::vector<Link> links;
    int servers = 0;
    // "switch/port" -> the link leaving that port (its egress) and the one entering it
    std::unordered_map<std::string, std::pair<int, int>> portLinks;
    std::unordered_map<std::string, int> switchIds;
    std::unordered_map<std::string, int> nicPortIds;  // "srv1/nic1/port1"
};

// The same plan with `planes` planes and the same NICs (one port per plane at an even share
// of the NIC's speed), as the planner would size it; the plan itself when it has them.
// Errors are the planner's (a single plane of 16k GPUs needs a third tier).
std::variant<plan::Plan, std::string> withPlanes(const plan::Plan& plan, int planes);

// Errors name the switch and port that do not add up (a peer that is not in the plan...).
std::variant<Fabric, std::string> buildFabric(const plan::Plan& plan);

}  // namespace twinrail::sim
