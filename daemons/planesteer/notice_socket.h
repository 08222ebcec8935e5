// Fast notices' socket: UDP on a port, every local IPv4 address, each datagram handed up
// with its source and the local address it was sent to (IP_PKTINFO: each bond has a key of
// its own). Reads never block the loop: the socket is non-blocking and drained when asio
// says it is readable.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <cstdint>
#include <functional>
#include <vector>

#include "twinrail/common/ip.h"

namespace twinrail::planesteer {

struct Datagram {
    std::vector<uint8_t> bytes;
    IpAddr source;
    IpAddr destination;
};
using DatagramHandler = std::function<void(const Datagram&)>;

class DatagramSource {
  public:
    virtual ~DatagramSource() = default;
};
// Throws std::runtime_error when the port cannot be bound.
using DatagramSourceFactory =
    std::function<std::unique_ptr<DatagramSource>(uint16_t port, DatagramHandler)>;

class UdpNoticeSocket final : public DatagramSource {
  public:
    UdpNoticeSocket(boost::asio::io_context& io, uint16_t port, DatagramHandler handler);
    ~UdpNoticeSocket() override;
    UdpNoticeSocket(const UdpNoticeSocket&) = delete;
    UdpNoticeSocket& operator=(const UdpNoticeSocket&) = delete;

  private:
    void arm();
    void drain();
    boost::asio::ip::udp::socket socket_;
    DatagramHandler handler_;
};

}  // namespace twinrail::planesteer
