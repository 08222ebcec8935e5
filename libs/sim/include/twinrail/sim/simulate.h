// One job on one fabric: route, share the links max-min fairly, and measure; then the same
// over seeds. Pure.
#pragma once

#include <vector>

#include "twinrail/sim/fabric.h"
#include "twinrail/sim/routing.h"
#include "twinrail/sim/traffic.h"

namespace twinrail::sim {

// How a NIC's bytes go over its QPs. EvenPerQp: NCCL's, each QP a fixed share of its
// transfer, so the slowest QP ends it. Pooled: work-conserving, a NIC ends when its flows
// together have carried all it sends (iperf3 -P -n, what the lab measured; and a NIC whose
// all-to-all QPs end hands their share to its all-reduce QPs).
enum class ByteSplit { EvenPerQp, Pooled };

struct SeedResult {
    double jobSeconds = 0;    // until the last QP (or NIC, pooled) has carried its bytes
    double idealSeconds = 0;  // every NIC at its line rate (sent and received)
    double completionOverIdeal = 0;
    double oversubscribedUplinkShare = 0;  // live leaf uplinks asked for more than they carry
    double worstUplinkFlows = 0;           // the most flows on one leaf uplink
    double maxOverMeanLinkLoad = 0;        // bytes on leaf uplinks, leaves that send up
    double totalBytes = 0;
    int unreachableTransfers = 0;
};

// rounds: how many times the links are shared again as the first flows (or NICs) end; 1
// keeps the first allocation's rates to the end (an upper bound on the job's time).
inline constexpr int kDefaultRounds = 1;
SeedResult simulateSeed(const Fabric& fabric, const std::vector<Transfer>& transfers,
                        const RoutingOptions& options, ByteSplit split,
                        int rounds = kDefaultRounds);

struct Stat {
    double median = 0;
    double p95 = 0;  // nearest rank
};
Stat statOf(std::vector<double> values);

struct Summary {
    int seeds = 0;
    Stat completionOverIdeal, oversubscribedUplinkShare, worstUplinkFlows, maxOverMeanLinkLoad;
    int unreachableTransfers = 0;  // the most over the seeds
};

// Seeds 1..seeds, each through simulateSeed with options.seed set to it.
Summary simulateSeeds(const Fabric& fabric, const std::vector<Transfer>& transfers,
                      RoutingOptions options, ByteSplit split, int seeds,
                      int rounds = kDefaultRounds);

}  // namespace twinrail::sim
