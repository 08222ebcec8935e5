#include "arp_prober.h"

#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include "twinrail/netlink/arp.h"

namespace twinrail::planesteer {
namespace {

// Accept only ARP replies: skb->protocol is ARP, and the ARP op (offset 6 of the ARP
// header, where a SOCK_DGRAM socket's data starts) is 2.
std::vector<sock_filter> arpReplyFilter() {
    return {
        {BPF_LD | BPF_H | BPF_ABS, 0, 0, static_cast<uint32_t>(SKF_AD_OFF + SKF_AD_PROTOCOL)},
        {BPF_JMP | BPF_JEQ | BPF_K, 0, 3, ETH_P_ARP},
        {BPF_LD | BPF_H | BPF_ABS, 0, 0, 6},
        {BPF_JMP | BPF_JEQ | BPF_K, 0, 1, netlink::kArpReply},
        {BPF_RET | BPF_K, 0, 0, 0xffff},
        {BPF_RET | BPF_K, 0, 0, 0},
    };
}

constexpr MacAddr kBroadcast{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

}  // namespace

ArpProber::ArpProber(const PacketPortFactory& open, const std::vector<std::string>& ports, Now now,
                     Answer onAnswer)
    : now_(std::move(now)),
      onAnswer_(std::move(onAnswer)),
      matcher_(std::chrono::milliseconds(600), 4096) {
    for (size_t i = 0; i < ports.size(); ++i) {
        ports_.push_back(
            open(ports[i], [this, i](const uint8_t* d, size_t n, int t) { heard(i, d, n, t); }));
    }
}

void ArpProber::start() {
    for (auto& p : ports_) p->open(arpReplyFilter());
}

bool ArpProber::probe(size_t port, const MacAddr& ourMac, const IpAddr& ourIp, const IpAddr& peer) {
    ourIp_ = ourIp;
    auto pkt = netlink::buildArpRequest(ourMac, ourIp, peer);
    // Broadcast, as any ARP request: the leaf is the only one on the link.
    bool ok = ports_.at(port)->send(pkt.data(), pkt.size(), ETH_P_ARP, kBroadcast);
    ++(ok ? counters_.sent : counters_.sendErrors);
    if (ok) matcher_.asked(port, peer, now_());
    return ok;
}

void ArpProber::heard(size_t port, const uint8_t* data, size_t len, int pkttype) {
    if (pkttype == PACKET_OUTGOING) return;  // our kernel's own replies
    auto m = netlink::parseArp(data, len);
    if (!m || m->op != netlink::kArpReply || m->target != ourIp_) return;
    // Replies to the kernel's own requests (dual-send ARP) land here too: unmatched.
    if (matcher_.match(port, m->sender, m->senderMac, now_()) != Heard::Answer) return;
    ++counters_.answers;
    onAnswer_(port, m->sender, m->senderMac);
}

}  // namespace twinrail::planesteer
