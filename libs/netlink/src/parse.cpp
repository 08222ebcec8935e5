#include "twinrail/netlink/parse.h"

#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <sys/socket.h>

#include <cstring>

namespace twinrail::netlink {

bool NeighborEntry::isExtLearned() const {
    return (flags & NTF_EXT_LEARNED) != 0;
}

bool FdbEntry::isHostEntry() const {
    return master != 0 && ifindex != master && (flags & NTF_SELF) == 0 &&
           (state & NUD_PERMANENT) == 0;
}

std::string nudStateName(uint16_t state) {
    switch (state) {
        case NUD_INCOMPLETE:
            return "INCOMPLETE";
        case NUD_REACHABLE:
            return "REACHABLE";
        case NUD_STALE:
            return "STALE";
        case NUD_DELAY:
            return "DELAY";
        case NUD_PROBE:
            return "PROBE";
        case NUD_FAILED:
            return "FAILED";
        case NUD_NOARP:
            return "NOARP";
        case NUD_PERMANENT:
            return "PERMANENT";
        case NUD_NONE:
            return "NONE";
        default:
            return "0x" + std::to_string(state);
    }
}

namespace {

std::optional<IpAddr> addrAttr(nlattr* attr, int family) {
    if (attr == nullptr) return std::nullopt;
    auto* bytes = static_cast<const uint8_t*>(nla_data(attr));
    if (family == AF_INET && nla_len(attr) == 4) return IpAddr::v4(bytes);
    if (family == AF_INET6 && nla_len(attr) == 16) return IpAddr::v6(bytes);
    return std::nullopt;
}

std::optional<MacAddr> macAttr(nlattr* attr) {
    if (attr == nullptr || nla_len(attr) != 6) return std::nullopt;
    MacAddr mac{};
    std::memcpy(mac.data(), nla_data(attr), 6);
    return mac;
}

// IFLA_VLAN_ID inside a vlan device's IFLA_INFO_DATA; 0 (no VLAN) when absent, odd-sized,
// or outside 1..4094, so a bad message never names a VLAN it does not carry.
uint16_t vlanIdOf(nlattr* data) {
    if (data == nullptr) return 0;
    nlattr* vlan[IFLA_VLAN_MAX + 1] = {};
    if (nla_parse_nested(vlan, IFLA_VLAN_MAX, data, nullptr) != 0) return 0;
    if (vlan[IFLA_VLAN_ID] == nullptr || nla_len(vlan[IFLA_VLAN_ID]) != 2) return 0;
    uint16_t id = nla_get_u16(vlan[IFLA_VLAN_ID]);
    return id >= 1 && id <= 4094 ? id : 0;
}

// IFLA_AF_SPEC of a bridge port: IFLA_BRIDGE_VLAN_INFO entries, single VLANs or ranges
// (RANGE_BEGIN then RANGE_END, what RTEXT_FILTER_BRVLAN_COMPRESSED gives).
std::variant<std::set<uint16_t>, Malformed> portVlansOf(nlattr* spec) {
    std::set<uint16_t> out;
    int begin = 0;  // an open range's first VLAN
    nlattr* a = nullptr;
    int rem = 0;
    nla_for_each_nested(a, spec, rem) {
        if (nla_type(a) != IFLA_BRIDGE_VLAN_INFO) continue;
        if (nla_len(a) != sizeof(bridge_vlan_info))
            return Malformed{"bridge VLAN info of odd size"};
        bridge_vlan_info info{};
        std::memcpy(&info, nla_data(a), sizeof info);
        if (info.vid < 1 || info.vid > 4094) return Malformed{"bridge VLAN outside 1..4094"};
        if ((info.flags & BRIDGE_VLAN_INFO_RANGE_BEGIN) != 0) {
            if (begin != 0) return Malformed{"bridge VLAN range begun twice"};
            begin = info.vid;
        } else if ((info.flags & BRIDGE_VLAN_INFO_RANGE_END) != 0) {
            if (begin == 0 || info.vid < begin)
                return Malformed{"bridge VLAN range without a start"};
            for (int v = begin; v <= info.vid; ++v) out.insert(static_cast<uint16_t>(v));
            begin = 0;
        } else {
            if (begin != 0) return Malformed{"bridge VLAN range without an end"};
            out.insert(info.vid);
        }
    }
    if (begin != 0) return Malformed{"bridge VLAN range without an end"};
    return out;
}

// A bridge's own view of one of its ports (family AF_BRIDGE) is not the link: it has no
// link info (kind), and its RTM_DELLINK means "left the bridge", which the link's own
// IFLA_MASTER says too. What it adds is the port's VLAN list.
Decoded decodeBridgePort(nlmsghdr* hdr, nlattr** tb) {
    auto* ifi = static_cast<ifinfomsg*>(nlmsg_data(hdr));
    if (hdr->nlmsg_type != RTM_NEWLINK || tb[IFLA_MASTER] == nullptr ||
        nla_len(tb[IFLA_MASTER]) != 4)
        return Skipped{};
    PortVlansMsg msg;
    msg.port.ifindex = ifi->ifi_index;
    msg.port.master = static_cast<int>(nla_get_u32(tb[IFLA_MASTER]));
    if (msg.port.master == msg.port.ifindex) return Skipped{};  // the bridge itself
    if (tb[IFLA_AF_SPEC] != nullptr) {
        auto vlans = portVlansOf(tb[IFLA_AF_SPEC]);
        if (auto* bad = std::get_if<Malformed>(&vlans)) return *bad;
        msg.port.vlans = std::get<std::set<uint16_t>>(std::move(vlans));
    }
    return msg;
}

Decoded decodeLink(nlmsghdr* hdr) {
    nlattr* tb[IFLA_MAX + 1] = {};
    if (nlmsg_parse(hdr, sizeof(ifinfomsg), tb, IFLA_MAX, nullptr) < 0)
        return Malformed{"link message with bad attributes"};
    auto* ifi = static_cast<ifinfomsg*>(nlmsg_data(hdr));
    if (ifi->ifi_family == AF_BRIDGE) return decodeBridgePort(hdr, tb);
    LinkMsg msg;
    msg.removed = hdr->nlmsg_type == RTM_DELLINK;
    msg.link.ifindex = ifi->ifi_index;
    msg.link.adminUp = (ifi->ifi_flags & IFF_UP) != 0;
    msg.link.operUp = (ifi->ifi_flags & IFF_UP) != 0 && (ifi->ifi_flags & IFF_RUNNING) != 0;
    if (tb[IFLA_IFNAME] != nullptr) {
        const char* name = static_cast<const char*>(nla_data(tb[IFLA_IFNAME]));
        msg.link.name.assign(name, strnlen(name, static_cast<size_t>(nla_len(tb[IFLA_IFNAME]))));
    }
    if (msg.link.name.empty() && !msg.removed) return Malformed{"link message without a name"};
    msg.link.mac = macAttr(tb[IFLA_ADDRESS]);
    if (tb[IFLA_MASTER] != nullptr && nla_len(tb[IFLA_MASTER]) == 4)
        msg.link.master = static_cast<int>(nla_get_u32(tb[IFLA_MASTER]));
    nlattr* info[IFLA_INFO_MAX + 1] = {};
    if (tb[IFLA_LINKINFO] != nullptr &&
        nla_parse_nested(info, IFLA_INFO_MAX, tb[IFLA_LINKINFO], nullptr) == 0 &&
        info[IFLA_INFO_KIND] != nullptr) {
        const char* kind = static_cast<const char*>(nla_data(info[IFLA_INFO_KIND]));
        msg.link.kind.assign(kind,
                             strnlen(kind, static_cast<size_t>(nla_len(info[IFLA_INFO_KIND]))));
    }
    if (tb[IFLA_LINK] != nullptr && nla_len(tb[IFLA_LINK]) == 4)
        msg.link.lower = static_cast<int>(nla_get_u32(tb[IFLA_LINK]));
    if (msg.link.kind == "vlan") msg.link.vlanId = vlanIdOf(info[IFLA_INFO_DATA]);
    return msg;
}

Decoded decodeAddress(nlmsghdr* hdr) {
    nlattr* tb[IFA_MAX + 1] = {};
    if (nlmsg_parse(hdr, sizeof(ifaddrmsg), tb, IFA_MAX, nullptr) < 0)
        return Malformed{"address message with bad attributes"};
    auto* ifa = static_cast<ifaddrmsg*>(nlmsg_data(hdr));
    if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6) return Skipped{};
    // IFA_LOCAL is the interface's own address on point-to-point links; prefer it.
    auto ip = addrAttr(tb[IFA_LOCAL] != nullptr ? tb[IFA_LOCAL] : tb[IFA_ADDRESS], ifa->ifa_family);
    if (!ip) return Malformed{"address message without a usable address"};
    if (ifa->ifa_prefixlen > ip->maxPrefixLen()) return Malformed{"address prefix too long"};
    AddressMsg msg;
    msg.removed = hdr->nlmsg_type == RTM_DELADDR;
    msg.addr.ifindex = static_cast<int>(ifa->ifa_index);
    msg.addr.prefix = IpPrefix{*ip, ifa->ifa_prefixlen};
    return msg;
}

Decoded decodeFdb(nlmsghdr* hdr, nlattr** tb) {
    auto* ndm = static_cast<ndmsg*>(nlmsg_data(hdr));
    auto mac = macAttr(tb[NDA_LLADDR]);
    if (!mac) return Skipped{};  // names no host (the kernel sends one with every entry)
    FdbMsg msg;
    msg.removed = hdr->nlmsg_type == RTM_DELNEIGH;
    msg.fdb.ifindex = ndm->ndm_ifindex;
    msg.fdb.mac = *mac;
    msg.fdb.state = ndm->ndm_state;
    msg.fdb.flags = ndm->ndm_flags;
    if (tb[NDA_MASTER] != nullptr && nla_len(tb[NDA_MASTER]) == 4)
        msg.fdb.master = static_cast<int>(nla_get_u32(tb[NDA_MASTER]));
    // A VLAN-aware bridge keys its entries by (VLAN, MAC); an odd-sized or out-of-range
    // NDA_VLAN is a malformed entry, not VLAN 0 (which would place it in every VLAN).
    if (tb[NDA_VLAN] != nullptr) {
        if (nla_len(tb[NDA_VLAN]) != 2) return Malformed{"fdb entry with a bad NDA_VLAN size"};
        msg.fdb.vlan = nla_get_u16(tb[NDA_VLAN]);
        if (msg.fdb.vlan == 0 || msg.fdb.vlan > 4094) return Malformed{"fdb entry with a bad VLAN"};
    }
    return msg;
}

Decoded decodeNeighbor(nlmsghdr* hdr) {
    nlattr* tb[NDA_MAX + 1] = {};
    if (nlmsg_parse(hdr, sizeof(ndmsg), tb, NDA_MAX, nullptr) < 0)
        return Malformed{"neighbor message with bad attributes"};
    auto* ndm = static_cast<ndmsg*>(nlmsg_data(hdr));
    if (ndm->ndm_family == AF_BRIDGE) return decodeFdb(hdr, tb);
    if (ndm->ndm_family != AF_INET && ndm->ndm_family != AF_INET6) return Skipped{};
    auto ip = addrAttr(tb[NDA_DST], ndm->ndm_family);
    if (!ip) return Malformed{"neighbor message without a destination address"};
    NeighborMsg msg;
    msg.removed = hdr->nlmsg_type == RTM_DELNEIGH;
    msg.neigh.ifindex = ndm->ndm_ifindex;
    msg.neigh.ip = *ip;
    msg.neigh.mac = macAttr(tb[NDA_LLADDR]);
    msg.neigh.state = ndm->ndm_state;
    msg.neigh.flags = ndm->ndm_flags;
    if (tb[NDA_PROTOCOL] != nullptr && nla_len(tb[NDA_PROTOCOL]) == 1)
        msg.neigh.protocol = nla_get_u8(tb[NDA_PROTOCOL]);
    return msg;
}

Decoded decodeRoute(nlmsghdr* hdr) {
    nlattr* tb[RTA_MAX + 1] = {};
    if (nlmsg_parse(hdr, sizeof(rtmsg), tb, RTA_MAX, nullptr) < 0)
        return Malformed{"route message with bad attributes"};
    auto* rtm = static_cast<rtmsg*>(nlmsg_data(hdr));
    if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6) return Skipped{};
    auto dst = addrAttr(tb[RTA_DST], rtm->rtm_family);
    if (!dst) return Skipped{};  // default routes carry no RTA_DST
    RouteMsg msg;
    msg.prefixLen = rtm->rtm_dst_len;
    msg.route.dst = *dst;
    msg.route.protocol = rtm->rtm_protocol;
    msg.route.table = rtm->rtm_table;
    if (tb[RTA_TABLE] != nullptr && nla_len(tb[RTA_TABLE]) == 4)
        msg.route.table = nla_get_u32(tb[RTA_TABLE]);
    if (tb[RTA_OIF] != nullptr && nla_len(tb[RTA_OIF]) == 4)
        msg.route.ifindex = static_cast<int>(nla_get_u32(tb[RTA_OIF]));
    if (tb[RTA_PRIORITY] != nullptr && nla_len(tb[RTA_PRIORITY]) == 4)
        msg.route.priority = nla_get_u32(tb[RTA_PRIORITY]);
    return msg;
}

}  // namespace

Decoded decode(nlmsghdr* hdr) {
    switch (hdr->nlmsg_type) {
        case RTM_NEWLINK:
        case RTM_DELLINK:
            return decodeLink(hdr);
        case RTM_NEWADDR:
        case RTM_DELADDR:
            return decodeAddress(hdr);
        case RTM_NEWNEIGH:
        case RTM_DELNEIGH:
            return decodeNeighbor(hdr);
        case RTM_NEWROUTE:
            return decodeRoute(hdr);
        default:
            return Skipped{};
    }
}

}  // namespace twinrail::netlink
