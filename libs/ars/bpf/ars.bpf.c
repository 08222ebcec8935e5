// The software ARS data path (issue 22): a tc program on a switch port's clsact ingress with
// SAI ARS's semantics. Each routed IPv4/IPv6 packet is looked up in a mirror of the kernel's
// routes (an LPM trie per family, written by arsd from the main and local tables, so the
// longest match is the kernel's); when the route is an eligible group of 2..16 next hops,
// the packet's 5-tuple picks a slot of the flow table, and the slot's egress is kept while
// the flow keeps sending within idle_ns (flowlet), or chosen again on every packet. A choice
// is the best quality band among the next hops (ties at random) or a random next hop by the
// route's weights. The program then does what the kernel's forwarding would: TTL/hop limit
// minus one and bpf_redirect_neigh to the next hop's gateway, so the kernel's neighbour
// table supplies the MAC (FRR's onlink 169.254.0.1 and fe80:: next hops included).
//
// Anything the program does not steer goes on as if it were not there (TC_ACT_UNSPEC: the
// next tc filter, or the kernel's own forwarding when there is none): non-IP, fragments,
// TTL <= 1, no route, a route the kernel must decide, packets not addressed to this host's
// MAC, and every packet arriving on a pinned port (static smart routing owns those flows).
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <stddef.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "ars_maps.h"

#define AF_INET 2
#define AF_INET6 10
#define PACKET_HOST 0
#define IP_FRAGMENT_BITS 0x3fff  // MF and the fragment offset
#define IPV6_NEXT_FRAGMENT 44

// Not TC_ACT_OK: that would end classification and skip other users' filters after ours.
#define ARS_PASS TC_ACT_UNSPEC

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct ars_config);
} ars_config SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_LPM_TRIE);
    __uint(max_entries, 65536);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, struct ars_lpm_v4);
    __type(value, struct ars_group);
} ars_routes_v4 SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_LPM_TRIE);
    __uint(max_entries, 65536);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, struct ars_lpm_v6);
    __type(value, struct ars_group);
} ars_routes_v6 SEC(".maps");

// ifindex -> quality band 0..7 (arsd's sampler); absent: ARS_BEST_BAND.
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 4096);
    __type(key, __u32);
    __type(value, __u8);
} ars_port_band SEC(".maps");

// ifindex -> the port's rate in bytes per second (arsd); absent or 0: no queue estimate.
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 4096);
    __type(key, __u32);
    __type(value, __u64);
} ars_port_rate SEC(".maps");

// ifindex -> what the program has queued there (ars_maps.h struct ars_port_queue).
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 4096);
    __type(key, __u32);
    __type(value, struct ars_port_queue);
} ars_port_queue SEC(".maps");

// ifindex -> the port's real backlog as arsd last sampled it (ars_maps.h).
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 4096);
    __type(key, __u32);
    __type(value, struct ars_port_backlog);
} ars_port_backlog SEC(".maps");

// ifindex -> 1: packets arriving there are never steered.
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 4096);
    __type(key, __u32);
    __type(value, __u8);
} ars_pinned SEC(".maps");

// max_entries is replaced by the loader (the constructor's maxFlows) before load.
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 4096);
    __type(key, __u32);
    __type(value, struct ars_flow);
} ars_flows SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, ARS_CNT_MAX);
    __type(key, __u32);
    __type(value, __u64);
} ars_counters SEC(".maps");

static __always_inline void bump(__u32 slot) {
    __u64* c = bpf_map_lookup_elem(&ars_counters, &slot);
    if (c) *c += 1;
}

static __always_inline int pass(void) {
    bump(ARS_CNT_PASSED);
    return ARS_PASS;
}

// murmur3's 32-bit mixing: every input bit reaches the slot index's low bits.
static __always_inline __u32 mix(__u32 h, __u32 k) {
    k *= 0xcc9e2d51;
    k = (k << 15) | (k >> 17);
    k *= 0x1b873593;
    h ^= k;
    h = (h << 13) | (h >> 19);
    return h * 5 + 0xe6546b64;
}

