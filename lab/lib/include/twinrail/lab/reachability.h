// Which other NICs each NIC of a lab reaches, through every plane, some, or none:
//   routed  from the NIC's own routes: which of its ports the route to the peer leaves
//           through (one per plane);
//   bond    from the leaves, since a bonded host has no routes of its own: in plane p,
//           the NIC's plane-p leaf has a route to the peer and the peer's has one back.
#pragma once

#include <string>
#include <vector>

#include "twinrail/plan/plan.h"

namespace twinrail::lab {

struct NicReach {
    std::string node;
    std::string address;
    int allPlanes = 0, somePlanes = 0, none = 0;
};

std::vector<NicReach> nicReachability(const std::string& labName, const plan::Plan& plan);
bool everyNicReachesEveryNicThroughEveryPlane(const std::vector<NicReach>& reach);

}  // namespace twinrail::lab
