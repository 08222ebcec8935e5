#include "packet_port.h"

#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>

#include <cstring>
#include <system_error>

#include "twinrail/common/log.h"

namespace twinrail::planesteer {

SocketPacketPort::SocketPacketPort(boost::asio::io_context& io, std::string name, Handler onFrame)
    : io_(io), name_(std::move(name)), onFrame_(std::move(onFrame)) {}

void SocketPacketPort::open(const std::vector<sock_filter>& filter) {
    ifindex_ = static_cast<int>(if_nametoindex(name_.c_str()));
    if (ifindex_ == 0) throw std::system_error(errno, std::generic_category(), "no port " + name_);
    int fd = ::socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "packet socket");
    auto fail = [fd, this](const std::string& what) {
        int e = errno;
        ::close(fd);
        throw std::system_error(e, std::generic_category(), what + " on " + name_);
    };
    std::vector<sock_filter> code = filter;
    sock_fprog prog{static_cast<unsigned short>(code.size()), code.data()};
    if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) != 0) fail("filter");
    sockaddr_ll at{};
    at.sll_family = AF_PACKET;
    at.sll_protocol = htons(ETH_P_ALL);
    at.sll_ifindex = ifindex_;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof(at)) != 0) fail("bind");
    fd_ = std::make_unique<boost::asio::posix::stream_descriptor>(io_, fd);
    arm();
}

bool SocketPacketPort::send(const uint8_t* data, size_t len, uint16_t proto,
                            const MacAddr& dstMac) {
    if (!fd_) return false;
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_protocol = htons(proto);
    to.sll_ifindex = ifindex_;
    to.sll_halen = 6;
    std::memcpy(to.sll_addr, dstMac.data(), 6);
    return ::sendto(fd_->native_handle(), data, len, 0, reinterpret_cast<sockaddr*>(&to),
                    sizeof(to)) == static_cast<ssize_t>(len);
}

void SocketPacketPort::arm() {
    fd_->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                    [this](const boost::system::error_code& ec) {
                        if (ec) return;
                        read();
                    });
}

void SocketPacketPort::read() {
    for (int i = 0; i < 256; ++i) {  // a burst, then back to the loop
        sockaddr_ll from{};
        socklen_t len = sizeof(from);
        ssize_t n = ::recvfrom(fd_->native_handle(), buf_.data(), buf_.size(), 0,
                               reinterpret_cast<sockaddr*>(&from), &len);
        if (n <= 0) break;
        // Nothing the owner throws may leave this asio callback: the frame is dropped.
        try {
            onFrame_(buf_.data(), static_cast<size_t>(n), from.sll_pkttype);
        } catch (const std::exception& e) {
            log::error(name_, ": a frame was dropped: ", e.what());
        }
    }
    arm();
}

}  // namespace twinrail::planesteer
