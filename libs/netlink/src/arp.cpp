#include "twinrail/netlink/arp.h"

#include <cstring>

namespace twinrail::netlink {

std::array<uint8_t, kArpBytes> buildArpRequest(const MacAddr& ourMac, const IpAddr& ourIp,
                                               const IpAddr& target) {
    std::array<uint8_t, kArpBytes> p{};
    p[1] = 1;     // htype Ethernet
    p[2] = 0x08;  // ptype IPv4
    p[4] = 6;     // hlen
    p[5] = 4;     // plen
    p[7] = kArpRequest;
    std::memcpy(&p[8], ourMac.data(), 6);
    std::memcpy(&p[14], ourIp.data(), 4);
    std::memcpy(&p[24], target.data(), 4);
    return p;
}

std::optional<ArpMessage> parseArp(const uint8_t* pkt, size_t len) {
    if (len < kArpBytes) return std::nullopt;
    if (pkt[0] != 0 || pkt[1] != 1 || pkt[2] != 0x08 || pkt[3] != 0 || pkt[4] != 6 || pkt[5] != 4)
        return std::nullopt;
    ArpMessage m;
    m.op = static_cast<uint16_t>((pkt[6] << 8) | pkt[7]);
    std::memcpy(m.senderMac.data(), &pkt[8], 6);
    m.sender = IpAddr::v4(&pkt[14]);
    m.target = IpAddr::v4(&pkt[24]);
    return m;
}

}  // namespace twinrail::netlink
