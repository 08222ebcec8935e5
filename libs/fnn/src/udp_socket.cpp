#include "twinrail/fnn/udp_socket.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "twinrail/common/log.h"

namespace twinrail::fnn {

namespace {
// More than the largest notice (1,232 bytes): a longer datagram arrives truncated and the
// parser refuses it by its length.
constexpr size_t kBuffer = 2048;
// Datagrams handled per wake-up before the loop gets a turn.
constexpr int kBurst = 64;
constexpr int kReceiveBuffer = 4 << 20;
}  // namespace

UdpNoticeSocket::UdpNoticeSocket(boost::asio::io_context& io, std::optional<IpAddr> bind,
                                 uint16_t port, DatagramHandler handler)
    : socket_(io), handler_(std::move(handler)) {
    namespace ip = boost::asio::ip;
    if (bind && !bind->isV4()) throw std::runtime_error("fast notices: IPv4 only for now");
    ip::address_v4 local = ip::address_v4::any();
    if (bind) {
        local = ip::address_v4(ip::address_v4::bytes_type{bind->data()[0], bind->data()[1],
                                                          bind->data()[2], bind->data()[3]});
    }
    boost::system::error_code ec;
    socket_.open(ip::udp::v4(), ec);
    if (!ec) socket_.bind(ip::udp::endpoint(local, port), ec);
    if (ec) {
        throw std::runtime_error("fast notices: UDP port " + std::to_string(port) + ": " +
                                 ec.message());
    }
    int on = 1;
    if (::setsockopt(socket_.native_handle(), IPPROTO_IP, IP_PKTINFO, &on, sizeof on) != 0)
        throw std::runtime_error(std::string("fast notices: IP_PKTINFO: ") + std::strerror(errno));
    // Room for a burst (every switch of both planes telling of one event at once) while
    // the loop is busy: 4 MiB, past rmem_max with CAP_NET_ADMIN, else as much as allowed.
    int size = kReceiveBuffer;
    if (::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0)
        ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    socket_.non_blocking(true);
    arm();
}

UdpNoticeSocket::~UdpNoticeSocket() {
    boost::system::error_code ec;
    socket_.close(ec);
}

uint64_t wallClockNs() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
}

bool UdpNoticeSocket::send(const IpAddr& to, uint16_t port, std::span<const uint8_t> bytes) {
    if (!to.isV4()) {
        ++sendErrors_;
        return false;
    }
    sockaddr_in dst{};
    dst.sin_family = AF_INET;
    dst.sin_port = htons(port);
    std::memcpy(&dst.sin_addr, to.data(), 4);
    ssize_t n = ::sendto(socket_.native_handle(), bytes.data(), bytes.size(), MSG_DONTWAIT,
                         reinterpret_cast<const sockaddr*>(&dst), sizeof dst);
    if (n == static_cast<ssize_t>(bytes.size())) return true;
    ++sendErrors_;
    return false;
}

void UdpNoticeSocket::arm() {
    socket_.async_wait(boost::asio::ip::udp::socket::wait_read,
                       [this](const boost::system::error_code& ec) {
                           if (ec) return;  // closed: the daemon is going away
                           drain();
                           arm();
                       });
}

void UdpNoticeSocket::drain() {
    std::array<uint8_t, kBuffer> buf{};
    std::array<char, CMSG_SPACE(sizeof(in_pktinfo))> control{};
    for (int i = 0; i < kBurst; ++i) {
        sockaddr_in from{};
        iovec iov{buf.data(), buf.size()};
        msghdr msg{};
        msg.msg_name = &from;
        msg.msg_namelen = sizeof from;
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.data();
        msg.msg_controllen = control.size();
        ssize_t n = ::recvmsg(socket_.native_handle(), &msg, MSG_DONTWAIT);
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                log::warning("fast notices: recvmsg: ", std::strerror(errno));
            return;
        }
        Datagram d;
        d.bytes.assign(buf.begin(), buf.begin() + std::min<ssize_t>(n, kBuffer));
        d.source = IpAddr::v4(reinterpret_cast<const uint8_t*>(&from.sin_addr));
        for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level != IPPROTO_IP || c->cmsg_type != IP_PKTINFO) continue;
            in_pktinfo info{};
            std::memcpy(&info, CMSG_DATA(c), sizeof info);
            d.destination = IpAddr::v4(reinterpret_cast<const uint8_t*>(&info.ipi_addr));
        }
        if ((msg.msg_flags & MSG_TRUNC) != 0) d.bytes.push_back(0);  // longer than any notice
        handler_(d);
    }
}

}  // namespace twinrail::fnn
