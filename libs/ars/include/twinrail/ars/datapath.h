// The software ARS data path's narrow interface (issue 22): what arsd drives and what a unit
// test fakes. The real one is a tc/eBPF program on the ingress of a switch's ports
// (bpf_datapath.h); its semantics are SAI's ARS: a flow is hashed into a table of max_flows
// entries, each remembering its egress and when it was last seen; it moves only after
// idle_time of silence (flowlet) or on every packet; the egress is the best quality band
// (or a random one, by weight) among the route's next hops.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "twinrail/common/ip.h"

namespace twinrail::ars {

// SAI's assign modes; PacketRandom is SONiC's SWITCH_HASH ecmp_hash_algorithm RANDOM (spray).
enum class AssignMode { FlowletQuality, FlowletRandom, PacketQuality, PacketRandom };
const char* assignModeName(AssignMode m);  // "flowlet-quality", ...

constexpr uint8_t kBestBand = 7;  // quality bands 0..7, SAI's 8 bands; 7 is the best

struct DatapathSettings {
    AssignMode mode = AssignMode::FlowletQuality;
    uint32_t idleTimeUs = 256;  // a flow may move after this much silence (flowlet modes)
    // Global ARS: a next hop's quality is min(its port's band, the route's remote band for
    // it) - FARE's rule - instead of its port's band alone.
    bool global = false;
    bool operator==(const DatapathSettings&) const = default;
};

// One next hop of a mirrored kernel route.
struct PathNexthop {
    int ifindex = 0;
    IpAddr gateway;       // where bpf_redirect_neigh sends it (FRR: fe80::/169.254.0.1)
    uint32_t weight = 1;  // the kernel route's weight (pathqd/FRR link bandwidth)
    bool operator==(const PathNexthop&) const = default;
};

struct DatapathCounters {
    uint64_t steered = 0;      // packets the program forwarded itself
    uint64_t passed = 0;       // packets left to the kernel (no route, one next hop, pinned...)
    uint64_t newFlowlets = 0;  // egress (re)chosen for a flow: new, idle, per packet
    uint64_t moved = 0;        // of those, a different egress than the flow had
};

class Datapath {
  public:
    virtual ~Datapath() = default;
    virtual void configure(const DatapathSettings& s) = 0;
    // The route to `dst` (any table entry the kernel would match): next hops as the kernel
    // route has them. Fewer than two next hops, or any next hop on a port that is not
    // ARS-eligible: the program leaves matching packets to the kernel. Replaces what was.
    virtual void setRoute(const IpPrefix& dst, const std::vector<PathNexthop>& nexthops) = 0;
    virtual void removeRoute(const IpPrefix& dst) = 0;
    // The port's current quality band (0..7, 7 best), from its past load and queue.
    virtual void setPortBand(int ifindex, uint8_t band) = 0;
    // The port's rate (its shaper's, else its speed), which the program's own queue estimate
    // drains at; 0: unknown (no estimate: bands alone decide).
    virtual void setPortRate(int ifindex, uint64_t bytesPerSecond) = 0;
    // The port's real queue as last read (its root qdisc's backlog) at `atNs` on the clock the
    // program reads (CLOCK_MONOTONIC): the program's estimate never falls below it, drained
    // at the port's rate since, as its own count misses what it did not send.
    virtual void setPortBacklog(int ifindex, uint64_t bytes, uint64_t atNs) = 0;
    // Packets arriving on a pinned port (static smart routing) are never steered.
    virtual void setPinned(int ifindex, bool pinned) = 0;
    // The program on the port's tc ingress; detach leaves plain kernel forwarding.
    virtual void attach(int ifindex) = 0;
    virtual void detach(int ifindex) = 0;
    virtual DatapathCounters counters() const = 0;
};

}  // namespace twinrail::ars