static __always_inline __u32 finish(__u32 h) {
    h ^= h >> 16;
    h *= 0x85ebca6b;
    h ^= h >> 13;
    h *= 0xc2b2ae35;
    return h ^ (h >> 16);
}

// A next hop's band. Global ARS measures the port's load against the path beyond instead of
// the port alone (FARE's rule in the units a switch has): a next hop whose kernel weight is
// a quarter of the heaviest (pathqd's link bandwidth) is a quarter-capacity path, so the
// load that fills a quarter of its port already fills it. Band 7 - b is a load of at least
// (7 - b) eighths; scaled by heaviest / weight. An idle port stays 7 whatever lies beyond.
static __always_inline __u32 band_of(const struct ars_nexthop* nh, __u32 global, __u32 wmax) {
    __u32 ifindex = nh->ifindex;
    __u8* b = bpf_map_lookup_elem(&ars_port_band, &ifindex);
    __u32 band = b ? *b : ARS_BEST_BAND;
    if (band > ARS_BEST_BAND) band = ARS_BEST_BAND;
    if (!global || nh->weight == 0 || nh->weight >= wmax) return band;
    __u64 load = (__u64)(ARS_BEST_BAND - band) * wmax / nh->weight;
    return load >= ARS_BEST_BAND ? 0 : ARS_BEST_BAND - (__u32)load;
}

#define NS_PER_S 1000000000ULL
#define MAX_QUEUE_BYTES (1ULL << 32)  // keeps bytes * NS_PER_S inside 64 bits

// The rate a next hop's queue estimate drains at: its port's rate, and for global ARS the
// rate of the path beyond (port rate x weight / heaviest weight: pathqd's link bandwidth,
// FARE's rule), so a next hop whose path beyond is a quarter as wide counts a byte queued
// there as four. 0: unknown.
static __always_inline __u64 drain_rate(const struct ars_nexthop* nh, __u32 global, __u32 wmax) {
    __u32 ifindex = nh->ifindex;
    __u64* rate = bpf_map_lookup_elem(&ars_port_rate, &ifindex);
    if (!rate || *rate == 0) return 0;
    __u64 r = *rate;
    if (global && wmax > 0 && nh->weight < wmax) r = r / wmax * nh->weight + 1;
    return r;
}

// Bytes still queued at `now` of `bytes` queued at `at_ns`, draining at `rate`.
static __always_inline __u64 drained(__u64 bytes, __u64 at_ns, __u64 rate, __u64 now) {
    if (now <= at_ns) return bytes;
    __u64 elapsed_us = (now - at_ns) / 1000;
    if (elapsed_us >= 1000000) return 0;  // a second of silence drains any port
    __u64 gone = elapsed_us * rate / 1000000;
    return bytes > gone ? bytes - gone : 0;
}

// The real backlog arsd last read on the port, drained since: a floor for the estimate.
static __always_inline __u64 backlog_floor(__u32 ifindex, __u64 rate, __u64 now) {
    struct ars_port_backlog* b = bpf_map_lookup_elem(&ars_port_backlog, &ifindex);
    if (!b) return 0;
    return drained(b->bytes, b->at_ns, rate, now);
}

static __always_inline __u64 at_least(__u64 a, __u64 b) {
    return a > b ? a : b;
}

// The estimated queueing delay (ns) of a next hop; 0 when its rate is unknown.
static __always_inline __u64 queue_delay_ns(const struct ars_nexthop* nh, __u32 global, __u32 wmax,
                                            __u64 now) {
    __u64 rate = drain_rate(nh, global, wmax);
    if (rate == 0) return 0;
    __u32 ifindex = nh->ifindex;
    __u64 bytes = backlog_floor(ifindex, rate, now);
    struct ars_port_queue* q = bpf_map_lookup_elem(&ars_port_queue, &ifindex);
    if (q) bytes = at_least(bytes, drained(q->bytes, q->at_ns, rate, now));
    if (bytes > MAX_QUEUE_BYTES) bytes = MAX_QUEUE_BYTES;
    return bytes * NS_PER_S / rate;
}

