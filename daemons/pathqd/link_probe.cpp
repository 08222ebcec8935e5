#include "link_probe.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "twinrail/common/log.h"
#include "udp_receive.h"

namespace twinrail::pathqd {
namespace {

constexpr uint8_t kMagic[4] = {'T', 'R', 'P', 'Q'};
constexpr uint8_t kVersion = 1;

uint64_t nowNs() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
}

void put(uint8_t* p, uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) *p++ = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get(const uint8_t* p, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
    return v;
}

}  // namespace

std::array<uint8_t, kProbeBytes> encodeProbe(const ProbeMessage& m) {
    std::array<uint8_t, kProbeBytes> b{};
    std::memcpy(b.data(), kMagic, 4);
    b[4] = kVersion;
    b[5] = m.type;
    b[6] = m.level;
    put(&b[8], m.sequence, 4);
    put(&b[12], m.timestampNs, 8);
    put(&b[20], m.peerReceiveNs, 8);
    return b;
}

std::optional<ProbeMessage> decodeProbe(std::span<const uint8_t> b) {
    if (b.size() != kProbeBytes || std::memcmp(b.data(), kMagic, 4) != 0 || b[4] != kVersion)
        return std::nullopt;
    if (b[5] != 1 && b[5] != 2) return std::nullopt;
    ProbeMessage m;
    m.type = b[5];
    m.level = b[6];
    m.sequence = static_cast<uint32_t>(get(&b[8], 4));
    m.timestampNs = get(&b[12], 8);
    m.peerReceiveNs = get(&b[20], 8);
    return m;
}

bool trustedProbe(const in6_addr& source, bool probedPort) {
    return probedPort && IN6_IS_ADDR_LINKLOCAL(&source);
}

LinkProber::LinkProber(boost::asio::io_context& io, uint16_t port) : port_(port) {
    fd_ = ::socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error(std::string("probe socket: ") + std::strerror(errno));
    descriptor_ = std::make_unique<boost::asio::posix::stream_descriptor>(io, fd_);
}

LinkProber::~LinkProber() {
    boost::system::error_code ignored;
    if (descriptor_) descriptor_->close(ignored);  // closes fd_
    for (const auto& [ifindex, fd] : portFds_)
        if (fd >= 0) ::close(fd);
}

int LinkProber::portSocket(int ifindex) {
    auto it = portFds_.find(ifindex);
    if (it != portFds_.end()) return it->second;
    int fd = ::socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int zero = 0, hops = 1;
    if (fd >= 0) {
        setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, &zero, sizeof zero);
        setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops, sizeof hops);
        setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifindex, sizeof ifindex);
        sockaddr_in6 dst{};
        dst.sin6_family = AF_INET6;
        dst.sin6_port = htons(port_);
        inet_pton(AF_INET6, "ff02::1", &dst.sin6_addr);
        dst.sin6_scope_id = static_cast<uint32_t>(ifindex);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof dst) != 0) {
            ::close(fd);
            fd = -1;  // no IPv6 on the port yet: retried on the next probe
        }
    }
    if (fd >= 0) portFds_[ifindex] = fd;
    return fd;
}

void LinkProber::start() {
    // This socket only receives; the per-port sockets send (portSocket()).
    int one = 1;
    setsockopt(fd_, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    setsockopt(fd_, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one);
    sockaddr_in6 addr{};
    addr.sin6_family = AF_INET6;
    addr.sin6_port = htons(port_);
    addr.sin6_addr = in6addr_any;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0) {
        throw std::runtime_error("probe socket: cannot bind UDP port " + std::to_string(port_) +
                                 ": " + std::strerror(errno));
    }
    armRead();
}

void LinkProber::probe(int ifindex, uint8_t ourLevel) {
    levels_[ifindex] = ourLevel;
    ProbeMessage m{1, ourLevel, ++sequence_, nowNs(), 0};
    auto bytes = encodeProbe(m);
    int fd = portSocket(ifindex);
    if (fd < 0 || ::send(fd, bytes.data(), bytes.size(), 0) < 0) {
        ++stats_.sendErrors;  // link down or no IPv6 yet: the missing reply says the rest
    } else {
        ++stats_.sent;
    }
}

const LinkProber::PortView* LinkProber::view(int ifindex) const {
    auto it = ports_.find(ifindex);
    return it == ports_.end() ? nullptr : &it->second;
}

void LinkProber::armRead() {
    descriptor_->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                            [this](const boost::system::error_code& ec) {
                                if (ec) return;
                                receive();
                                armRead();
                            });
}

void LinkProber::receive() {
    for (int i = 0; i < 256; ++i) {  // drain, bounded so one busy socket cannot starve the loop
        std::array<uint8_t, 64> buf{};
        auto d = receiveDatagram(fd_, buf);
        if (!d) return;
        const int ifindex = d->ifindex;
        const sockaddr_in6& from = d->from;
        auto m = d->length <= buf.size()
                     ? decodeProbe(std::span<const uint8_t>(buf.data(), d->length))
                     : std::nullopt;
        if (!m) {
            ++stats_.malformed;
            continue;
        }
        if (!trustedProbe(from.sin6_addr, levels_.count(ifindex) != 0)) {
            ++stats_.refused;
            continue;
        }
        auto now = Clock::now();
        PortView& port = ports_[ifindex];
        port.peerLevel = m->level;
        port.peerLevelAt = now;
        if (m->type == 1) {  // a neighbour's probe: echo it with our level on this link
            auto it = levels_.find(ifindex);
            ProbeMessage reply{2, it == levels_.end() ? uint8_t{0} : it->second, m->sequence,
                               m->timestampNs, nowNs()};
            auto bytes = encodeProbe(reply);
            // Back to ff02::1 on the same port: only the prober is on the other end.
            int fd = portSocket(ifindex);
            if (fd >= 0 && ::send(fd, bytes.data(), bytes.size(), 0) >= 0) ++stats_.answered;
            continue;
        }
        uint64_t now_ns = nowNs();
        if (m->timestampNs > now_ns) {
            ++stats_.malformed;
            continue;
        }
        ++stats_.replies;
        port.rttSeconds = static_cast<double>(now_ns - m->timestampNs) / 1e9;
        port.forwardSeconds =
            (static_cast<double>(m->peerReceiveNs) - static_cast<double>(m->timestampNs)) / 1e9;
        port.lastReply = now;
    }
}

}  // namespace twinrail::pathqd
