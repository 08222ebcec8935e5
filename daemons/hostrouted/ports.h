// What hostrouted knows of each interface: its link state, whether the config manages it,
// and its addresses. The daemon keeps the table (from kernel events); its modules read it.
#pragma once

#include <unordered_map>
#include <vector>

#include "twinrail/common/ip.h"
#include "twinrail/netlink/types.h"

namespace twinrail::hostrouted {

struct Port {
    netlink::LinkState link;
    bool managed = false;
    std::vector<IpPrefix> addresses;
};

using Ports = std::unordered_map<int, Port>;  // by ifindex

}  // namespace twinrail::hostrouted
