// The polarisation benchmark's stand-in for an ASIC's per-hop hash: a tc ingress program on
// every switch port that forgets the packet's flow hash. A lab packet arrives over veth with
// the hash its sender computed (a socket's txhash, or the emulated bond's flow hash), and
// the kernel's multipath routing uses that hash as it is (skb->l4_hash) instead of hashing
// the headers with the switch's fib_multipath_hash_seed. Without it every switch would use
// the sender's hash and the seeds would change nothing.
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#define SEC(name) __attribute__((section(name), used))

static void (*bpf_set_hash_invalid)(struct __sk_buff* skb) = (void*)BPF_FUNC_set_hash_invalid;

SEC("classifier") int clear_hash(struct __sk_buff* skb) {
    bpf_set_hash_invalid(skb);
    return TC_ACT_OK;  // direct action: go on as if the program were not there
}

char _license[] SEC("license") = "GPL";
