// ARP for IPv4 over Ethernet, as packet sockets (SOCK_DGRAM) send and receive it: the 28
// bytes after the Ethernet header. One builder and one parser for everything that speaks
// ARP itself: hostrouted's keepalive probes, planesteer's per-plane probes, the lab's
// announcements.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "twinrail/common/ip.h"

namespace twinrail::netlink {

inline constexpr size_t kArpBytes = 28;
inline constexpr uint16_t kArpRequest = 1;
inline constexpr uint16_t kArpReply = 2;

std::array<uint8_t, kArpBytes> buildArpRequest(const MacAddr& ourMac, const IpAddr& ourIp,
                                               const IpAddr& target);

struct ArpMessage {
    uint16_t op = 0;
    MacAddr senderMac{};
    IpAddr sender;  // unspecified in a DAD probe
    IpAddr target;
};
// nullopt unless it is Ethernet/IPv4 ARP of at least 28 bytes.
std::optional<ArpMessage> parseArp(const uint8_t* pkt, size_t len);

}  // namespace twinrail::netlink
