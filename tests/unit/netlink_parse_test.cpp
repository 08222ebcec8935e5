#include <gtest/gtest.h>
#include <linux/if.h>
#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <sys/socket.h>

#include <set>
#include <utility>
#include <vector>

#include "twinrail/netlink/parse.h"

using namespace twinrail;
using namespace twinrail::netlink;

namespace {

// Owns one netlink message built the way the kernel would send it.
struct Msg {
    nl_msg* msg;
    Msg(int type, const void* body, size_t len) : msg(nlmsg_alloc_simple(type, 0)) {
        nlmsg_append(msg, const_cast<void*>(body), len, NLMSG_ALIGNTO);
    }
    Msg(Msg&& other) noexcept : msg(std::exchange(other.msg, nullptr)) {}
    Msg(const Msg&) = delete;
    Msg& operator=(const Msg&) = delete;
    Msg& operator=(Msg&&) = delete;
    ~Msg() {
        if (msg != nullptr) nlmsg_free(msg);
    }
    Decoded decode() { return netlink::decode(nlmsg_hdr(msg)); }
};

}  // namespace

TEST(NetlinkParse, NeighborWithFlags) {
    ndmsg ndm{};
    ndm.ndm_family = AF_INET;
    ndm.ndm_ifindex = 5;
    ndm.ndm_state = NUD_NOARP;
    ndm.ndm_flags = NTF_EXT_LEARNED;
    Msg m(RTM_NEWNEIGH, &ndm, sizeof(ndm));
    uint8_t ip[4] = {10, 1, 1, 10};
    uint8_t mac[6] = {2, 0, 0, 0, 0, 9};
    nla_put(m.msg, NDA_DST, 4, ip);
    nla_put(m.msg, NDA_LLADDR, 6, mac);
    auto d = m.decode();
    auto* n = std::get_if<NeighborMsg>(&d);
    ASSERT_NE(n, nullptr);
    EXPECT_FALSE(n->removed);
    EXPECT_EQ(n->neigh.ip.str(), "10.1.1.10");
    EXPECT_EQ(n->neigh.ifindex, 5);
    EXPECT_TRUE(n->neigh.isExtLearned());
    EXPECT_EQ(formatMac(*n->neigh.mac), "02:00:00:00:00:09");
}

TEST(NetlinkParse, MalformedNeighborIsReportedNotTrusted) {
    ndmsg ndm{};
    ndm.ndm_family = AF_INET6;
    Msg m(RTM_NEWNEIGH, &ndm, sizeof(ndm));
    uint8_t shortAddr[4] = {1, 2, 3, 4};  // 4 bytes for an IPv6 neighbor
    nla_put(m.msg, NDA_DST, 4, shortAddr);
    auto d = m.decode();
    EXPECT_TRUE(std::holds_alternative<Malformed>(d));
}

TEST(NetlinkParse, TruncatedMessageIsMalformed) {
    ndmsg ndm{};
    ndm.ndm_family = AF_INET;
    Msg m(RTM_NEWNEIGH, &ndm, sizeof(ndm));
    uint8_t ip[4] = {10, 1, 1, 10};
    nla_put(m.msg, NDA_DST, 4, ip);
    nlmsg_hdr(m.msg)->nlmsg_len -= 6;  // cut into the attribute
    EXPECT_TRUE(std::holds_alternative<Malformed>(m.decode()));
}

TEST(NetlinkParse, BridgeFdbIsSkipped) {
    ndmsg ndm{};
    ndm.ndm_family = AF_BRIDGE;
    Msg m(RTM_NEWNEIGH, &ndm, sizeof(ndm));
    EXPECT_TRUE(std::holds_alternative<Skipped>(m.decode()));
}

