// Decoding of rtnetlink messages into the plain views. Every attribute is length-checked
// by libnl's nlmsg_parse(); a malformed message yields an error string, never a crash.
#pragma once

#include <linux/netlink.h>

#include <string>
#include <variant>

#include "twinrail/netlink/types.h"

namespace twinrail::netlink {

struct LinkMsg {
    LinkState link;
    bool removed = false;
};
struct AddressMsg {
    AddressEntry addr;
    bool removed = false;
};
struct NeighborMsg {
    NeighborEntry neigh;
    bool removed = false;
};
struct FdbMsg {
    FdbEntry fdb;
    bool removed = false;
};
struct PortVlansMsg {
    PortVlans port;
};
struct RouteMsg {
    HostRoute route;
    int prefixLen = 0;
};
struct Skipped {};  // valid but not interesting (other families)
struct Malformed {
    std::string why;
};

using Decoded = std::variant<Skipped, Malformed, LinkMsg, AddressMsg, NeighborMsg, RouteMsg, FdbMsg,
                             PortVlansMsg>;

Decoded decode(nlmsghdr* hdr);

}  // namespace twinrail::netlink
