// Traffic patterns as transfers between NICs (one collective step: every NIC sends
// `bytesPerNic` in all). Pure.
//   permutation  every NIC sends to one NIC behind another leaf, each NIC receives once
//   allreduce    ring all-reduce within each rail (NICs of one rail, in server order)
//   alltoall     MoE all-to-all, rail-crossing, within expert groups of kExpertGroupServers
//                servers spread over the fabric (a full 16k all-to-all is 268M flows);
//                traffic inside a server goes over NVLink and is left out
//   mix          allreduce and alltoall at the same time, half the bytes each
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "twinrail/sim/fabric.h"

namespace twinrail::sim {

inline constexpr int kExpertGroupServers = 4;

struct Transfer {
    int srcNic = -1;
    int dstNic = -1;
    double bytes = 0;
};

enum class Pattern { Permutation, AllReduce, AllToAll, Mix };
const char* patternName(Pattern p);
std::optional<Pattern> parsePattern(const std::string& name);

// Errors say why the fabric cannot carry the pattern (one leaf: no permutation across leaves).
std::variant<std::vector<Transfer>, std::string> makeTraffic(const Fabric& fabric, Pattern pattern,
                                                             double bytesPerNic);

}  // namespace twinrail::sim
