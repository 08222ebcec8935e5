// netlink::decodeQdisc on RTM_NEWQDISC messages laid out as the kernel sends them
// (tcmsg, TCA_KIND, TCA_STATS2 with TCA_STATS_QUEUE and TCA_STATS_APP): root and child
// qdiscs, a tbf's rate, and the ECN mark counters of every marking qdisc kind.
#include <gtest/gtest.h>
#include <linux/gen_stats.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "twinrail/netlink/link_stats.h"

namespace twinrail::netlink {
namespace {

std::vector<uint8_t> attr(uint16_t type, const void* data, size_t len) {
    std::vector<uint8_t> out(NLA_ALIGN(NLA_HDRLEN + len), 0);
    nlattr a{static_cast<uint16_t>(NLA_HDRLEN + len), type};
    std::memcpy(out.data(), &a, sizeof a);
    if (len > 0) std::memcpy(out.data() + NLA_HDRLEN, data, len);
    return out;
}

void append(std::vector<uint8_t>& to, const std::vector<uint8_t>& bytes) {
    to.insert(to.end(), bytes.begin(), bytes.end());
}

// One qdisc message; `app` is the kind's extended stats as the kernel lays them out.
struct QdiscMsg {
    std::vector<uint32_t> words;  // 4-aligned, as nlmsghdr needs
    QdiscMsg(int ifindex, uint32_t parent, const std::string& kind, const gnet_stats_queue& queue,
             const std::vector<uint8_t>& app) {
        std::vector<uint8_t> body(NLMSG_ALIGN(sizeof(tcmsg)), 0);
        tcmsg tc{};
        tc.tcm_family = AF_UNSPEC;
        tc.tcm_ifindex = ifindex;
        tc.tcm_parent = parent;
        std::memcpy(body.data(), &tc, sizeof tc);
        append(body, attr(TCA_KIND, kind.c_str(), kind.size() + 1));
        std::vector<uint8_t> stats = attr(TCA_STATS_QUEUE, &queue, sizeof queue);
        if (!app.empty()) append(stats, attr(TCA_STATS_APP, app.data(), app.size()));
        append(body, attr(TCA_STATS2, stats.data(), stats.size()));
        nlmsghdr nh{};
        nh.nlmsg_len = static_cast<uint32_t>(NLMSG_HDRLEN + body.size());
        nh.nlmsg_type = RTM_NEWQDISC;
        words.resize((nh.nlmsg_len + 3) / 4, 0);
        std::memcpy(words.data(), &nh, sizeof nh);
        std::memcpy(reinterpret_cast<uint8_t*>(words.data()) + NLMSG_HDRLEN, body.data(),
                    body.size());
    }
    const nlmsghdr* hdr() const { return reinterpret_cast<const nlmsghdr*>(words.data()); }
};

template <typename T>
std::vector<uint8_t> bytesOf(const T& v, size_t len = sizeof(T)) {
    std::vector<uint8_t> out(len, 0);
    std::memcpy(out.data(), &v, std::min(len, sizeof(T)));
    return out;
}

TEST(QdiscStats, RootAndChildQueuesAndTheirMarks) {
    gnet_stats_queue queue{};
    queue.qlen = 3;
    queue.backlog = 4500;
    queue.drops = 7;
    tc_red_xstats red{};
    red.marked = 1234;
    auto child = decodeQdisc(QdiscMsg(5, TC_H_MAKE(0x10000, 1), "red", queue, bytesOf(red)).hdr());
    ASSERT_TRUE(child);
    EXPECT_FALSE(child->root);
    EXPECT_EQ(child->ifindex, 5);
    EXPECT_EQ(child->backlogBytes, 4500u);
    EXPECT_EQ(child->drops, 7u);
    EXPECT_EQ(child->ecnMarks, 1234u);
    auto root = decodeQdisc(QdiscMsg(5, TC_H_ROOT, "tbf", queue, {}).hdr());
    ASSERT_TRUE(root);
    EXPECT_TRUE(root->root);
    EXPECT_FALSE(root->ecnMarks);  // tbf never marks
}

TEST(QdiscStats, EveryMarkingKindGivesItsMarks) {
    gnet_stats_queue queue{};
    tc_fq_codel_xstats fqc{};
    fqc.type = TCA_FQ_CODEL_XSTATS_QDISC;
    fqc.qdisc_stats.ecn_mark = 10;
    fqc.qdisc_stats.ce_mark = 5;  // ce_threshold marks count too
    tc_codel_xstats codel{};
    codel.ecn_mark = 3;
    codel.ce_mark = 4;
    tc_pie_xstats pie{};
    pie.ecn_mark = 8;
    tc_fq_pie_xstats fqpie{};
    fqpie.ecn_mark = 9;
    tc_choke_xstats choke{};
    choke.marked = 11;
    tc_sfb_xstats sfb{};
    sfb.marked = 12;
    struct Case {
        const char* kind;
        std::vector<uint8_t> app;
        uint64_t marks;
    };
    for (const auto& c : {Case{"fq_codel", bytesOf(fqc), 15}, Case{"codel", bytesOf(codel), 7},
                          Case{"pie", bytesOf(pie), 8}, Case{"fq_pie", bytesOf(fqpie), 9},
                          Case{"choke", bytesOf(choke), 11}, Case{"sfb", bytesOf(sfb), 12}}) {
        SCOPED_TRACE(c.kind);
        auto q = decodeQdisc(QdiscMsg(2, TC_H_ROOT, c.kind, queue, c.app).hdr());
        ASSERT_TRUE(q);
        EXPECT_EQ(q->ecnMarks, c.marks);
    }
}

TEST(QdiscStats, ShortOrForeignExtendedStatsGiveNoMarks) {
    gnet_stats_queue queue{};
    tc_red_xstats red{};
    red.marked = 99;
    // Cut before `marked`: an older or hostile layout is not read past its end.
    auto shortRed = bytesOf(red, offsetof(tc_red_xstats, marked));
    EXPECT_FALSE(decodeQdisc(QdiscMsg(2, TC_H_ROOT, "red", queue, shortRed).hdr())->ecnMarks);
    // fq_codel's class stats (type 1) are not the qdisc's marks.
    tc_fq_codel_xstats cls{};
    cls.type = TCA_FQ_CODEL_XSTATS_CLASS;
    EXPECT_FALSE(
        decodeQdisc(QdiscMsg(2, TC_H_ROOT, "fq_codel", queue, bytesOf(cls)).hdr())->ecnMarks);
    // codel before ce_mark existed: ecn_mark alone.
    tc_codel_xstats codel{};
    codel.ecn_mark = 6;
    auto oldCodel = bytesOf(codel, offsetof(tc_codel_xstats, ce_mark));
    EXPECT_EQ(decodeQdisc(QdiscMsg(2, TC_H_ROOT, "codel", queue, oldCodel).hdr())->ecnMarks, 6u);
    // A kind that does not mark, whatever its stats say.
    EXPECT_FALSE(decodeQdisc(QdiscMsg(2, TC_H_ROOT, "pfifo", queue, bytesOf(red)).hdr())->ecnMarks);
}

}  // namespace
}  // namespace twinrail::netlink
