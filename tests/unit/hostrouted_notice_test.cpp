// hostrouted's fast notices (issue 34): HOSTROUTED_NOTICE read and refused, and the
// leaf's notifier: one notice per event to each other leaf (plane key) and each server
// here (its own key), what another leaf says passed on, and nothing else let through.
#include <gtest/gtest.h>

#include "config.h"
#include "fast_notifier.h"
#include "twinrail/fnn/guard.h"

namespace twinrail::hostrouted {
namespace {

using namespace std::chrono_literals;

const std::string kKeyHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const fnn::Key kPlane1 = *fnn::parseKeyHex(kKeyHex);
const IpAddr kSelf = *IpAddr::parse("10.254.1.1");
const IpAddr kOtherLeaf = *IpAddr::parse("10.254.1.2");
const IpAddr kServerA = *IpAddr::parse("10.128.0.2");
const IpAddr kServerB = *IpAddr::parse("10.128.0.3");
constexpr uint64_t kWall = 1'800'000'000'000'000'000ULL;

nlohmann::json noticeDoc() {
    return {{"HOSTROUTED_NOTICE",
             {{"global",
               {{"port", "7430"},
                {"plane", "1"},
                {"key", kKeyHex},
                {"source", "10.254.1.1"},
                {"leaves", "10.254.1.2,10.254.1.3"}}}}}};
}

std::string refusal(const nlohmann::json& doc) {
    auto r = parseConfig(doc);
    return std::holds_alternative<ConfigError>(r) ? std::get<ConfigError>(r).str() : "accepted";
}

TEST(HostroutedNoticeConfig, ReadsItAndRefusesWithoutEverEchoingTheKey) {
    auto r = parseConfig(noticeDoc());
    ASSERT_TRUE(std::holds_alternative<Config>(r)) << refusal(noticeDoc());
    const auto& n = std::get<Config>(r).notices;
    EXPECT_TRUE(n.enabled());
    EXPECT_EQ(n.plane, 1);
    EXPECT_EQ(n.key, kPlane1);
    EXPECT_EQ(n.source, kSelf);
    EXPECT_EQ(n.leaves.size(), 2U);
    auto doc = noticeDoc();
    doc["HOSTROUTED_NOTICE"]["global"]["key"] = kKeyHex.substr(0, 63) + "g";
    EXPECT_EQ(refusal(doc), "HOSTROUTED_NOTICE|global field key: is not 64 hex digits");
    doc = noticeDoc();
    doc["HOSTROUTED_NOTICE"]["global"].erase("source");
    EXPECT_EQ(refusal(doc), "HOSTROUTED_NOTICE|global: port needs plane, key and source");
    doc = noticeDoc();
    doc["HOSTROUTED_NOTICE"]["global"]["leaves"] = "10.254.1.2,ff02::1";
    EXPECT_NE(refusal(doc).find("field leaves"), std::string::npos) << refusal(doc);
    doc = noticeDoc();
    doc["HOSTROUTED_NOTICE"]["global"]["plane"] = "16";
    EXPECT_NE(refusal(doc).find("field plane"), std::string::npos) << refusal(doc);
    doc = noticeDoc();
    doc["HOSTROUTED_NOTICE"]["other"] = nlohmann::json::object();
    EXPECT_NE(refusal(doc).find("HOSTROUTED_NOTICE|other"), std::string::npos);
    // A running daemon does not take new notice settings: a restart does.
    Config running = std::get<Config>(parseConfig(noticeDoc()));
    Config next = running;
    next.notices.leaves.clear();
    EXPECT_TRUE(std::holds_alternative<ConfigError>(checkRuntimeChange(running, next)));
}

// What the notifier sent, as the kernel would have it.
struct RecordingSocket : fnn::NoticeSocket {
    struct Sent {
        IpAddr to;
        uint16_t port;
        std::vector<uint8_t> bytes;
    };
    bool send(const IpAddr& to, uint16_t port, std::span<const uint8_t> bytes) override {
        sent.push_back({to, port, {bytes.begin(), bytes.end()}});
        return accept;
    }
    std::vector<Sent> sent;
    bool accept = true;
};

// The receiver at `to`: a server checks under its own key, a leaf under the plane key.
std::optional<fnn::Notice> admittedBy(const RecordingSocket::Sent& s, bool server) {
    fnn::GuardSettings g;
    g.plane = 1;
    g.kind = server ? fnn::KeyKind::Receiver : fnn::KeyKind::Plane;
    g.keys = {{0, server ? fnn::receiverKey(kPlane1, s.to) : kPlane1}};
    g.senders = {kSelf};
    fnn::NoticeGuard guard(g);
    auto v = guard.admit(s.bytes, kSelf, kWall, fnn::MonoTime{} + 1s);
    if (std::holds_alternative<fnn::Notice>(v)) return std::get<fnn::Notice>(v);
    return std::nullopt;
}

class Notifier : public ::testing::Test {
  protected:
    Notifier()
        : notifier(std::get<Config>(parseConfig(noticeDoc())).notices, socket,
                   [this] { return wall; }) {}
    RecordingSocket socket;
    uint64_t wall = kWall;
    FastNotifier notifier;
};

TEST_F(Notifier, APortsLossIsOneNoticeToEachLeafAndEachServerEachUnderItsOwnKey) {
    notifier.portLost({*IpAddr::parse("10.128.0.9")}, {kServerA, kServerB});
    ASSERT_EQ(socket.sent.size(), 4U);  // 2 leaves, 2 servers
    uint64_t lastSeq = 0;
    for (const auto& s : socket.sent) {
        EXPECT_EQ(s.port, 7430);
        const bool server = s.to == kServerA || s.to == kServerB;
        auto n = admittedBy(s, server);
        ASSERT_TRUE(n) << s.to.str();
        EXPECT_EQ(n->event, fnn::Event::HostPortDown);
        EXPECT_EQ(n->subjects, (std::vector<IpPrefix>{*IpPrefix::parse("10.128.0.9/32")}));
        EXPECT_GT(n->sequence, lastSeq);
        lastSeq = n->sequence;
        // A server's copy is no good to another server, nor to a leaf.
        if (server) {
            RecordingSocket::Sent elsewhere = s;
            elsewhere.to = s.to == kServerA ? kServerB : kServerA;
            EXPECT_FALSE(admittedBy(elsewhere, true));
            EXPECT_FALSE(admittedBy(s, false));
        }
    }
    EXPECT_EQ(notifier.counters().events, 1U);
    EXPECT_EQ(notifier.counters().sent, 4U);
    // No routed host behind the port: nothing to tell.
    notifier.portLost({}, {kServerA});
    EXPECT_EQ(socket.sent.size(), 4U);
}

TEST_F(Notifier, ManyAddressesGoInNoticesOf64AndAFullSocketIsCounted) {
    std::vector<IpAddr> lost;
    for (int i = 0; i < 130; ++i) lost.push_back(*IpAddr::parse("10.128.1." + std::to_string(i)));
    socket.accept = false;
    notifier.portLost(lost, {kServerA});
    EXPECT_EQ(socket.sent.size(), 9U);  // 3 notices x (2 leaves + 1 server)
    EXPECT_EQ(notifier.counters().sendFailed, 9U);
    size_t subjects = 0;
    for (const auto& s : socket.sent)
        if (s.to == kServerA) subjects += admittedBy(s, true)->subjects.size();
    EXPECT_EQ(subjects, 130U);
}

TEST_F(Notifier, AnotherLeafsNoticeIsPassedOnOnceAndAForgeryNever) {
    fnn::Notice n;
    n.event = fnn::Event::HostPortDown;
    n.plane = 1;
    n.sequence = 5;
    n.sentNs = kWall;
    n.sender = kOtherLeaf;
    n.subjects = {*IpPrefix::parse("10.128.7.2/32")};
    auto bytes = fnn::encode(n, kPlane1);
    const auto t = fnn::MonoTime{} + 1s;
    notifier.received({bytes, kOtherLeaf, kSelf}, {kServerA}, t);
    ASSERT_EQ(socket.sent.size(), 1U);
    auto relayed = admittedBy(socket.sent[0], true);
    ASSERT_TRUE(relayed);
    EXPECT_EQ(relayed->sender, kSelf);
    EXPECT_EQ(relayed->subjects, n.subjects);
    EXPECT_EQ(notifier.counters().relayed, 1U);
    // The same again (a replay), one from a server with a server's key, one from a stranger.
    notifier.received({bytes, kOtherLeaf, kSelf}, {kServerA}, t);
    n.sequence = 6;
    n.sender = kServerB;
    n.key = {fnn::KeyKind::Receiver, 0};
    notifier.received({fnn::encode(n, fnn::receiverKey(kPlane1, kServerB)), kServerB, kSelf},
                      {kServerA}, t);
    EXPECT_EQ(socket.sent.size(), 1U);
    EXPECT_EQ(notifier.guardCounters().of(fnn::Refusal::Replayed), 1U);
    EXPECT_EQ(notifier.guardCounters().of(fnn::Refusal::UnknownSender), 1U);
    auto fields = noticeStatsFields(notifier.counters(), notifier.guardCounters());
    EXPECT_EQ(fields.back(), (std::pair<std::string, std::string>{"notice_refused", "2"}));
}

// The kernel flushes a port's neighbors as it loses carrier, and those withdrawals may
// reach hostrouted before the link event: the hosts withdrawn just before still count.
TEST(PortHostsTest, APortLosesWhatItRoutedAndWhatItWithdrewJustBefore) {
    PortHosts hosts;
    const auto t = PortHosts::Time{} + 100s;
    hosts.routed(kServerA, 11);
    hosts.routed(kServerB, 11);
    hosts.routed(*IpAddr::parse("10.128.0.4"), 12);
    hosts.withdrawn(kServerB, 11, t);
    hosts.withdrawn(kServerA, 12, t);  // not where it is: nothing
    EXPECT_EQ(hosts.lostWith(11, t + 500ms, 1000ms), (std::vector<IpAddr>{kServerA, kServerB}));
    EXPECT_EQ(hosts.lostWith(11, t + 1500ms, 1000ms), (std::vector<IpAddr>{kServerA}));
    hosts.routed(kServerB, 11);  // back: routed again
    EXPECT_EQ(hosts.lostWith(11, t + 5s, 1000ms), (std::vector<IpAddr>{kServerA, kServerB}));
    EXPECT_TRUE(hosts.lostWith(13, t, 1000ms).empty());
}

}  // namespace
}  // namespace twinrail::hostrouted