// Adds a packet sent to next hop `nh` to its port's queue estimate (raised to the sampled
// backlog first); returns when that packet leaves by the estimate (ns after now), 0 when
// the rate is unknown.
static __always_inline __u64 account(const struct ars_nexthop* nh, __u32 global, __u32 wmax,
                                     __u64 now, __u32 len) {
    __u64 rate = drain_rate(nh, global, wmax);
    if (rate == 0) return 0;
    __u32 ifindex = nh->ifindex;
    __u64 floor = backlog_floor(ifindex, rate, now);
    __u64 bytes = len;
    struct ars_port_queue* q = bpf_map_lookup_elem(&ars_port_queue, &ifindex);
    if (q) {
        bpf_spin_lock(&q->lock);
        bytes += at_least(floor, drained(q->bytes, q->at_ns, rate, now));
        if (bytes > MAX_QUEUE_BYTES) bytes = MAX_QUEUE_BYTES;
        q->bytes = bytes;
        q->at_ns = now;
        bpf_spin_unlock(&q->lock);
    } else {
        bytes += floor;
        if (bytes > MAX_QUEUE_BYTES) bytes = MAX_QUEUE_BYTES;
        struct ars_port_queue fresh = {.bytes = bytes, .at_ns = now};
        bpf_map_update_elem(&ars_port_queue, &ifindex, &fresh, BPF_NOEXIST);
    }
    return bytes * NS_PER_S / rate;
}

// The loops over a group's next hops run under bpf_loop: the verifier checks each callback
// once instead of every path through 16 unrolled iterations (which exceeds its 1M-insn budget
// with the best band and the tie count tracked exactly).
struct scan {
    const struct ars_group* g;
    __u64 now;
    __u64 best_delay;
    __u32 global;  // quality: load against the path beyond (FARE's rule)
    __u32 want;    // find: the ifindex looked for; random: the drawn ticket
    __u32 best_band;
    __u32 ties;
    __u32 total;  // random: the sum of the weights
    int best;     // the answer: a next hop index, or -1
};

// The shortest estimated queue (the program's own count of what it sent, fresh at every
// packet), then the best band (the 1 ms sample, which also sees traffic the program did not
// send), then chance: among equals each is as likely (reservoir sampling). The band alone
// herds: every choice made between two samples goes to the port that was best at the last
// one, and with every uplink loaded a path one band better than the rest drew every new
// flowlet until the next samples caught up (docs/ars.md, measured).
static long quality_step(__u32 i, void* arg) {
    struct scan* s = arg;
    if (i >= ARS_MAX_NEXTHOPS) return 1;
    const struct ars_nexthop* nh = &s->g->nh[i];
    __u32 band = band_of(nh, s->global, s->g->heaviest);
    __u64 delay = queue_delay_ns(nh, s->global, s->g->heaviest, s->now);
    int better = delay < s->best_delay || (delay == s->best_delay && band > s->best_band);
    if (s->best < 0 || better) {
        s->best = (int)i;
        s->best_band = band;
        s->best_delay = delay;
        s->ties = 1;
    } else if (band == s->best_band && delay == s->best_delay) {
        s->ties++;
        if (bpf_get_prandom_u32() % s->ties == 0) s->best = (int)i;
    }
    return 0;
}

static long weight_step(__u32 i, void* arg) {
    struct scan* s = arg;
    if (i >= ARS_MAX_NEXTHOPS) return 1;
    s->total += s->g->nh[i].weight;
    return 0;
}

// The next hop whose weight range holds the ticket.
static long ticket_step(__u32 i, void* arg) {
    struct scan* s = arg;
    if (i >= ARS_MAX_NEXTHOPS) return 1;
    __u32 w = s->g->nh[i].weight;
    if (s->want < w) {
        s->best = (int)i;
        return 1;
    }
    s->want -= w;
    return 0;
}

