// The lab's stand-in for a bond's layer3+4 transmit hash (the lab kernel has no bonding
// driver). A tc classifier in its classic mode on the emulated bond's egress: it matches
// (and the filter's action sends the packet out the second port) for flows whose hash is
// odd; the rest fall through to the next filter, which sends them out the first port.
// bpf_get_hash_recalc() is the kernel's flow hash over addresses and ports, computed
// when the packet has none, so every flow keeps its port and flows spread over both.
#include <linux/bpf.h>

#define SEC(name) __attribute__((section(name), used))

static __u32 (*bpf_get_hash_recalc)(struct __sk_buff* skb) = (void*)BPF_FUNC_get_hash_recalc;

SEC("classifier") int odd_flow(struct __sk_buff* skb) {
    return (bpf_get_hash_recalc(skb) & 1) ? -1 : 0;  // -1: matched, default class
}

// Matches everything: the filter that sends the rest out the first port. A BPF filter
// rather than u32 because u32 hash tables are shared by every u32 filter of the device,
// so replacing one by its handle (on a carrier change) could hit the ARP filter.
SEC("all") int every_flow(struct __sk_buff* skb) {
    (void)skb;
    return -1;
}

char _license[] SEC("license") = "GPL";
