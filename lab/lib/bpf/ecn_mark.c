// The lab's stand-in for a switch port's WRED/ECN marking (this kernel has no red, codel
// or fq_codel qdisc). A tc direct-action program on the port's clsact egress keeps a
// phantom queue (HULL's): every packet adds its serialisation time at the port's shaped
// rate, and the queue drains in real time. An ECN-capable packet that finds more than
// `mark_after_ns` of it is marked CE, as a hardware queue past its marking threshold
// would mark it. A phantom queue, not the tbf's backlog: tbf lets a bucket's worth of
// bytes through at once, which a hardware port at that rate queues; that queue is what
// marks. It counts what it saw of the ECN-capable class (the queue counters SONiC
// publishes for a lossless queue) in its map, which the lab reads (lab::readEcnMarks).
// Both constants are patched into the object's .rodata before it is loaded.
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int(*name)[val]
#define __type(name, val) typeof(val)* name

struct port_state {
    __u64 backlog_ns;  // the phantom queue, in time at the port's rate
    __u64 last_ns;     // when it was last updated
    __u64 ect;         // ECN-capable packets seen (ECT(0), ECT(1) or CE)
    __u64 marked;      // of those, marked CE here
};

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct port_state);
} ecn_state SEC(".maps");

static void* (*bpf_map_lookup_elem)(void* map, const void* key) = (void*)BPF_FUNC_map_lookup_elem;
static __u64 (*bpf_ktime_get_ns)(void) = (void*)BPF_FUNC_ktime_get_ns;
static long (*bpf_skb_ecn_set_ce)(struct __sk_buff* skb) = (void*)BPF_FUNC_skb_ecn_set_ce;
static long (*bpf_skb_load_bytes)(const struct __sk_buff* skb, __u32 offset, void* to,
                                  __u32 len) = (void*)BPF_FUNC_skb_load_bytes;

// Patched by the lab (lab::ecnMarkObject): the magic values are what it looks for.
volatile const __u64 ps_per_byte = 0x74776e7261696c31ULL;    // "twinrail1": 1e12 * 8 / rate
volatile const __u64 mark_after_ns = 0x74776e7261696c32ULL;  // "twinrail2"

#define ETH_P_IP_BE 0x0008    // htons(0x0800)
#define ETH_P_IPV6_BE 0xDD86  // htons(0x86DD)

// The ECN field of an IPv4 or IPv6 packet, or -1.
static int ecn_field(struct __sk_buff* skb) {
    __u8 b[2];
    if (skb->protocol == ETH_P_IP_BE) {
        if (bpf_skb_load_bytes(skb, 14 + 1, b, 1) < 0) return -1;  // TOS
        return b[0] & 3;
    }
    if (skb->protocol == ETH_P_IPV6_BE) {
        if (bpf_skb_load_bytes(skb, 14, b, 2) < 0) return -1;  // version, traffic class
        return (b[1] >> 4) & 3;
    }
    return -1;
}

SEC("ecn") int mark(struct __sk_buff* skb) {
    __u32 key = 0;
    struct port_state* s = bpf_map_lookup_elem(&ecn_state, &key);
    if (!s) return TC_ACT_OK;
    __u64 now = bpf_ktime_get_ns();
    __u64 drained = now - s->last_ns;
    __u64 backlog = s->backlog_ns > drained ? s->backlog_ns - drained : 0;
    s->backlog_ns = backlog + (__u64)skb->len * ps_per_byte / 1000;
    s->last_ns = now;
    int ecn = ecn_field(skb);
    if (ecn <= 0) return TC_ACT_OK;  // not IP, or not ECN-capable: never marked
    __sync_fetch_and_add(&s->ect, 1);
    if (backlog > mark_after_ns && ecn != 3 && bpf_skb_ecn_set_ce(skb))
        __sync_fetch_and_add(&s->marked, 1);
    return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
