// The real ARS data path: the tc/eBPF program of libs/ars/bpf/ars.bpf.c, embedded in this
// library and loaded with libbpf from memory (the daemon opens no file), on the clsact
// ingress of each switch port it is attached to. See datapath.h for the semantics.
//
// Why tc/eBPF: the program sees every routed packet before the kernel's FIB and can pick the
// egress per packet or per flowlet with a flow table of its own, which no route attribute
// (multipath hash policy, nexthop groups) can do; the kernel keeps everything it does not
// steer. bpf_redirect_neigh leaves the MAC to the kernel's neighbour table, so FRR's
// next hops (onlink 169.254.0.1, fe80::) work as the kernel's own forwarding would.
//
// Needs CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON (or root); the constructor throws when the
// kernel refuses the program. attach/detach/detachLeftover talk netlink in the calling
// thread's network namespace: ifindexes are that namespace's. The maps and the program are
// the process's, whatever namespace the ports are in.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <vector>

#include "twinrail/ars/datapath.h"

struct bpf_object;

namespace twinrail::ars {

// Our filter on a port's ingress: exactly this handle and priority, kind bpf, protocol all.
// After hostrouted's ARP/ND guard (prio 90 and 91) so a spoofed ARP is dropped first; the
// program passes everything it does not steer to the next filter (TC_ACT_UNSPEC).
inline constexpr uint32_t kArsTcHandle = 0xa25;
inline constexpr uint32_t kArsTcPriority = 95;

class BpfDatapath : public Datapath {
  public:
    // maxFlows: the flow table's entries, a power of two in 1..2^24 (std::invalid_argument
    // otherwise). Throws std::runtime_error naming what failed (open, load with the
    // verifier's log tail, a map missing) when the kernel refuses the program.
    explicit BpfDatapath(uint32_t maxFlows);
    // Detaches every port this object attached, in the destroying thread's namespace (the
    // one attach ran in, for a daemon that never changes namespace).
    ~BpfDatapath() override;
    BpfDatapath(const BpfDatapath&) = delete;
    BpfDatapath& operator=(const BpfDatapath&) = delete;

    void configure(const DatapathSettings& s) override;
    // More than 16 next hops, a next hop without an ifindex, or an IPv4 gateway on an IPv6
    // route (bpf_redirect_neigh cannot do that) make the route not eligible: the kernel
    // forwards it. A prefix without a family throws std::invalid_argument, so does a
    // remote band above 7.
    void setRoute(const IpPrefix& dst, const std::vector<PathNexthop>& nexthops) override;
    void removeRoute(const IpPrefix& dst) override;
    void setPortBand(int ifindex, uint8_t band) override;  // band > 7: std::invalid_argument
    void setPortRate(int ifindex, uint64_t bytesPerSecond) override;
    void setPortBacklog(int ifindex, uint64_t bytes, uint64_t atNs) override;
    void setPinned(int ifindex, bool pinned) override;
    // Creates the port's clsact qdisc when missing, then puts (or replaces) our filter.
    void attach(int ifindex) override;
    // Removes only our filter, never the clsact qdisc (other filters live there). A port
    // that is gone or has no filter of ours is not an error.
    void detach(int ifindex) override;
    DatapathCounters counters() const override;

    // A filter of ours left on `ifindex` by a process that died (it is identified by handle,
    // priority and the program's name): removes it. Whether there was one.
    static bool detachLeftover(int ifindex);

    // For tests and diagnostics. The clock the program reads: nonzero replaces
    // bpf_ktime_get_ns() (synthetic time for BPF_PROG_TEST_RUN); a daemon never calls it, so
    // the program runs on the kernel's clock.
    void setClockOverride(uint64_t nowNs);
    struct TestRun {
        int action = 0;              // the program's tc verdict (TC_ACT_*)
        std::vector<uint8_t> frame;  // the packet as the program left it
    };
    // Runs the loaded program once on `frame` (Ethernet first) with BPF_PROG_TEST_RUN, as if
    // it had arrived on `ingressIfindex`; gsoSegs > 1 makes it a GSO packet of that many
    // segments of gsoSize payload bytes. Throws std::runtime_error when the kernel refuses.
    TestRun testRun(const std::vector<uint8_t>& frame, int ingressIfindex, uint32_t gsoSegs = 0,
                    uint32_t gsoSize = 0) const;
    struct FlowSlot {
        uint32_t slot = 0;
        uint64_t lastSeenNs = 0;
        int ifindex = 0;  // the flow's egress
        uint32_t nexthopIndex = 0;
    };
    std::vector<FlowSlot> flows() const;  // every used slot (reads the whole table)
    uint32_t maxFlows() const { return maxFlows_; }

  private:
    struct ObjectCloser {
        void operator()(bpf_object* o) const;
    };
    void writeConfig();
    std::unique_ptr<bpf_object, ObjectCloser> object_;
    uint32_t maxFlows_;
    DatapathSettings settings_;
    uint64_t clockOverrideNs_ = 0;
    uint64_t generation_ = 0;
    int progFd_ = -1;
    int configFd_ = -1, routesV4Fd_ = -1, routesV6Fd_ = -1, bandFd_ = -1, rateFd_ = -1,
        backlogFd_ = -1, pinnedFd_ = -1, flowsFd_ = -1, countersFd_ = -1;
    std::set<int> attached_;
};

}  // namespace twinrail::ars