static long find_step(__u32 i, void* arg) {
    struct scan* s = arg;
    if (i >= ARS_MAX_NEXTHOPS) return 1;
    if (s->g->nh[i].ifindex != s->want) return 0;
    s->best = (int)i;
    return 1;
}

static __always_inline int choose_quality(const struct ars_group* g, __u32 count, __u32 global,
                                          __u64 now) {
    struct scan s = {.g = g, .now = now, .global = global, .best = -1};
    bpf_loop(count, quality_step, &s, 0);
    return s.best;
}

// A next hop with probability weight / sum of weights.
static __always_inline int choose_random(const struct ars_group* g, __u32 count) {
    struct scan s = {.g = g, .best = -1};
    bpf_loop(count, weight_step, &s, 0);
    if (s.total == 0) return -1;
    s.want = bpf_get_prandom_u32() % s.total;
    bpf_loop(count, ticket_step, &s, 0);
    return s.best;
}

static __always_inline int find_port(const struct ars_group* g, __u32 count, __u32 ifindex) {
    struct scan s = {.g = g, .want = ifindex, .best = -1};
    bpf_loop(count, find_step, &s, 0);
    return s.best;
}

// The flow's next hop in `g`: the remembered one while the flowlet lasts and the route still
// has it, else a new choice. -1: none (the caller passes the packet). `len` bytes are added
// to the chosen port's queue estimate.
static __always_inline int decide(const struct ars_config* cfg, const struct ars_group* g,
                                  __u32 hash, __u32 len) {
    __u32 slot = hash & cfg->flow_mask;
    struct ars_flow* flow = bpf_map_lookup_elem(&ars_flows, &slot);
    if (!flow) return -1;
    __u64 now = cfg->now_override_ns ? cfg->now_override_ns : bpf_ktime_get_ns();
    __u32 mode = cfg->mode;
    __u32 count = g->count;
    if (count > ARS_MAX_NEXTHOPS) return -1;
    __u32 prev = flow->ifindex;
    int nh = -1;
    int per_packet = mode == ARS_MODE_PACKET_QUALITY || mode == ARS_MODE_PACKET_RANDOM;
    // Silence counts from when the flow's last packet left its port (the queue estimate),
    // not from when it arrived: a flowlet that moved while that packet still waited in a
    // queue would overtake it. With no estimate (rate unknown) the two are the same.
    __u64 silent_since =
        flow->depart_ns > flow->last_seen_ns ? flow->depart_ns : flow->last_seen_ns;
    if (!per_packet && prev != 0 && (now < silent_since || now - silent_since < cfg->idle_ns)) {
        if (flow->generation == g->generation) {
            if (flow->nh_index < count) nh = (int)flow->nh_index;
        } else {
            // The route was rewritten (or the slot is another route's): the flow stays only
            // if its port is still one of the route's next hops; a withdrawn one never is.
            nh = find_port(g, count, prev);
        }
    }
    if (nh < 0) {
        int quality = mode == ARS_MODE_FLOWLET_QUALITY || mode == ARS_MODE_PACKET_QUALITY;
        nh = quality ? choose_quality(g, count, cfg->global, now) : choose_random(g, count);
        if (nh < 0 || nh >= ARS_MAX_NEXTHOPS) return -1;
        bump(ARS_CNT_NEW_FLOWLETS);
        // The mask only tells the verifier what the test above already made true.
        if (prev != 0 && prev != g->nh[nh & (ARS_MAX_NEXTHOPS - 1)].ifindex) bump(ARS_CNT_MOVED);
    }
    __u32 idx = (__u32)nh & (ARS_MAX_NEXTHOPS - 1);
    flow->last_seen_ns = now;
    flow->generation = g->generation;
    flow->ifindex = g->nh[idx].ifindex;
    flow->nh_index = idx;
    flow->depart_ns = now + account(&g->nh[idx], cfg->global, g->heaviest, now, len);
    return (int)idx;
}

