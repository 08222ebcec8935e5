// One UDP datagram off an IPv6 socket with IPV6_RECVPKTINFO set: its length (MSG_TRUNC:
// the real size, larger than the buffer when it was cut), the sender as the kernel saw it
// (IPv4 senders as ::ffff:a.b.c.d), and the interface it arrived on. Both of pathqd's
// receivers (INT reports, link probes) decide whom to believe from these two.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstring>
#include <optional>
#include <span>

namespace twinrail::pathqd {

struct Datagram {
    size_t length = 0;
    sockaddr_in6 from{};
    bool hasSource = false;  // the kernel gave an IPv6 (or mapped IPv4) source
    int ifindex = 0;         // 0 when the kernel said nothing
};

// nullopt when there is nothing to read (or the socket failed).
inline std::optional<Datagram> receiveDatagram(int fd, std::span<uint8_t> buf) {
    Datagram d;
    std::array<char, CMSG_SPACE(sizeof(in6_pktinfo))> control{};
    iovec iov{buf.data(), buf.size()};
    msghdr msg{};
    msg.msg_name = &d.from;
    msg.msg_namelen = sizeof d.from;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    ssize_t n = ::recvmsg(fd, &msg, MSG_TRUNC);
    if (n < 0) return std::nullopt;
    d.length = static_cast<size_t>(n);
    d.hasSource = msg.msg_namelen >= sizeof d.from && d.from.sin6_family == AF_INET6;
    d.ifindex = static_cast<int>(d.from.sin6_scope_id);
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
            in6_pktinfo info{};
            std::memcpy(&info, CMSG_DATA(c), sizeof info);
            d.ifindex = static_cast<int>(info.ipi6_ifindex);
        }
    }
    return d;
}

}  // namespace twinrail::pathqd
