#include "echo_prober.h"

#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/random.h>

#include <cerrno>
#include <system_error>

#include "echo_frame.h"

namespace twinrail::planesteer {

std::vector<sock_filter> echoAndSampleFilter(uint32_t sampleOneIn) {
    // Offsets are from the IPv4 header (SOCK_DGRAM). Jumps count from the next
    // instruction; every failed test goes to the last one (drop).
    constexpr uint32_t kAnc = SKF_AD_OFF;
    return {
        /* 0 */ {BPF_LD | BPF_H | BPF_ABS, 0, 0, kAnc + SKF_AD_PROTOCOL},
        /* 1 */ {BPF_JMP | BPF_JEQ | BPF_K, 0, 16, ETH_P_IP},
        /* 2 */ {BPF_LD | BPF_W | BPF_ABS, 0, 0, kAnc + SKF_AD_PKTTYPE},
        /* 3 */ {BPF_JMP | BPF_JEQ | BPF_K, 8, 0, PACKET_OUTGOING},
        // Incoming: an ICMP echo reply with our identifier.
        /* 4 */ {BPF_LD | BPF_B | BPF_ABS, 0, 0, 9},
        /* 5 */ {BPF_JMP | BPF_JEQ | BPF_K, 0, 12, 1},
        /* 6 */ {BPF_LDX | BPF_B | BPF_MSH, 0, 0, 0},
        /* 7 */ {BPF_LD | BPF_B | BPF_IND, 0, 0, 0},
        /* 8 */ {BPF_JMP | BPF_JEQ | BPF_K, 0, 9, 0},
        /* 9 */ {BPF_LD | BPF_H | BPF_IND, 0, 0, 4},
        /* 10 */ {BPF_JMP | BPF_JEQ | BPF_K, 0, 7, kEchoId},
        /* 11 */ {BPF_RET | BPF_K, 0, 0, 256},
        // Outgoing: not ICMP, one in sampleOneIn, its header only.
        /* 12 */ {BPF_LD | BPF_B | BPF_ABS, 0, 0, 9},
        /* 13 */ {BPF_JMP | BPF_JEQ | BPF_K, 4, 0, 1},
        /* 14 */ {BPF_LD | BPF_W | BPF_ABS, 0, 0, kAnc + SKF_AD_RANDOM},
        /* 15 */ {BPF_ALU | BPF_AND | BPF_K, 0, 0, sampleOneIn - 1},
        /* 16 */ {BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0},
        /* 17 */ {BPF_RET | BPF_K, 0, 0, 20},
        /* 18 */ {BPF_RET | BPF_K, 0, 0, 0},
    };
}

EchoProber::EchoProber(const PacketPortFactory& open, const std::vector<std::string>& ports,
                       uint32_t sampleOneIn, NonceKey key, Now now, Reply onReply,
                       Destination onDestination)
    : sampleOneIn_(sampleOneIn),
      now_(std::move(now)),
      onReply_(std::move(onReply)),
      onDestination_(std::move(onDestination)),
      matcher_(key, std::chrono::milliseconds(600), 4096) {
    for (const auto& p : ports) {
        ports_.push_back(open(p, [this](const uint8_t* d, size_t n, int t) { heard(d, n, t); }));
    }
}

void EchoProber::start() {
    for (auto& p : ports_) p->open(echoAndSampleFilter(sampleOneIn_));
}

bool EchoProber::probe(size_t port, const MacAddr& gatewayMac, const IpAddr& ourIp,
                       const IpAddr& peer) {
    ourIp_ = ourIp;
    uint16_t seq = echoSeq(port, counter_++);
    uint64_t nonce = matcher_.issue(port, peer, seq, now_());
    auto pkt = buildEchoRequest(ourIp, peer, kEchoId, seq, nonce);
    bool ok = ports_.at(port)->send(pkt.data(), pkt.size(), ETH_P_IP, gatewayMac);
    ++(ok ? counters_.sent : counters_.sendErrors);
    return ok;
}

void EchoProber::heard(const uint8_t* data, size_t len, int pkttype) {
    if (pkttype == PACKET_OUTGOING) {
        if (auto dst = ipv4Destination(data, len)) onDestination_(*dst);
        return;
    }
    auto r = parseEchoReply(data, len);
    if (!r || r->id != kEchoId || r->to != ourIp_) return;
    // Which port it arrived on does not matter (the peer's bond picks the way back); the
    // port it counts for is the one the matching request left by, not the seq's bit.
    auto v = matcher_.match(r->nonce, r->from, r->seq, now_());
    if (v.heard != Heard::Answer || v.port >= ports_.size()) return;
    ++counters_.answers;
    onReply_(v.port, r->from);
}

NonceKey randomNonceKey() {
    NonceKey key{};
    auto* p = reinterpret_cast<uint8_t*>(key.data());
    size_t got = 0;
    while (got < sizeof(key)) {
        ssize_t n = getrandom(p + got, sizeof(key) - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw std::system_error(errno, std::generic_category(), "getrandom");
        got += static_cast<size_t>(n);
    }
    return key;
}

}  // namespace twinrail::planesteer
