// What SONiC does to FRR's multipath weights on their way to the ASIC, per release, so the
// weight audit compares like with like (docs/pathqd.md, "pathqd on SONiC"). Pure.
//
// FRR's weight per path (from the link-bandwidth values BGP received):
//  * FRR 8.x (SONiC up to 202405): floor(bw x 100 / total), at least 1;
//  * FRR 9.1 and later (202411 on): the largest path gets 255, the others in proportion.
// fpmsyncd's ROUTE_TABLE `weight` (sonic-swss fpmsyncd/routesync.cpp, getNextHopWt; it
// reads libnl's weight, which is the kernel's rtnh_hops, i.e. FRR's weight - 1):
//  * before 202111: no weight field: the ASIC forwards ECMP;
//  * 202111: rtnh_hops + 1 (FRR's weight); a path of FRR weight 1 drops the field (ECMP);
//  * 202205 to 202311: rtnh_hops (FRR's weight - 1); a path of FRR weight 1 drops the
//    field (ECMP);
//  * 202405 on (backported, sonic-swss #3636): rtnh_hops, 0 read as 1.
// NEXTHOP_GROUP_TABLE (DEVICE_METADATA nexthop_group enabled) carries rtnh_hops + 1:
// FRR's weight, exactly. orchagent passes either to SAI_NEXT_HOP_GROUP_MEMBER_ATTR_WEIGHT
// unchanged.
#pragma once

#include <string>
#include <vector>

#include "weight_audit.h"

namespace twinrail::pathqd {

enum class FrrScale { Percent, Max255 };
FrrScale frrScaleOf(int sonicRelease);
// FRR's weights for `paths` (plain ECMP, all 1, when a path has no bandwidth or all are 0).
PortWeights frrWeights(const std::vector<BgpPath>& paths, FrrScale scale);

// How a route's forwarded weights follow from FRR's.
enum class WeightRule {
    Exact,            // the kernel, NEXTHOP_GROUP_TABLE
    Ecmp,             // before 202111: weights never reach the ASIC
    ExactOrEcmp,      // 202111
    MinusOneOrEcmp,   // 202205-202311
    MinusOneFloorOne  // 202405 on
};
WeightRule routeTableRule(int sonicRelease);
const char* ruleName(WeightRule rule);
// The weights a route carries after `rule`, from FRR's.
PortWeights expectedWeights(const PortWeights& frr, WeightRule rule);
// weightsAgree (1 percentage point per port) after the rule: the variant the SONiC audit
// uses, so SONiC's own rounding is never reported as a divergence.
bool weightsAgreeAfter(const PortWeights& frr, const PortWeights& forwarded, WeightRule rule);

}  // namespace twinrail::pathqd
