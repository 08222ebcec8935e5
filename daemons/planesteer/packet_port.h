// One bond port's packet edge: frames out of exactly this port (bypassing the bond), and
// the frames a classic BPF filter lets up. The real one (SocketPacketPort) is a packet
// socket (SOCK_DGRAM: data starts at the network header) bound to the port with
// ETH_P_ALL, because a bond (and the lab's emulated one) takes its ports' frames before
// protocol handlers run, while taps still see them, in both directions. Unit tests play
// frames in through a fake wire (tests/fakes/twinrail_fakes/planesteer_wire.h).
#pragma once

#include <linux/filter.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "twinrail/common/ip.h"

namespace twinrail::planesteer {

class PacketPort {
  public:
    // `pkttype`: PACKET_HOST, PACKET_OUTGOING, ... of each frame the filter let through.
    using Handler = std::function<void(const uint8_t* data, size_t len, int pkttype)>;
    virtual ~PacketPort() = default;
    // Throws std::system_error naming the port when it cannot be set up.
    virtual void open(const std::vector<sock_filter>& filter) = 0;
    // Ethernet protocol `proto` to `dstMac`; false when the kernel refused it.
    virtual bool send(const uint8_t* data, size_t len, uint16_t proto, const MacAddr& dstMac) = 0;
};
// One port by name; frames reach `onFrame` on the daemon's loop once it is open.
using PacketPortFactory = std::function<std::unique_ptr<PacketPort>(const std::string& port,
                                                                    PacketPort::Handler onFrame)>;

class SocketPacketPort final : public PacketPort {
  public:
    SocketPacketPort(boost::asio::io_context& io, std::string name, Handler onFrame);
    void open(const std::vector<sock_filter>& filter) override;
    bool send(const uint8_t* data, size_t len, uint16_t proto, const MacAddr& dstMac) override;

  private:
    void arm();
    void read();

    boost::asio::io_context& io_;
    std::string name_;
    Handler onFrame_;
    int ifindex_ = 0;
    std::unique_ptr<boost::asio::posix::stream_descriptor> fd_;
    std::array<uint8_t, 2048> buf_{};
};

}  // namespace twinrail::planesteer