// The transport header's length: TCP's data offset, UDP's 8; 0 for anything else.
static __always_inline __u32 l4_header_len(__u8 proto, void* l4, void* end) {
    if (proto == IPPROTO_UDP) return 8;
    if (proto != IPPROTO_TCP) return 0;
    __u8* doff = l4 + 12;
    if ((void*)(doff + 1) > end) return 0;
    return (*doff >> 4) * 4;
}

// What the packet is on the wire. A GSO packet (a sender's TSO/GSO or GRO's aggregate)
// leaves as gso_segs frames, each with its own headers (`hdr` bytes), and the shaper counts
// every one: counted once, bulk TCP's standing queue would be under-counted by ~4%, and a
// flowlet moved on that estimate overtakes its own packets.
static __always_inline __u32 wire_len(const struct __sk_buff* skb, __u32 hdr) {
    __u32 segs = skb->gso_segs;
    if (segs <= 1) return skb->len;
    return skb->len + (segs - 1) * hdr;
}

// Sends the packet to next hop `nh` of `g` through the neighbour table.
static __always_inline int redirect(const struct ars_group* g, int nh) {
    if (nh < 0 || nh >= ARS_MAX_NEXTHOPS) return -1;
    struct bpf_redir_neigh params = {};
    const struct ars_nexthop* hop = &g->nh[nh & (ARS_MAX_NEXTHOPS - 1)];
    __u32 ifindex = hop->ifindex;
    if (hop->family == AF_INET) {
        params.nh_family = AF_INET;
        params.ipv4_nh = hop->gateway[0];
    } else if (hop->family == AF_INET6) {
        params.nh_family = AF_INET6;
        __builtin_memcpy(params.ipv6_nh, hop->gateway, sizeof(params.ipv6_nh));
    }
    bump(ARS_CNT_STEERED);
    if (params.nh_family == 0) return (int)bpf_redirect_neigh(ifindex, NULL, 0, 0);
    return (int)bpf_redirect_neigh(ifindex, &params, sizeof(params), 0);
}

// Larger than the egress MTU: left to the kernel, whose forwarding sends ICMP "fragmentation
// needed" / "packet too big" (or fragments); a redirect would have the driver drop it
// silently and break path MTU discovery. An ifindex the helper does not know is not "too
// big": the redirect itself fails then.
static __always_inline int too_big(struct __sk_buff* skb, const struct ars_group* g, int nh) {
    __u32 mtu = 0;
    return bpf_check_mtu(skb, g->nh[nh & (ARS_MAX_NEXTHOPS - 1)].ifindex, &mtu, 0, 0) ==
           BPF_MTU_CHK_RET_FRAG_NEEDED;
}

static __always_inline int steer_v4(struct __sk_buff* skb, const struct ars_config* cfg) {
    void* data = (void*)(long)skb->data;
    void* end = (void*)(long)skb->data_end;
    struct iphdr* ip = data + sizeof(struct ethhdr);
    if ((void*)(ip + 1) > end) return pass();
    if (ip->version != 4 || ip->ihl < 5) return pass();
    if (ip->frag_off & bpf_htons(IP_FRAGMENT_BITS)) return pass();
    if (ip->ttl <= 1) return pass();  // the kernel sends the ICMP time exceeded

    struct ars_lpm_v4 key = {.prefixlen = 32};
    __builtin_memcpy(key.addr, &ip->daddr, 4);
    const struct ars_group* g = bpf_map_lookup_elem(&ars_routes_v4, &key);
    if (!g || !g->eligible || g->count < 2 || g->count > ARS_MAX_NEXTHOPS) return pass();

    __u32 h = mix(mix(mix(0, ip->saddr), ip->daddr), ip->protocol);
    if (ip->protocol == IPPROTO_TCP || ip->protocol == IPPROTO_UDP) {
        __u32* ports = (void*)ip + ip->ihl * 4;
        if ((void*)(ports + 1) > end) return pass();
        h = mix(h, *ports);
    }
    __u32 hdr = sizeof(struct ethhdr) + ip->ihl * 4 +
                l4_header_len(ip->protocol, (void*)ip + ip->ihl * 4, end);
    int nh = decide(cfg, g, finish(h), wire_len(skb, hdr));
    if (nh < 0 || too_big(skb, g, nh)) return pass();

    // TTL minus one, as forwarding does; the checksum word holds TTL and protocol.
    __u16 old_word = *(__u16*)&ip->ttl;
    ip->ttl -= 1;
    __u16 new_word = *(__u16*)&ip->ttl;
    if (bpf_l3_csum_replace(skb, sizeof(struct ethhdr) + offsetof(struct iphdr, check), old_word,
                            new_word, sizeof(__u16)) != 0)
        return TC_ACT_SHOT;  // the packet is already changed: never let a bad checksum out
    return redirect(g, nh);
}

