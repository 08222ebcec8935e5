// EVPN-MH attachment: FRR's views parsed as FRR 8.4.4 prints them, and the rule on each
// case of ../shared/notes/EVPN-MH-FACTS.md (section numbers below).
#include <gtest/gtest.h>
#include "evpn_views.h"

#include "es_attachment.h"
#include "es_sync.h"
#include "evpn_view.h"
#include "evpn_views.h"

using namespace twinrail;
using namespace twinrail::hostrouted;

namespace {

const char* const kArp = fixture::kEvpnArp;
const char* const kMac = fixture::kEvpnMac;
const char* const kEs = fixture::kEvpnEs;

IpAddr ip(const char* s) {
    return *IpAddr::parse(s);
}

EvpnView view() {
    return std::get<EvpnView>(parseEvpnView(kArp, kMac, kEs));
}

KernelNeighborFacts learned() {
    return {true, true, false, false, false};
}

}  // namespace

TEST(EvpnView, ParsesFrrsJson) {
    auto v = view();
    ASSERT_EQ(v.neighbors.size(), 2u);
    const auto& n = v.neighbors.at(ip("10.128.0.2"));
    EXPECT_EQ(n.vni, 10001u);
    EXPECT_TRUE(n.localInactive);
    EXPECT_TRUE(n.peerActive);
    EXPECT_FALSE(n.remote);
    const EvpnMac* m = v.macOf(n);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->interface, "hbond1");
    const EvpnSegment* es = v.segmentOf(*m);
    ASSERT_NE(es, nullptr);
    EXPECT_TRUE(es->local && es->operUp);
    EXPECT_TRUE(v.neighbors.at(ip("10.128.0.20")).remote);
    EXPECT_EQ(v.neighbors.at(ip("10.128.0.20")).remoteVtep, "10.253.0.1");
    // No segments at all: FRR prints {}.
    EXPECT_TRUE(std::holds_alternative<EvpnView>(parseEvpnView("{}", "{}", "{}")));
}

TEST(EvpnView, BadInputNamesTheViewAndEntry) {
    auto err = [](const std::string& a, const std::string& m, const std::string& e) {
        auto r = parseEvpnView(a, m, e);
        return std::holds_alternative<EvpnParseError>(r) ? std::get<EvpnParseError>(r).message
                                                         : std::string("parsed");
    };
    EXPECT_NE(err("not json", kMac, kEs).find("arp-cache"), std::string::npos);
    EXPECT_NE(err(R"({"x":{}})", kMac, kEs).find("\"x\" is not a VNI"), std::string::npos);
    auto badMac =
        err(R"({"7":{"10.0.0.1":{"ip":"10.0.0.1","type":"local","mac":"zz"}}})", kMac, kEs);
    EXPECT_NE(badMac.find("VNI 7 entry 10.0.0.1: bad MAC"), std::string::npos);
    auto badType = err(R"({"7":{"10.0.0.1":{"ip":"10.0.0.1","type":"odd"}}})", kMac, kEs);
    EXPECT_NE(badType.find("not local or remote"), std::string::npos);
    EXPECT_NE(err(kArp, kMac, R"([{"accessPort":"x"}])").find("without an esi"), std::string::npos);
}

// 4(a): ARP reached leaf 1 only. Leaf 1 learned it; leaf 2 has no kernel entry, and FRR
// has it local-inactive and peer-active on a local, up segment.
TEST(EsAttachment, HostWhoseArpReachedThePeerIsRoutedAsEsPeer) {
    auto v = view();
    auto d = decideAttachment(ip("10.128.0.2"), {}, &v, {});
    EXPECT_TRUE(d.route);
    EXPECT_EQ(d.source, Source::EsPeer);
    EXPECT_TRUE(d.ownNeighbor);
    // The leaf that got the ARP routes it as its own (and probes it).
    d = decideAttachment(ip("10.128.0.2"), learned(), &v, {});
    EXPECT_TRUE(d.route);
    EXPECT_EQ(d.source, Source::Local);
    EXPECT_FALSE(d.ownNeighbor);
}

