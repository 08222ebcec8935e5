// Keepalive probes and proof of life, on the wire. A STALE neighbor says nothing about
// whether the host is alive, so hostrouted sends its own unicast ARP requests and IPv6
// neighbor solicitations (like the kernel's NUD probes, but on our schedule) and treats
// any ARP or NS/NA the host sends as proof of life. Packet sockets see every port in the
// namespace; the daemon filters by managed port.
#pragma once

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "twinrail/common/ip.h"
#include "twinrail/netlink/arp.h"

namespace twinrail::hostrouted {

struct ProbeTarget {
    int ifindex = 0;
    IpAddr target;
    std::optional<MacAddr> targetMac;  // unicast when known, else broadcast/multicast
    MacAddr ourMac{};
    IpAddr ourIp;  // IPv4: our address in the host's subnet; IPv6: our link-local
};

struct ProberStats {
    uint64_t sent = 0;
    uint64_t sendErrors = 0;
    uint64_t received = 0;
    uint64_t malformed = 0;
};

// The packet edge: ARP requests and neighbor solicitations out, the ARP/ND hosts send in.
// Prober is the real one (packet sockets); unit tests play frames in through a fake.
class HostProber {
  public:
    // The frame's source MAC comes along: proof of life must come from the host's own MAC.
    using SeenHandler =
        std::function<void(int ifindex, const IpAddr& ip, const std::optional<MacAddr>& mac)>;
    virtual ~HostProber() = default;
    virtual void start() = 0;  // throws std::system_error when packet sockets cannot be opened
    virtual bool probe(const ProbeTarget& t) = 0;
    virtual const ProberStats& stats() const = 0;
};
// onBatchEnd runs once after each read burst, so the owner flushes once, not per packet.
using HostProberFactory = std::function<std::unique_ptr<HostProber>(
    HostProber::SeenHandler onSeen, std::function<void()> onBatchEnd)>;

class Prober final : public HostProber {
  public:
    Prober(boost::asio::io_context& io, SeenHandler onSeen, std::function<void()> onBatchEnd);
    void start() override;
    bool probe(const ProbeTarget& t) override;
    const ProberStats& stats() const override { return stats_; }

  private:
    void armArp();
    void armNd();
    void readArp();
    void readNd();

    boost::asio::posix::stream_descriptor arp_;
    boost::asio::posix::stream_descriptor nd_;
    SeenHandler onSeen_;
    std::function<void()> onBatchEnd_;
    ProberStats stats_;
    std::array<uint8_t, 2048> buf_{};
};

// Packet builders and parsers, exposed for unit tests (ARP's are libs/netlink's).
using netlink::buildArpRequest;
std::array<uint8_t, 72> buildNeighborSolicitation(const MacAddr& ourMac, const IpAddr& ourIp,
                                                  const IpAddr& target, const IpAddr& dst);
std::optional<IpAddr> arpSender(const uint8_t* pkt, size_t len);
std::optional<IpAddr> ndSender(const uint8_t* pkt, size_t len);
IpAddr solicitedNodeMulticast(const IpAddr& target);

}  // namespace twinrail::hostrouted