static __always_inline int steer_v6(struct __sk_buff* skb, const struct ars_config* cfg) {
    void* data = (void*)(long)skb->data;
    void* end = (void*)(long)skb->data_end;
    struct ipv6hdr* ip6 = data + sizeof(struct ethhdr);
    if ((void*)(ip6 + 1) > end) return pass();
    if (ip6->version != 6) return pass();
    if (ip6->nexthdr == IPV6_NEXT_FRAGMENT) return pass();
    if (ip6->hop_limit <= 1) return pass();

    struct ars_lpm_v6 key = {.prefixlen = 128};
    __builtin_memcpy(key.addr, &ip6->daddr, 16);
    const struct ars_group* g = bpf_map_lookup_elem(&ars_routes_v6, &key);
    if (!g || !g->eligible || g->count < 2 || g->count > ARS_MAX_NEXTHOPS) return pass();

    __u32 h = ip6->nexthdr;
    for (int i = 0; i < 4; i++) {
        h = mix(h, ip6->saddr.in6_u.u6_addr32[i]);
        h = mix(h, ip6->daddr.in6_u.u6_addr32[i]);
    }
    // Ports only right after the fixed header; other extension headers hash on addresses.
    if (ip6->nexthdr == IPPROTO_TCP || ip6->nexthdr == IPPROTO_UDP) {
        __u32* ports = (void*)(ip6 + 1);
        if ((void*)(ports + 1) > end) return pass();
        h = mix(h, *ports);
    }
    __u32 hdr = sizeof(struct ethhdr) + sizeof(struct ipv6hdr) +
                l4_header_len(ip6->nexthdr, (void*)(ip6 + 1), end);
    int nh = decide(cfg, g, finish(h), wire_len(skb, hdr));
    if (nh < 0 || too_big(skb, g, nh)) return pass();
    ip6->hop_limit -= 1;  // no header checksum in IPv6
    return redirect(g, nh);
}

SEC("tc")
int ars_ingress(struct __sk_buff* skb) {
    __u32 in = skb->ingress_ifindex;
    if (bpf_map_lookup_elem(&ars_pinned, &in)) return pass();
    if (skb->pkt_type != PACKET_HOST) return pass();  // the kernel would not route it either
    __u32 zero = 0;
    const struct ars_config* cfg = bpf_map_lookup_elem(&ars_config, &zero);
    if (!cfg) return pass();
    void* data = (void*)(long)skb->data;
    void* end = (void*)(long)skb->data_end;
    struct ethhdr* eth = data;
    if ((void*)(eth + 1) > end) return pass();
    if (eth->h_proto == bpf_htons(ETH_P_IP)) return steer_v4(skb, cfg);
    if (eth->h_proto == bpf_htons(ETH_P_IPV6)) return steer_v6(skb, cfg);
    return pass();
}

// Only GPL-compatible programs may call some helpers; none of ours needs it, but the program
// is loaded into the kernel and GPL keeps every helper open to a later change.
char LICENSE[] SEC("license") = "GPL";
