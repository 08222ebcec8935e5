// Fast notices' UDP socket (proto/fnn_wire.md), for senders and receivers alike. Bound to
// one address (a switch's loopback: what it sends from, and what relayed notices come to)
// or to every local IPv4 address (a server: each bond's address picks its key). Each
// datagram is handed up with its source and the local address it was sent to
// (IP_PKTINFO). Nothing blocks the loop: the socket is non-blocking, drained when asio
// says it is readable, and a send that finds the buffer full is dropped and counted (a
// notice is never worth waiting for: BGP carries the same news).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "twinrail/common/ip.h"

namespace twinrail::fnn {

struct Datagram {
    std::vector<uint8_t> bytes;
    IpAddr source;
    IpAddr destination;
};
using DatagramHandler = std::function<void(const Datagram&)>;

// What a daemon holds: receiving runs by itself; send() hands one datagram to the kernel.
class NoticeSocket {
  public:
    virtual ~NoticeSocket() = default;
    // Whether the kernel took it (false: dropped, counted by the real socket).
    virtual bool send(const IpAddr& to, uint16_t port, std::span<const uint8_t> bytes) = 0;
};
// `bind`: the local address, or nullopt for every local IPv4 address. Throws
// std::runtime_error when it cannot be bound.
using NoticeSocketFactory = std::function<std::unique_ptr<NoticeSocket>(
    std::optional<IpAddr> bind, uint16_t port, DatagramHandler)>;

// The wall clock notices' send times are in: ns since the Unix epoch.
uint64_t wallClockNs();

class UdpNoticeSocket final : public NoticeSocket {
  public:
    UdpNoticeSocket(boost::asio::io_context& io, std::optional<IpAddr> bind, uint16_t port,
                    DatagramHandler handler);
    ~UdpNoticeSocket() override;
    UdpNoticeSocket(const UdpNoticeSocket&) = delete;
    UdpNoticeSocket& operator=(const UdpNoticeSocket&) = delete;

    bool send(const IpAddr& to, uint16_t port, std::span<const uint8_t> bytes) override;
    uint64_t sendErrors() const { return sendErrors_; }

  private:
    void arm();
    void drain();
    boost::asio::ip::udp::socket socket_;
    DatagramHandler handler_;
    uint64_t sendErrors_ = 0;
};

}  // namespace twinrail::fnn
