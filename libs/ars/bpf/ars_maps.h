// The maps the ARS tc program (ars.bpf.c) and its loader (bpf_datapath.cpp) share: one
// definition of every key and value, so the two sides cannot drift apart. Plain C with
// fixed-width kernel types: it is compiled by clang -target bpf and by g++ alike.
#pragma once

#include <linux/bpf.h>
#include <linux/types.h>

#define ARS_MAX_NEXTHOPS 16  // SAI ARS groups here hold at most this many; more: not eligible

// Assign modes, as in twinrail::ars::AssignMode (bpf_datapath.cpp maps one onto the other).
#define ARS_MODE_FLOWLET_QUALITY 0
#define ARS_MODE_FLOWLET_RANDOM 1
#define ARS_MODE_PACKET_QUALITY 2
#define ARS_MODE_PACKET_RANDOM 3

#define ARS_BEST_BAND 7  // a port with no band written counts as idle

// Counter slots of the per-CPU array "ars_counters".
#define ARS_CNT_STEERED 0
#define ARS_CNT_PASSED 1
#define ARS_CNT_NEW_FLOWLETS 2
#define ARS_CNT_MOVED 3
#define ARS_CNT_MAX 4

// "ars_config", an array of one entry. now_override_ns is for tests (BPF_PROG_TEST_RUN with
// synthetic time): when nonzero the program takes it as "now" instead of
// bpf_ktime_get_ns(). The daemon always writes 0. flow_mask is max_flows - 1, fixed at load.
struct ars_config {
    __u32 mode;
    __u32 global;  // 1: a next hop's band is min(port band, remote band) (FARE's rule)
    __u64 idle_ns;
    __u64 now_override_ns;
    __u32 flow_mask;
    __u32 pad;
};

struct ars_nexthop {
    __u32 ifindex;
    __u32 weight;  // the kernel route's weight, >= 1 (global ARS: the path beyond's share)
    __u8 family;   // of the gateway: AF_INET, AF_INET6, or 0 (directly connected)
    __u8 pad[3];
    __u32 gateway[4];  // network order; IPv4 in gateway[0]
};

// The value of both route tries. generation changes on every write of the route, so a flow
// entry knows whether its remembered next hop index still means the same next hop.
struct ars_group {
    __u64 generation;
    __u32 count;     // next hops in nh[]
    __u32 eligible;  // 0: leave matching packets to the kernel (< 2 next hops, too many...)
    __u32 heaviest;  // the largest weight in nh[] (global ARS: the full-width path)
    __u32 pad;
    struct ars_nexthop nh[ARS_MAX_NEXTHOPS];
};

// LPM trie keys ("ars_routes_v4", "ars_routes_v6"); addresses in network order.
struct ars_lpm_v4 {
    __u32 prefixlen;
    __u8 addr[4];
};
struct ars_lpm_v6 {
    __u32 prefixlen;
    __u8 addr[16];
};

// "ars_port_queue", ifindex -> the program's own estimate of what it has queued on the port:
// the bytes it sent there, drained at the port's rate ("ars_port_rate", bytes per second,
// written by arsd from the shaper or link speed) since at_ns. The 1 ms sampled band cannot
// see a burst of packets between two samples; this can, at the next packet. Updated under
// the lock by whichever CPU sends (two CPUs forwarding to one port would otherwise lose
// each other's bytes and under-count the queue, which is what a move must not do); read
// without it, as a slightly stale estimate.
struct ars_port_queue {
    struct bpf_spin_lock lock;
    __u32 pad;
    __u64 bytes;
    __u64 at_ns;
};

// "ars_port_backlog", ifindex -> the port's real queue as arsd last read it (the root
// qdisc's backlog in bytes, at at_ns). The program's own count misses what it did not
// send or cannot see the size of (the kernel's forwarding, a GSO packet's per-segment
// headers); a move that trusts an undercount overtakes packets still queued. So the
// estimate never falls below this floor, drained at the same rate since it was read.
struct ars_port_backlog {
    __u64 bytes;
    __u64 at_ns;
};

// One slot of the flow table "ars_flows" (an array of max_flows entries, index = the
// 5-tuple's hash & flow_mask). ifindex 0: the slot has never been used.
struct ars_flow {
    __u64 last_seen_ns;
    __u64 depart_ns;   // when its last packet leaves the egress port, by the queue estimate
    __u64 generation;  // of the group nh_index refers to
    __u32 ifindex;     // the egress the flow was last sent to
    __u32 nh_index;
};