TEST(NetlinkParse, RouteWithTableAttribute) {
    rtmsg rtm{};
    rtm.rtm_family = AF_INET;
    rtm.rtm_dst_len = 32;
    rtm.rtm_protocol = 201;
    Msg m(RTM_NEWROUTE, &rtm, sizeof(rtm));
    uint8_t ip[4] = {10, 1, 1, 10};
    nla_put(m.msg, RTA_DST, 4, ip);
    nla_put_u32(m.msg, RTA_TABLE, 1000);
    nla_put_u32(m.msg, RTA_OIF, 4);
    auto d = m.decode();
    auto* r = std::get_if<RouteMsg>(&d);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->route.table, 1000u);
    EXPECT_EQ(r->route.ifindex, 4);
    EXPECT_EQ(r->prefixLen, 32);
}

TEST(NetlinkParse, LinkFlags) {
    ifinfomsg ifi{};
    ifi.ifi_index = 3;
    ifi.ifi_flags = IFF_UP;  // admin up, no carrier
    Msg m(RTM_NEWLINK, &ifi, sizeof(ifi));
    nla_put_string(m.msg, IFLA_IFNAME, "swp3");
    auto d = m.decode();
    auto* l = std::get_if<LinkMsg>(&d);
    ASSERT_NE(l, nullptr);
    EXPECT_EQ(l->link.name, "swp3");
    EXPECT_TRUE(l->link.adminUp);
    EXPECT_FALSE(l->link.operUp);
}

// A bridge port as the link (kind, master) and as its bridge's view of it: only the first
// is a link. The bridge's RTM_DELLINK means "left the bridge", not "gone".
TEST(NetlinkParse, LinkKindMasterAndTheBridgesViewOfAPort) {
    ifinfomsg ifi{};
    ifi.ifi_family = AF_UNSPEC;
    ifi.ifi_index = 7;
    ifi.ifi_flags = IFF_UP | IFF_RUNNING;
    Msg m(RTM_NEWLINK, &ifi, sizeof(ifi));
    nla_put_string(m.msg, IFLA_IFNAME, "vx-rail1");
    nla_put_u32(m.msg, IFLA_MASTER, 4);
    nlattr* info = nla_nest_start(m.msg, IFLA_LINKINFO);
    nla_put_string(m.msg, IFLA_INFO_KIND, "vxlan");
    nla_nest_end(m.msg, info);
    auto d = m.decode();
    auto* l = std::get_if<LinkMsg>(&d);
    ASSERT_NE(l, nullptr);
    EXPECT_EQ(l->link.kind, "vxlan");
    EXPECT_EQ(l->link.master, 4);
    ifi.ifi_family = AF_BRIDGE;
    Msg b(RTM_DELLINK, &ifi, sizeof(ifi));
    nla_put_string(b.msg, IFLA_IFNAME, "vx-rail1");
    EXPECT_TRUE(std::holds_alternative<Skipped>(b.decode()));
}

// NDA_PROTOCOL tells whose entry it is (zebra's 11, hostrouted's route_protocol).
TEST(NetlinkParse, NeighborProtocol) {
    ndmsg ndm{};
    ndm.ndm_family = AF_INET;
    ndm.ndm_ifindex = 5;
    ndm.ndm_state = NUD_PERMANENT;
    Msg m(RTM_NEWNEIGH, &ndm, sizeof(ndm));
    uint8_t ip[4] = {10, 1, 1, 10};
    nla_put(m.msg, NDA_DST, 4, ip);
    nla_put_u8(m.msg, NDA_PROTOCOL, 201);
    auto d = m.decode();
    auto* n = std::get_if<NeighborMsg>(&d);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->neigh.protocol, 201);
}

