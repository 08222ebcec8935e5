#include "prober.h"

#include <arpa/inet.h>

#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <netinet/icmp6.h>
#include <netinet/ip6.h>
#include <sys/socket.h>
#include <unistd.h>
#include <algorithm>
#include <span>

#include <cstring>
#include <system_error>

#include "twinrail/common/log.h"

namespace twinrail::hostrouted {
namespace {

constexpr size_t kIp6Header = 40;
constexpr uint8_t kIcmp6 = 58;

int openPacketSocket(uint16_t ethertype) {
    int fd = ::socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ethertype));
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "packet socket");
    return fd;
}

// The sockets listen on ETH_P_ALL, so they see a frame before tc ingress does: a claim the
// kernel ARP/ND guard drops (arp_guard.h) still reaches hostrouted, which records it.
// A socket bound to one ethertype would only see what tc let through.
void attachFilter(int fd, std::span<sock_filter> code, const char* what) {
    sock_fprog prog{static_cast<unsigned short>(code.size()), code.data()};
    if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) != 0)
        throw std::system_error(errno, std::generic_category(), what);
}

void attachArpFilter(int fd) {
    sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_H | BPF_ABS, static_cast<uint32_t>(SKF_AD_OFF + SKF_AD_PROTOCOL)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_ARP, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, 0xffff),
        BPF_STMT(BPF_RET | BPF_K, 0),
    };
    attachFilter(fd, code, "attach ARP filter");
}

void attachNdFilter(int fd) {
    // Kernel-side filter: keep only ICMPv6 NS (135) and NA (136) with no extension
    // headers, so routine IPv6 traffic never reaches user space.
    sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_H | BPF_ABS, static_cast<uint32_t>(SKF_AD_OFF + SKF_AD_PROTOCOL)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IPV6, 0, 6),
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 6),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kIcmp6, 0, 4),
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 40),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ND_NEIGHBOR_SOLICIT, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ND_NEIGHBOR_ADVERT, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, 0xffff),
        BPF_STMT(BPF_RET | BPF_K, 0),
    };
    attachFilter(fd, code, "attach ND filter");
}

uint16_t icmp6Checksum(const uint8_t* src, const uint8_t* dst, const uint8_t* icmp, size_t len) {
    uint32_t sum = 0;
    auto add = [&sum](const uint8_t* p, size_t n) {
        for (size_t i = 0; i + 1 < n; i += 2) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
        if (n % 2 != 0) sum += static_cast<uint32_t>(p[n - 1] << 8);
    };
    add(src, 16);
    add(dst, 16);
    sum += static_cast<uint32_t>(len);
    sum += kIcmp6;
    add(icmp, len);
    while ((sum >> 16) != 0) sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
}

}  // namespace

IpAddr solicitedNodeMulticast(const IpAddr& target) {
    uint8_t b[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 0};
    std::memcpy(&b[13], target.data() + 13, 3);
    return IpAddr::v6(b);
}

std::array<uint8_t, 72> buildNeighborSolicitation(const MacAddr& ourMac, const IpAddr& ourIp,
                                                  const IpAddr& target, const IpAddr& dst) {
    std::array<uint8_t, 72> p{};
    p[0] = 0x60;  // version 6
    p[5] = 32;    // payload: NS (24) + source link-layer option (8)
    p[6] = kIcmp6;
    p[7] = 255;  // hop limit: receivers drop ND with anything else
    std::memcpy(&p[8], ourIp.data(), 16);
    std::memcpy(&p[24], dst.data(), 16);
    uint8_t* icmp = &p[kIp6Header];
    icmp[0] = ND_NEIGHBOR_SOLICIT;
    std::memcpy(&icmp[8], target.data(), 16);
    icmp[24] = ND_OPT_SOURCE_LINKADDR;
    icmp[25] = 1;  // length in units of 8 bytes
    std::memcpy(&icmp[26], ourMac.data(), 6);
    uint16_t sum = icmp6Checksum(ourIp.data(), dst.data(), icmp, 32);
    icmp[2] = static_cast<uint8_t>(sum >> 8);
    icmp[3] = static_cast<uint8_t>(sum & 0xff);
    return p;
}

std::optional<IpAddr> arpSender(const uint8_t* pkt, size_t len) {
    auto m = netlink::parseArp(pkt, len);
    // An unspecified sender is an ARP probe during DAD: not yet a host.
    if (!m || m->sender.isUnspecified()) return std::nullopt;
    return m->sender;
}

