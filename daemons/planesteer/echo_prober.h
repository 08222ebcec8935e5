// Peers on other rails are behind the rail gateway, whose proxy ARP answers whichever
// plane lost them, so for them planesteer asks the peer itself: an ICMP echo request out
// of each port to the gateway's MAC (bypassing the bond), the port carried in the
// sequence number. A plane that still delivers gets the reply back, through whichever
// plane the peer's bond picks. Which peers to ask is learned from the NIC's own traffic:
// the same sockets see the ports' outgoing IPv4 packets, one in `sampleOneIn` chosen in
// the kernel (BPF random), 20 header bytes each, ICMP left out (our probes, and pings).
// Traffic that bypasses the kernel (RDMA) is neither seen nor steered. Replies count only
// when they answer a request of ours (probe_match.h); the rest are counted and dropped.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "arp_prober.h"
#include "packet_port.h"
#include "probe_match.h"

namespace twinrail::planesteer {

class EchoProber {
  public:
    using Reply = std::function<void(size_t port, const IpAddr& peer)>;  // port it left by
    using Destination = std::function<void(const IpAddr& dst)>;
    EchoProber(const PacketPortFactory& open, const std::vector<std::string>& ports,
               uint32_t sampleOneIn, NonceKey key, Now now, Reply onReply,
               Destination onDestination);
    void start();  // throws std::system_error when a port cannot be opened
    bool probe(size_t port, const MacAddr& gatewayMac, const IpAddr& ourIp, const IpAddr& peer);
    // How long a request may wait for its reply, and how many may wait at once.
    void setLimits(std::chrono::milliseconds window, size_t capacity) {
        matcher_.setLimits(window, capacity);
    }
    void expire() { matcher_.expire(now_()); }
    const ProberCounters& counters() const { return counters_; }
    const MatchCounters& matchCounters() const { return matcher_.counters(); }

  private:
    void heard(const uint8_t* data, size_t len, int pkttype);

    std::vector<std::unique_ptr<PacketPort>> ports_;
    uint32_t sampleOneIn_;
    Now now_;
    Reply onReply_;
    Destination onDestination_;
    ProberCounters counters_;
    EchoMatcher matcher_;
    IpAddr ourIp_;
    uint16_t counter_ = 0;
};

// The nonce key, from getrandom(); throws std::system_error when the kernel has none.
NonceKey randomNonceKey();

// The kernel filter both directions share (exposed for the unit test of its layout).
std::vector<sock_filter> echoAndSampleFilter(uint32_t sampleOneIn);

}  // namespace twinrail::planesteer