// SONiC's SVI: `ip link add link Bridge name Vlan1001 type vlan id 1001`. The kernel reports
// kind "vlan", the lower device as IFLA_LINK and the VLAN in IFLA_INFO_DATA.
TEST(NetlinkParse, VlanDeviceNamesItsLowerDeviceAndVlan) {
    ifinfomsg ifi{};
    ifi.ifi_index = 41;
    ifi.ifi_flags = IFF_UP | IFF_RUNNING;
    Msg m(RTM_NEWLINK, &ifi, sizeof(ifi));
    nla_put_string(m.msg, IFLA_IFNAME, "Vlan1001");
    nla_put_u32(m.msg, IFLA_LINK, 40);
    nlattr* info = nla_nest_start(m.msg, IFLA_LINKINFO);
    nla_put_string(m.msg, IFLA_INFO_KIND, "vlan");
    nlattr* data = nla_nest_start(m.msg, IFLA_INFO_DATA);
    nla_put_u16(m.msg, IFLA_VLAN_ID, 1001);
    nla_nest_end(m.msg, data);
    nla_nest_end(m.msg, info);
    auto d = m.decode();
    auto* l = std::get_if<LinkMsg>(&d);
    ASSERT_NE(l, nullptr);
    EXPECT_EQ(l->link.kind, "vlan");
    EXPECT_EQ(l->link.lower, 40);
    EXPECT_EQ(l->link.vlanId, 1001);
    EXPECT_EQ(l->link.master, 0);
}

// Odd attributes name no VLAN and no lower device, and the link is still the link.
TEST(NetlinkParse, OddVlanAttributesAreDropped) {
    auto decodeWith = [](auto&& addAttrs) {
        ifinfomsg ifi{};
        ifi.ifi_index = 41;
        Msg m(RTM_NEWLINK, &ifi, sizeof(ifi));
        nla_put_string(m.msg, IFLA_IFNAME, "Vlan1001");
        addAttrs(m.msg);
        auto d = m.decode();
        auto* l = std::get_if<LinkMsg>(&d);
        return l == nullptr ? std::optional<LinkState>() : std::optional(l->link);
    };
    auto vlanInfo = [](nl_msg* msg, auto&& data) {
        nlattr* info = nla_nest_start(msg, IFLA_LINKINFO);
        nla_put_string(msg, IFLA_INFO_KIND, "vlan");
        data(msg);
        nla_nest_end(msg, info);
    };
    auto oddSize = decodeWith([&](nl_msg* msg) {
        uint8_t shortLink = 1;
        nla_put(msg, IFLA_LINK, 1, &shortLink);  // 1 byte for an ifindex
        vlanInfo(msg, [](nl_msg* m) {
            nlattr* data = nla_nest_start(m, IFLA_INFO_DATA);
            nla_put_u32(m, IFLA_VLAN_ID, 1001);  // 4 bytes for a u16
            nla_nest_end(m, data);
        });
    });
    ASSERT_TRUE(oddSize);
    EXPECT_EQ(oddSize->lower, 0);
    EXPECT_EQ(oddSize->vlanId, 0);
    EXPECT_EQ(oddSize->kind, "vlan");
    for (uint16_t bad : {uint16_t{0}, uint16_t{4095}, uint16_t{0xffff}}) {
        auto outOfRange = decodeWith([&](nl_msg* msg) {
            vlanInfo(msg, [bad](nl_msg* m) {
                nlattr* data = nla_nest_start(m, IFLA_INFO_DATA);
                nla_put_u16(m, IFLA_VLAN_ID, bad);
                nla_nest_end(m, data);
            });
        });
        ASSERT_TRUE(outOfRange);
        EXPECT_EQ(outOfRange->vlanId, 0) << bad;
    }
    auto notNested = decodeWith([&](nl_msg* msg) {
        vlanInfo(msg, [](nl_msg* m) { nla_put_u8(m, IFLA_INFO_DATA, 7); });  // no attributes
    });
    ASSERT_TRUE(notNested);
    EXPECT_EQ(notNested->vlanId, 0);
    // The same data on a bridge is not read as a VLAN.
    auto bridge = decodeWith([](nl_msg* msg) {
        nlattr* info = nla_nest_start(msg, IFLA_LINKINFO);
        nla_put_string(msg, IFLA_INFO_KIND, "bridge");
        nlattr* data = nla_nest_start(msg, IFLA_INFO_DATA);
        nla_put_u16(msg, IFLA_VLAN_ID, 1001);
        nla_nest_end(msg, data);
        nla_nest_end(msg, info);
    });
    ASSERT_TRUE(bridge);
    EXPECT_EQ(bridge->vlanId, 0);
}

