// One bond port's packet socket (SOCK_DGRAM: data starts at the network header), with a
// classic BPF filter so that the kernel hands up only what the owner wants; sends out of
// exactly this port, bypassing the bond. ETH_P_ALL, because a bond (and the lab's
// emulated one) takes its ports' frames before protocol handlers run, while taps still
// see them, in both directions.
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
    PacketPort(boost::asio::io_context& io, std::string name, Handler onFrame);
    // Throws std::system_error naming the port when the socket cannot be set up.
    void open(const std::vector<sock_filter>& filter);
    // Ethernet protocol `proto` to `dstMac`; false when the kernel refused it.
    bool send(const uint8_t* data, size_t len, uint16_t proto, const MacAddr& dstMac);
    const std::string& name() const { return name_; }

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
