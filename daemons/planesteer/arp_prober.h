// Sends an ARP request for a peer out one given port of a bond, bypassing the bond, and
// hears who answers on which port. A packet socket per port: ETH_P_ALL, because a bond
// (and the lab's emulated one) takes its ports' frames before protocol handlers run,
// while taps still see them; a classic BPF filter in the kernel keeps everything but ARP
// replies out of user space, so a port carrying 200G of RDMA costs nothing here.
#pragma once

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "twinrail/common/ip.h"

namespace twinrail::planesteer {

struct ProberCounters {
    uint64_t sent = 0, sendErrors = 0, answers = 0;
};

class ArpProber {
  public:
    using Answer = std::function<void(size_t port, const IpAddr& peer)>;
    ArpProber(boost::asio::io_context& io, std::vector<std::string> ports, Answer onAnswer);
    void start();  // throws std::system_error when a socket cannot be opened
    // `ourMac`/`ourIp`: the bond's; returns false when the kernel refused to send.
    bool probe(size_t port, const MacAddr& ourMac, const IpAddr& ourIp, const IpAddr& peer);
    const ProberCounters& counters() const { return counters_; }

  private:
    struct Port {
        std::string name;
        int ifindex = 0;
        std::unique_ptr<boost::asio::posix::stream_descriptor> fd;
    };
    void arm(size_t port);
    void read(size_t port);

    boost::asio::io_context& io_;
    std::vector<Port> ports_;
    Answer onAnswer_;
    ProberCounters counters_;
    std::array<uint8_t, 2048> buf_{};
    IpAddr ourIp_;
};

}  // namespace twinrail::planesteer
