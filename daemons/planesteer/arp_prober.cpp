#include "arp_prober.h"

#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>

#include <cstring>
#include <system_error>

#include "twinrail/netlink/arp.h"

namespace twinrail::planesteer {
namespace {

// Accept only ARP replies: skb->protocol is ARP, and the ARP op (offset 6 of the ARP
// header, where a SOCK_DGRAM socket's data starts) is 2.
int attachArpReplyFilter(int fd) {
    static sock_filter code[] = {
        {BPF_LD | BPF_H | BPF_ABS, 0, 0, static_cast<uint32_t>(SKF_AD_OFF + SKF_AD_PROTOCOL)},
        {BPF_JMP | BPF_JEQ | BPF_K, 0, 3, ETH_P_ARP},
        {BPF_LD | BPF_H | BPF_ABS, 0, 0, 6},
        {BPF_JMP | BPF_JEQ | BPF_K, 0, 1, netlink::kArpReply},
        {BPF_RET | BPF_K, 0, 0, 0xffff},
        {BPF_RET | BPF_K, 0, 0, 0},
    };
    sock_fprog prog{static_cast<unsigned short>(sizeof(code) / sizeof(code[0])), code};
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

}  // namespace

ArpProber::ArpProber(boost::asio::io_context& io, std::vector<std::string> ports, Answer onAnswer)
    : io_(io), onAnswer_(std::move(onAnswer)) {
    for (auto& p : ports) ports_.push_back(Port{std::move(p), 0, nullptr});
}

void ArpProber::start() {
    for (size_t i = 0; i < ports_.size(); ++i) {
        Port& p = ports_[i];
        p.ifindex = static_cast<int>(if_nametoindex(p.name.c_str()));
        if (p.ifindex == 0)
            throw std::system_error(errno, std::generic_category(), "no port " + p.name);
        int fd = ::socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
        if (fd < 0) throw std::system_error(errno, std::generic_category(), "packet socket");
        if (attachArpReplyFilter(fd) != 0) {
            int e = errno;
            ::close(fd);
            throw std::system_error(e, std::generic_category(), "ARP filter on " + p.name);
        }
        sockaddr_ll at{};
        at.sll_family = AF_PACKET;
        at.sll_protocol = htons(ETH_P_ALL);
        at.sll_ifindex = p.ifindex;
        if (::bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof(at)) != 0) {
            int e = errno;
            ::close(fd);
            throw std::system_error(e, std::generic_category(), "bind to " + p.name);
        }
        p.fd = std::make_unique<boost::asio::posix::stream_descriptor>(io_, fd);
        arm(i);
    }
}

bool ArpProber::probe(size_t port, const MacAddr& ourMac, const IpAddr& ourIp, const IpAddr& peer) {
    ourIp_ = ourIp;
    const Port& p = ports_.at(port);
    if (!p.fd) return false;
    auto pkt = netlink::buildArpRequest(ourMac, ourIp, peer);
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_protocol = htons(ETH_P_ARP);
    to.sll_ifindex = p.ifindex;
    to.sll_halen = 6;
    std::memset(to.sll_addr, 0xff, 6);  // as any ARP request: the leaf is the only one there
    bool ok =
        ::sendto(p.fd->native_handle(), pkt.data(), pkt.size(), 0, reinterpret_cast<sockaddr*>(&to),
                 sizeof(to)) == static_cast<ssize_t>(pkt.size());
    ++(ok ? counters_.sent : counters_.sendErrors);
    return ok;
}

void ArpProber::arm(size_t port) {
    ports_[port].fd->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                                [this, port](const boost::system::error_code& ec) {
                                    if (ec) return;
                                    read(port);
                                });
}

void ArpProber::read(size_t port) {
    for (int i = 0; i < 256; ++i) {  // a burst, then back to the loop
        sockaddr_ll from{};
        socklen_t len = sizeof(from);
        ssize_t n = ::recvfrom(ports_[port].fd->native_handle(), buf_.data(), buf_.size(), 0,
                               reinterpret_cast<sockaddr*>(&from), &len);
        if (n <= 0) break;
        if (from.sll_pkttype == PACKET_OUTGOING) continue;  // our kernel's own replies
        auto m = netlink::parseArp(buf_.data(), static_cast<size_t>(n));
        if (!m || m->op != netlink::kArpReply || m->target != ourIp_) continue;
        ++counters_.answers;
        onAnswer_(port, m->sender);
    }
    arm(port);
}

}  // namespace twinrail::planesteer