// A VLAN-aware bridge's entry: `<mac> dev Ethernet0 vlan 1001 master Bridge`.
TEST(NetlinkParse, FdbEntryOfAVlanAwareBridge) {
    ndmsg ndm{};
    ndm.ndm_family = AF_BRIDGE;
    ndm.ndm_ifindex = 43;
    ndm.ndm_state = NUD_REACHABLE;
    ndm.ndm_flags = NTF_MASTER;
    Msg m(RTM_NEWNEIGH, &ndm, sizeof(ndm));
    uint8_t mac[6] = {2, 0, 0, 0, 0, 0xa1};
    nla_put(m.msg, NDA_LLADDR, 6, mac);
    nla_put_u16(m.msg, NDA_VLAN, 1001);
    nla_put_u32(m.msg, NDA_MASTER, 40);
    auto d = m.decode();
    auto* f = std::get_if<FdbMsg>(&d);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->fdb.ifindex, 43);
    EXPECT_EQ(f->fdb.master, 40);
    EXPECT_EQ(f->fdb.vlan, 1001);
    EXPECT_EQ(formatMac(f->fdb.mac), "02:00:00:00:00:a1");
    EXPECT_TRUE(f->fdb.isHostEntry());
}

// An entry with an unreadable VLAN is reported, not placed in VLAN 0 (every VLAN).
TEST(NetlinkParse, FdbEntryWithABadVlanIsMalformed) {
    auto decodeWith = [](auto&& addVlan) {
        ndmsg ndm{};
        ndm.ndm_family = AF_BRIDGE;
        ndm.ndm_ifindex = 43;
        Msg m(RTM_NEWNEIGH, &ndm, sizeof(ndm));
        uint8_t mac[6] = {2, 0, 0, 0, 0, 0xa1};
        nla_put(m.msg, NDA_LLADDR, 6, mac);
        nla_put_u32(m.msg, NDA_MASTER, 40);
        addVlan(m.msg);
        return m.decode();
    };
    EXPECT_TRUE(std::holds_alternative<Malformed>(decodeWith([](nl_msg* msg) {
        uint8_t one = 1;
        nla_put(msg, NDA_VLAN, 1, &one);
    })));
    EXPECT_TRUE(std::holds_alternative<Malformed>(
        decodeWith([](nl_msg* msg) { nla_put_u32(msg, NDA_VLAN, 1001); })));
    EXPECT_TRUE(std::holds_alternative<Malformed>(
        decodeWith([](nl_msg* msg) { nla_put_u16(msg, NDA_VLAN, 4095); })));
    auto none = decodeWith([](nl_msg*) {});  // a VLAN-unaware bridge's entry
    ASSERT_TRUE(std::holds_alternative<FdbMsg>(none));
    EXPECT_EQ(std::get<FdbMsg>(none).fdb.vlan, 0);
}

// A bridge port's VLAN list (AF_BRIDGE RTM_NEWLINK, IFLA_AF_SPEC) as the kernel sends it
// after `bridge vlan add|del`: single VLANs and compressed ranges.
namespace {

Msg bridgePort(int ifindex, int master) {
    ifinfomsg ifi{};
    ifi.ifi_family = AF_BRIDGE;
    ifi.ifi_index = ifindex;
    Msg m(RTM_NEWLINK, &ifi, sizeof(ifi));
    nla_put_string(m.msg, IFLA_IFNAME, "Ethernet0");
    if (master != 0) nla_put_u32(m.msg, IFLA_MASTER, static_cast<uint32_t>(master));
    return m;
}

void putVlan(nl_msg* msg, uint16_t vid, uint16_t flags) {
    bridge_vlan_info info{flags, vid};
    nla_put(msg, IFLA_BRIDGE_VLAN_INFO, sizeof info, &info);
}

}  // namespace

