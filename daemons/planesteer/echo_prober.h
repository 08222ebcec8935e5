// Peers on other rails are behind the rail gateway, whose proxy ARP answers whichever
// plane lost them, so for them planesteer asks the peer itself: an ICMP echo request out
// of each port to the gateway's MAC (bypassing the bond), the port carried in the
// sequence number. A plane that still delivers gets the reply back, through whichever
// plane the peer's bond picks. Which peers to ask is learned from the NIC's own traffic:
// the same sockets see the ports' outgoing IPv4 packets, one in `sampleOneIn` chosen in
// the kernel (BPF random), 20 header bytes each, ICMP left out (our probes, and pings).
// Traffic that bypasses the kernel (RDMA) is neither seen nor steered.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "arp_prober.h"
#include "packet_port.h"

namespace twinrail::planesteer {

class EchoProber {
  public:
    using Reply = std::function<void(size_t port, const IpAddr& peer)>;  // port it left by
    using Destination = std::function<void(const IpAddr& dst)>;
    EchoProber(boost::asio::io_context& io, const std::vector<std::string>& ports,
               uint32_t sampleOneIn, Reply onReply, Destination onDestination);
    void start();  // throws std::system_error when a socket cannot be opened
    bool probe(size_t port, const MacAddr& gatewayMac, const IpAddr& ourIp, const IpAddr& peer);
    const ProberCounters& counters() const { return counters_; }

  private:
    void heard(const uint8_t* data, size_t len, int pkttype);

    std::vector<std::unique_ptr<PacketPort>> ports_;
    uint32_t sampleOneIn_;
    Reply onReply_;
    Destination onDestination_;
    ProberCounters counters_;
    IpAddr ourIp_;
    uint16_t counter_ = 0;
};

// The kernel filter both directions share (exposed for the unit test of its layout).
std::vector<sock_filter> echoAndSampleFilter(uint32_t sampleOneIn);

}  // namespace twinrail::planesteer
