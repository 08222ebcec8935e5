// Forwarding as the switches do it: which links each QP's flow crosses. Pure; the seed
// decides the QPs' UDP source ports and (Linux) each switch's hash seed, so a seed
// reproduces the same paths.
//   ecmp    per-switch hash over the live members (BGP removed the dead ones)
//   wcmp    the same hash over members weighted by pathqd's levels (1..32 of the link's
//           speed, the worst of the uplink and the spine's links to the destination leaf)
//   static  the planner's pins: a flow entering a host port leaves by its pinned uplink
//           while that uplink reaches the destination, else ECMP; spines hash
//   ars     flowlet ARS, approximated: each flow goes to the least loaded member, then every
//           flow is re-placed once on what the others left (its next flowlet)
//   spray   packet spraying: every flow split evenly over all live members
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "twinrail/sim/fabric.h"
#include "twinrail/sim/traffic.h"

namespace twinrail::sim {

enum class Mode { Ecmp, Wcmp, Static, Ars, Spray };
const char* modeName(Mode m);
std::optional<Mode> parseMode(const std::string& name);

// Threshold: Linux's hash-threshold (equal ranges of the hash space), each switch its own
// random hash seed. Modulo: an ASIC's hash modulo the members, one seed on every switch
// (the default of many ASICs), which polarises a leaf's and a spine's choices.
enum class HashLayout { Threshold, Modulo };

inline constexpr int kPathqdLevels = 32;

struct RoutingOptions {
    Mode mode = Mode::Ecmp;
    HashLayout layout = HashLayout::Threshold;
    int qps = 2;  // per transfer (NIC pair), spread over the planes both NICs reach
    uint64_t seed = 1;
};

struct Hop {
    int link = -1;
    double fraction = 1;
};

struct Flow {
    int transfer = -1;
    std::array<int, 4> links{-1, -1, -1, -1};  // whole-flow links, -1 unused
    int bundle = -1;                           // spray: a shared set of split links
    double demandGbps = 0;                     // its share of the sending NIC port
};

struct RoutedTraffic {
    std::vector<Flow> flows;
    std::vector<std::vector<Hop>> bundles;
    std::vector<int> flowsPerTransfer;
    int unreachableTransfers = 0;  // no plane where both NICs' ports reach each other
};

RoutedTraffic route(const Fabric& fabric, const std::vector<Transfer>& transfers,
                    const RoutingOptions& options);

}  // namespace twinrail::sim
