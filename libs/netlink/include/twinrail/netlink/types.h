// Plain views of kernel objects, decoupled from libnl so decision logic and tests never
// see a netlink message.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
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
    std::string kind;  // IFLA_INFO_KIND: "vxlan", "bridge", "vlan", "veth", ...; empty for physical
    int lower = 0;     // IFLA_LINK: the device a "vlan" (or macvlan) sits on; 0 when absent
    uint16_t vlanId = 0;  // IFLA_VLAN_ID of a "vlan" device (SONiC's VlanX on `Bridge`); 0: none
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

// A bridge forwarding-database entry (AF_BRIDGE neighbor): which bridge port a MAC sits
// behind. `master` is the bridge; entries the port itself holds (NTF_SELF) have none.
struct FdbEntry {
    int ifindex = 0;  // the bridge port
    int master = 0;   // NDA_MASTER: the bridge; 0 when absent
    MacAddr mac{};
    uint16_t state = 0;  // NUD_REACHABLE learned, NUD_NOARP static, NUD_PERMANENT local
    uint8_t flags = 0;   // NTF_* bits
    uint16_t vlan = 0;   // NDA_VLAN: the VLAN of a VLAN-aware bridge's entry; 0 when absent
    // A MAC the bridge learned or was told is behind a port (not the port's own address,
    // not the port's own hardware list).
    bool isHostEntry() const;
};

// A bridge port's VLANs (AF_BRIDGE RTM_NEWLINK with IFLA_AF_SPEC): the kernel sends the
// whole list whenever it changes (`bridge vlan add|del`) and with every other change of the
// port. `vlans` is empty when the message carries no list: a VLAN-unaware bridge (or a
// kernel without VLAN filtering) never has one, and a VLAN-aware bridge's port with no VLAN
// left sends none either.
struct PortVlans {
    int ifindex = 0;
    int master = 0;  // the bridge
    std::optional<std::set<uint16_t>> vlans;
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
