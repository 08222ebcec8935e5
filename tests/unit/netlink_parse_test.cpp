#include <gtest/gtest.h>
#include <linux/if.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <sys/socket.h>

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
    ~Msg() { nlmsg_free(msg); }
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