TEST(NetlinkParse, BridgePortVlanLists) {
    auto m = bridgePort(43, 40);
    nlattr* spec = nla_nest_start(m.msg, IFLA_AF_SPEC);
    putVlan(m.msg, 1, BRIDGE_VLAN_INFO_PVID | BRIDGE_VLAN_INFO_UNTAGGED);
    putVlan(m.msg, 1001, BRIDGE_VLAN_INFO_RANGE_BEGIN);
    putVlan(m.msg, 1003, BRIDGE_VLAN_INFO_RANGE_END);
    nla_put_u16(m.msg, IFLA_BRIDGE_FLAGS, 0);  // other attributes are not VLANs
    nla_nest_end(m.msg, spec);
    auto d = m.decode();
    auto* p = std::get_if<PortVlansMsg>(&d);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->port.ifindex, 43);
    EXPECT_EQ(p->port.master, 40);
    EXPECT_EQ(p->port.vlans, (std::set<uint16_t>{1, 1001, 1002, 1003}));
    auto none = bridgePort(43, 40);  // no list: no VLAN left, or a VLAN-unaware bridge
    d = none.decode();
    p = std::get_if<PortVlansMsg>(&d);
    ASSERT_NE(p, nullptr);
    EXPECT_FALSE(p->port.vlans.has_value());
    auto noMaster = bridgePort(43, 0);  // not a port
    EXPECT_TRUE(std::holds_alternative<Skipped>(noMaster.decode()));
    auto self = bridgePort(40, 40);  // the bridge's own entry
    EXPECT_TRUE(std::holds_alternative<Skipped>(self.decode()));
}

TEST(NetlinkParse, HostileBridgePortVlanListsAreMalformed) {
    struct Case {
        std::vector<std::pair<uint16_t, uint16_t>> vlans;  // (vid, flags)
        const char* why;
    };
    const std::vector<Case> cases{
        {{{0, 0}}, "outside 1..4094"},
        {{{4095, 0}}, "outside 1..4094"},
        {{{10, BRIDGE_VLAN_INFO_RANGE_BEGIN}}, "without an end"},
        {{{10, BRIDGE_VLAN_INFO_RANGE_BEGIN}, {20, 0}}, "without an end"},
        {{{10, BRIDGE_VLAN_INFO_RANGE_BEGIN}, {12, BRIDGE_VLAN_INFO_RANGE_BEGIN}}, "begun twice"},
        {{{10, BRIDGE_VLAN_INFO_RANGE_END}}, "without a start"},
        {{{10, BRIDGE_VLAN_INFO_RANGE_BEGIN}, {5, BRIDGE_VLAN_INFO_RANGE_END}}, "without a start"},
    };
    for (const auto& c : cases) {
        auto m = bridgePort(43, 40);
        nlattr* spec = nla_nest_start(m.msg, IFLA_AF_SPEC);
        for (const auto& [vid, flags] : c.vlans) putVlan(m.msg, vid, flags);
        nla_nest_end(m.msg, spec);
        auto d = m.decode();
        auto* bad = std::get_if<Malformed>(&d);
        ASSERT_NE(bad, nullptr) << c.why;
        EXPECT_NE(bad->why.find(c.why), std::string::npos) << bad->why;
    }
    auto odd = bridgePort(43, 40);  // an entry of the wrong size
    nlattr* spec = nla_nest_start(odd.msg, IFLA_AF_SPEC);
    uint16_t half = 1001;
    nla_put(odd.msg, IFLA_BRIDGE_VLAN_INFO, sizeof half, &half);
    nla_nest_end(odd.msg, spec);
    auto d = odd.decode();
    EXPECT_TRUE(std::holds_alternative<Malformed>(d));
}
