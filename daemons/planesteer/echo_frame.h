// ICMP echo as planesteer sends and hears it through packet sockets (SOCK_DGRAM: the
// bytes after the Ethernet header). A request carries an IPv4 header of its own, because
// it leaves by one chosen port toward the gateway's MAC, bypassing the bond and the
// kernel's routing; the reply comes back through whichever plane the peer's bond picks.
// Pure, so that malformed packets are tested without a network.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "twinrail/common/ip.h"

namespace twinrail::planesteer {

// The ICMP identifier of every probe (in the filter, too): "ps".
inline constexpr uint16_t kEchoId = 0x7073;

// seq carries the port the request left by, so that a reply counts for that port's plane
// whichever port it comes back on.
inline uint16_t echoSeq(size_t port, uint16_t counter) {
    return static_cast<uint16_t>((port & 0x1) << 15 | (counter & 0x7fff));
}
inline size_t echoSeqPort(uint16_t seq) {
    return seq >> 15;
}

// The one's-complement sum of RFC 1071 over `len` bytes.
uint16_t internetChecksum(const uint8_t* p, size_t len);

// The payload: "twinrail" then the request's nonce (probe_match.h), 8 bytes big-endian,
// which the peer echoes back.
inline constexpr size_t kEchoPayloadLen = 16;
std::vector<uint8_t> buildEchoRequest(const IpAddr& src, const IpAddr& dst, uint16_t id,
                                      uint16_t seq, uint64_t nonce = 0);

struct EchoReply {
    IpAddr from, to;
    uint16_t id = 0, seq = 0;
    std::optional<uint64_t> nonce;  // nullopt: not our payload (a stranger's ping, truncated)
};
// nullopt unless it is a whole IPv4 packet (first fragment, header checksum right)
// holding an ICMP echo reply with a right checksum.
std::optional<EchoReply> parseEchoReply(const uint8_t* pkt, size_t len);

// The destination of an IPv4 packet (the learner samples outgoing traffic); nullopt
// when it is not IPv4 or shorter than its header.
std::optional<IpAddr> ipv4Destination(const uint8_t* pkt, size_t len);

}  // namespace twinrail::planesteer