std::optional<IpAddr> ndSender(const uint8_t* pkt, size_t len) {
    if (len < kIp6Header + 24 || (pkt[0] >> 4) != 6 || pkt[6] != kIcmp6 || pkt[7] != 255)
        return std::nullopt;
    const uint8_t* icmp = pkt + kIp6Header;
    if (icmp[0] == ND_NEIGHBOR_ADVERT) return IpAddr::v6(&icmp[8]);  // target = advertised
    if (icmp[0] == ND_NEIGHBOR_SOLICIT) {
        IpAddr src = IpAddr::v6(&pkt[8]);
        if (!src.isUnspecified()) return src;  // unspecified source: DAD, not a live host
    }
    return std::nullopt;
}

Prober::Prober(boost::asio::io_context& io, SeenHandler onSeen, std::function<void()> onBatchEnd)
    : arp_(io), nd_(io), onSeen_(std::move(onSeen)), onBatchEnd_(std::move(onBatchEnd)) {}

void Prober::start() {
    int arp = openPacketSocket(ETH_P_ALL);
    arp_.assign(arp);
    attachArpFilter(arp);
    int nd = openPacketSocket(ETH_P_ALL);
    nd_.assign(nd);
    attachNdFilter(nd);
    armArp();
    armNd();
}

bool Prober::probe(const ProbeTarget& t) {
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_ifindex = t.ifindex;
    to.sll_halen = 6;
    ssize_t rc = -1;
    if (t.target.isV4()) {
        to.sll_protocol = htons(ETH_P_ARP);
        MacAddr dst = t.targetMac.value_or(MacAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff});
        std::memcpy(to.sll_addr, dst.data(), 6);
        auto pkt = buildArpRequest(t.ourMac, t.ourIp, t.target);
        rc = ::sendto(arp_.native_handle(), pkt.data(), pkt.size(), 0,
                      reinterpret_cast<sockaddr*>(&to), sizeof(to));
    } else {
        to.sll_protocol = htons(ETH_P_IPV6);
        IpAddr dst = t.targetMac ? t.target : solicitedNodeMulticast(t.target);
        MacAddr dmac = t.targetMac.value_or(
            MacAddr{0x33, 0x33, dst.data()[12], dst.data()[13], dst.data()[14], dst.data()[15]});
        std::memcpy(to.sll_addr, dmac.data(), 6);
        auto pkt = buildNeighborSolicitation(t.ourMac, t.ourIp, t.target, dst);
        rc = ::sendto(nd_.native_handle(), pkt.data(), pkt.size(), 0,
                      reinterpret_cast<sockaddr*>(&to), sizeof(to));
    }
    if (rc < 0) {
        ++stats_.sendErrors;
        return false;
    }
    ++stats_.sent;
    return true;
}

namespace {
std::optional<MacAddr> frameSource(const sockaddr_ll& from) {
    if (from.sll_halen != 6) return std::nullopt;
    MacAddr mac{};
    std::copy_n(from.sll_addr, 6, mac.begin());
    return mac;
}
}  // namespace

void Prober::armArp() {
    arp_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                    [this](const boost::system::error_code& ec) {
                        if (ec) return;
                        readArp();
                        onBatchEnd_();
                        armArp();
                    });
}

void Prober::armNd() {
    nd_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                   [this](const boost::system::error_code& ec) {
                       if (ec) return;
                       readNd();
                       onBatchEnd_();
                       armNd();
                   });
}

void Prober::readArp() {
    for (int i = 0; i < 256; ++i) {
        sockaddr_ll from{};
        socklen_t fromLen = sizeof(from);
        ssize_t n = ::recvfrom(arp_.native_handle(), buf_.data(), buf_.size(), 0,
                               reinterpret_cast<sockaddr*>(&from), &fromLen);
        if (n < 0) return;
        if (from.sll_pkttype == PACKET_OUTGOING) continue;  // our own probes
        ++stats_.received;
        if (auto ip = arpSender(buf_.data(), static_cast<size_t>(n))) {
            onSeen_(from.sll_ifindex, *ip, frameSource(from));
        } else {
            ++stats_.malformed;
        }
    }
}

void Prober::readNd() {
    for (int i = 0; i < 256; ++i) {
        sockaddr_ll from{};
        socklen_t fromLen = sizeof(from);
        ssize_t n = ::recvfrom(nd_.native_handle(), buf_.data(), buf_.size(), 0,
                               reinterpret_cast<sockaddr*>(&from), &fromLen);
        if (n < 0) return;
        if (from.sll_pkttype == PACKET_OUTGOING) continue;
        ++stats_.received;
        if (auto ip = ndSender(buf_.data(), static_cast<size_t>(n)))
            onSeen_(from.sll_ifindex, *ip, frameSource(from));
    }
}

}  // namespace twinrail::hostrouted
