// Failures as --fail KIND:WHAT[:FRACTION] gives them, and their effect on a fabric.
//   link:SWITCH/PORT          the cable at that switch port, both directions, down
//   degrade:SWITCH/PORT:F     that port's egress at F (0 < F < 1) of its speed (a shaper)
//   spine:NAME, leaf:NAME     the switch down (every link of it)
//   nicport:SRV/NIC/PORT      one NIC port down (a dual-plane NIC keeps the other)
// PORT may be a port name (swp33s0) or uplinkN, the leaf's N-th uplink in port order.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "twinrail/sim/fabric.h"

namespace twinrail::sim {

struct Failure {
    enum class Kind { Link, Degrade, Spine, Leaf, NicPort } kind = Kind::Link;
    std::string what;
    double fraction = 0;  // degrade only
};

// Syntax only; errors quote the spec and say what is wrong.
std::variant<Failure, std::string> parseFailure(const std::string& spec);
// Resolves the names against the fabric and applies; errors name what is not in the plan.
std::variant<std::monostate, std::string> applyFailure(Fabric& fabric, const Failure& failure);

}  // namespace twinrail::sim