// 4(b): the ES port goes down. The kernel keeps a STALE entry, or zebra's partial sync
// puts one in (protocol zebra): neither is proof of attachment.
TEST(EsAttachment, SegmentDownHereWithdrawsWhateverTheKernelHolds) {
    auto v = view();
    v.segments.begin()->second.operUp = false;
    EXPECT_FALSE(decideAttachment(ip("10.128.0.2"), learned(), &v, {}).route);
    // Still the pair's: what arrives here goes over the AUX link to the peer.
    EXPECT_TRUE(decideAttachment(ip("10.128.0.2"), learned(), &v, {}).detour);
    KernelNeighborFacts zebra{true, true, false, true, false};
    EXPECT_FALSE(decideAttachment(ip("10.128.0.2"), zebra, &v, {}).route);
    EXPECT_FALSE(decideAttachment(ip("10.128.0.2"), {}, &v, {}).route);
    // The kernel's link state is known before FRR's next read: that is enough.
    auto up = view();
    auto d = decideAttachment(ip("10.128.0.2"), learned(), &up, {"hbond1"});
    EXPECT_FALSE(d.route);
    EXPECT_NE(d.why.find("down here"), std::string::npos);
}

// 4(c): a host behind the remote VTEP: extern_learn NOARP in the kernel, type remote in FRR.
TEST(EsAttachment, RemoteVtepHostsAreNeverRouted) {
    auto v = view();
    KernelNeighborFacts remote{true, false, false, true, true};
    EXPECT_FALSE(decideAttachment(ip("10.128.0.20"), remote, &v, {}).route);
    EXPECT_FALSE(decideAttachment(ip("10.128.0.20"), remote, nullptr, {}).route);
    auto d = decideAttachment(ip("10.128.0.20"), {}, &v, {});
    EXPECT_FALSE(d.route);
    EXPECT_NE(d.why.find("10.253.0.1"), std::string::npos);
    // Even if the kernel had learned it (a moved host), FRR's remote wins.
    EXPECT_FALSE(decideAttachment(ip("10.128.0.20"), learned(), &v, {}).route);
    EXPECT_FALSE(decideAttachment(ip("10.128.0.20"), {}, &v, {}).detour);
}

TEST(EsAttachment, BeforeFrrIsReadTheKernelDecidesAndOurEntriesStay) {
    KernelNeighborFacts ours{true, true, true, false, false};
    auto d = decideAttachment(ip("10.128.0.2"), ours, nullptr, {});
    EXPECT_TRUE(d.route);
    EXPECT_EQ(d.source, Source::EsPeer);  // a restart withdraws nothing
    EXPECT_EQ(decideAttachment(ip("10.128.0.2"), learned(), nullptr, {}).source, Source::Local);
    EXPECT_FALSE(decideAttachment(ip("10.128.0.2"), {}, nullptr, {}).route);
    // zebra's entry (it took over a synced host's) is kept too, without one of ours.
    KernelNeighborFacts zebra{true, true, false, true, false};
    auto z = decideAttachment(ip("10.128.0.2"), zebra, nullptr, {});
    EXPECT_TRUE(z.route);
    EXPECT_FALSE(z.ownNeighbor);
}

TEST(EsAttachment, SingleHomedHostsFollowTheKernel) {
    auto v = view();
    v.macs.at({10001, *parseMac("02:00:0a:80:00:02")}).esi.clear();  // a plain bridge port
    EXPECT_EQ(decideAttachment(ip("10.128.0.2"), learned(), &v, {}).source, Source::Local);
    EXPECT_FALSE(decideAttachment(ip("10.128.0.2"), {}, &v, {}).route);
    KernelNeighborFacts ours{true, true, true, false, false};
    EXPECT_FALSE(decideAttachment(ip("10.128.0.2"), ours, &v, {}).route);  // no longer synced
}

TEST(EsAttachment, InactiveOnBothPeersIsNotRouted) {
    auto v = view();
    v.neighbors.at(ip("10.128.0.2")).peerActive = false;
    EXPECT_FALSE(decideAttachment(ip("10.128.0.2"), {}, &v, {}).route);
    v.segments.begin()->second.local = false;
    EXPECT_FALSE(decideAttachment(ip("10.128.0.2"), learned(), &v, {}).route);
}

TEST(EsSync, HoldKeepsHostsMissingFromARebuildingView) {
    auto old = view();
    EvpnView empty;
    auto merged = mergeDuringHold(old, empty);
    EXPECT_EQ(merged.neighbors.size(), 2u);
    EXPECT_EQ(merged.segments.size(), 1u);
    auto d = decideAttachment(ip("10.128.0.2"), {}, &merged, {});
    EXPECT_TRUE(d.route);
    // What the fresh view says about a host wins.
    auto fresh = view();
    fresh.neighbors.at(ip("10.128.0.2")).peerActive = false;
    EXPECT_FALSE(mergeDuringHold(old, fresh).neighbors.at(ip("10.128.0.2")).peerActive);
}
