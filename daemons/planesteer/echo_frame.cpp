#include "echo_frame.h"

#include <cstring>

namespace twinrail::planesteer {
namespace {

constexpr uint8_t kIcmp = 1;
constexpr uint8_t kEchoReply = 0;
constexpr uint8_t kEchoRequest = 8;
constexpr char kPayload[8] = {'t', 'w', 'i', 'n', 'r', 'a', 'i', 'l'};

void put16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}
uint16_t get16(const uint8_t* p) {
    return static_cast<uint16_t>(p[0] << 8 | p[1]);
}

}  // namespace

uint16_t internetChecksum(const uint8_t* p, size_t len) {
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < len; i += 2) sum += get16(p + i);
    if (len % 2 != 0) sum += static_cast<uint32_t>(p[len - 1]) << 8;
    while (sum >> 16 != 0) sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
}

std::vector<uint8_t> buildEchoRequest(const IpAddr& src, const IpAddr& dst, uint16_t id,
                                      uint16_t seq, uint64_t nonce) {
    static_assert(sizeof(kPayload) + 8 == kEchoPayloadLen);
    constexpr size_t kIcmpLen = 8 + kEchoPayloadLen;
    std::vector<uint8_t> p(20 + kIcmpLen, 0);
    p[0] = 0x45;  // IPv4, 20-byte header
    put16(&p[2], static_cast<uint16_t>(p.size()));
    put16(&p[6], 0x4000);  // don't fragment
    p[8] = 64;             // TTL
    p[9] = kIcmp;
    std::memcpy(&p[12], src.data(), 4);
    std::memcpy(&p[16], dst.data(), 4);
    put16(&p[10], internetChecksum(p.data(), 20));
    uint8_t* icmp = &p[20];
    icmp[0] = kEchoRequest;
    put16(&icmp[4], id);
    put16(&icmp[6], seq);
    std::memcpy(&icmp[8], kPayload, sizeof(kPayload));
    for (int i = 0; i < 8; ++i) icmp[16 + i] = static_cast<uint8_t>(nonce >> (56 - 8 * i));
    put16(&icmp[2], internetChecksum(icmp, kIcmpLen));
    return p;
}

std::optional<EchoReply> parseEchoReply(const uint8_t* pkt, size_t len) {
    if (len < 20 || pkt[0] >> 4 != 4) return std::nullopt;
    size_t ihl = static_cast<size_t>(pkt[0] & 0x0f) * 4;
    size_t total = get16(&pkt[2]);
    if (ihl < 20 || total < ihl + 8 || total > len) return std::nullopt;
    if ((get16(&pkt[6]) & 0x3fff) != 0) return std::nullopt;  // a fragment
    if (pkt[9] != kIcmp || internetChecksum(pkt, ihl) != 0) return std::nullopt;
    const uint8_t* icmp = pkt + ihl;
    if (icmp[0] != kEchoReply || icmp[1] != 0 || internetChecksum(icmp, total - ihl) != 0)
        return std::nullopt;
    EchoReply r;
    r.from = IpAddr::v4(&pkt[12]);
    r.to = IpAddr::v4(&pkt[16]);
    r.id = get16(&icmp[4]);
    r.seq = get16(&icmp[6]);
    if (total - ihl >= 8 + kEchoPayloadLen &&
        std::memcmp(&icmp[8], kPayload, sizeof(kPayload)) == 0) {
        uint64_t n = 0;
        for (int i = 0; i < 8; ++i) n = n << 8 | icmp[16 + i];
        r.nonce = n;
    }
    return r;
}

std::optional<IpAddr> ipv4Destination(const uint8_t* pkt, size_t len) {
    if (len < 20 || pkt[0] >> 4 != 4 || (pkt[0] & 0x0f) < 5) return std::nullopt;
    return IpAddr::v4(&pkt[16]);
}

}  // namespace twinrail::planesteer
