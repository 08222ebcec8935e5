// Plain views of kernel objects, decoupled from libnl so decision logic and tests never
// see a netlink message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "twinrail/common/ip.h"

namespace twinrail::netlink {

struct LinkState {
    int ifindex = 0;
    std::string name;
    bool adminUp = false;
    bool operUp = false;  // IFF_RUNNING: carrier and admin up
    std::optional<MacAddr> mac;
    int master = 0;    // IFLA_MASTER: the bridge (or bond) this port is enslaved to
    std::string kind;  // IFLA_INFO_KIND: "vxlan", "bridge", "veth", ...; empty for physical
};

struct AddressEntry {
    int ifindex = 0;
    IpPrefix prefix;  // the interface's address and its subnet length
};

struct NeighborEntry {
    int ifindex = 0;
    IpAddr ip;
    std::optional<MacAddr> mac;
    uint16_t state = 0;    // NUD_* bits
    uint8_t flags = 0;     // NTF_* bits
    uint8_t protocol = 0;  // NDA_PROTOCOL: who installed it (0: the kernel learned it)
    bool isExtLearned() const;
};

std::string nudStateName(uint16_t state);

struct HostRoute {
    IpAddr dst;  // routed as /32 or /128, unless prefixLen says otherwise
    int ifindex = 0;
    uint32_t table = 0;
    uint8_t protocol = 0;
    uint32_t priority = 0;  // the route's metric; part of its identity in the kernel
    int prefixLen = 0;      // 0: a host route; else a prefix (only to remove one)
    // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads defaulted <=>
    auto operator<=>(const HostRoute&) const = default;
};

}  // namespace twinrail::netlink
