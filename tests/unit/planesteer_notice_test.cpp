// Fast notices to planesteer (issue 34): the policy's reaction to a notice, the config of
// keys and senders, the intake's choice of bond, key and port, and the daemon pinning a
// peer the moment a switch of its plane says it lost it, before any probe could miss.
#include "notice_intake.h"
#include "planesteer_daemon_harness.h"
#include "twinrail/fnn/notice.h"

namespace twinrail::planesteer {
namespace {

using namespace std::chrono_literals;
using namespace harness;

const fnn::Key kPlane1 =
    *fnn::parseKeyHex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
const fnn::Key kPlane2 =
    *fnn::parseKeyHex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff000102030405060708090a0b0c0d0e0f");
const IpAddr kBondAddr = *IpAddr::parse("10.128.0.2");
const IpAddr kLeaf1 = *IpAddr::parse("10.254.1.1");
const IpAddr kLeaf2 = *IpAddr::parse("10.254.2.1");
const IpPrefix kPeer32 = *IpPrefix::parse("10.128.0.3/32");

TEST(SteerPolicyNotice, ANoticePinsAtOnceAndTheNextAnswerAfterItLetsGo) {
    SteerPolicy p(2, {200ms, 3, 20ms});
    auto t = Clock::time_point{} + 100s;
    p.addPeer(*IpAddr::parse("10.128.0.3"), t);
    p.addPeer(*IpAddr::parse("10.128.0.4"), t);
    p.addPeer(*IpAddr::parse("10.128.1.3"), t);
    for (size_t port : {0U, 1U}) {
        p.answered(*IpAddr::parse("10.128.0.3"), port, t + 1ms);
        p.answered(*IpAddr::parse("10.128.0.4"), port, t + 1ms);
    }
    EXPECT_EQ(p.notified(*IpPrefix::parse("10.128.0.0/24"), 0, t + 2ms), 2U);
    EXPECT_EQ(p.pinFor(*IpAddr::parse("10.128.0.3"), t + 2ms), std::optional<size_t>(1));
    EXPECT_EQ(p.pinFor(*IpAddr::parse("10.128.0.4"), t + 2ms), std::optional<size_t>(1));
    EXPECT_FALSE(p.pinFor(*IpAddr::parse("10.128.1.3"), t + 2ms)) << "outside the subject";
    // An answer already on its way when the notice came does not undo it.
    p.answered(*IpAddr::parse("10.128.0.3"), 0, t + 10ms);
    EXPECT_EQ(p.pinFor(*IpAddr::parse("10.128.0.3"), t + 10ms), std::optional<size_t>(1));
    // The plane answers later than that: repaired, back on the hash.
    p.answered(*IpAddr::parse("10.128.0.3"), 0, t + 30ms);
    p.answered(*IpAddr::parse("10.128.0.3"), 1, t + 30ms);
    EXPECT_FALSE(p.pinFor(*IpAddr::parse("10.128.0.3"), t + 30ms));
    EXPECT_EQ(p.notified(kPeer32, 7, t), 0U) << "no such port";
}

nlohmann::json noticeConfig() {
    return nlohmann::json::parse(
        R"({"PLANESTEER": {"global": {"notice_port": "7430"}},
            "PLANESTEER_NOTICE": {"1": {"senders": "10.254.1.1,10.254.1.101"},
                                  "2": {"senders": "10.254.2.1"}},
            "PLANESTEER_BOND": {"bond0": {"ports": "port1,port2", "planes": "1,2",
                "notice_keys": "1:)" +
        fnn::keyHex(fnn::receiverKey(kPlane1, kBondAddr)) +
        ",2:" + fnn::keyHex(fnn::receiverKey(kPlane2, kBondAddr)) + R"("}}})");
}

TEST(PlanesteerNoticeConfig, ReadsPortSendersPlanesAndKeysAndNeverEchoesAKey) {
    auto ok = parseConfig(noticeConfig());
    ASSERT_TRUE(std::holds_alternative<Config>(ok)) << std::get<service::ConfigError>(ok).str();
    const auto& c = std::get<Config>(ok);
    EXPECT_EQ(c.noticePort, 7430);
    EXPECT_EQ(c.noticeSenders.at(1).size(), 2U);
    EXPECT_EQ(c.bonds.at("bond0").noticeKeys.at(2), fnn::receiverKey(kPlane2, kBondAddr));
    EXPECT_EQ(c.bonds.at("bond0").planes, (std::vector<uint8_t>{1, 2}));
    auto refused = [](nlohmann::json doc) {
        auto r = parseConfig(doc);
        return std::holds_alternative<service::ConfigError>(r)
                   ? std::get<service::ConfigError>(r).str()
                   : std::string("accepted");
    };
    auto doc = noticeConfig();
    const std::string secret = "1:" + std::string(63, 'a') + "x";
    doc["PLANESTEER_BOND"]["bond0"]["notice_keys"] = secret;
    EXPECT_EQ(refused(doc).find(secret.substr(2)), std::string::npos) << refused(doc);
    EXPECT_NE(refused(doc).find("field notice_keys"), std::string::npos) << refused(doc);
    doc = noticeConfig();
    doc["PLANESTEER_BOND"]["bond0"]["planes"] = "1,1";
    EXPECT_NE(refused(doc).find("field planes"), std::string::npos);
    doc = noticeConfig();
    doc["PLANESTEER_NOTICE"]["16"] = {{"senders", "10.0.0.1"}};
    EXPECT_NE(refused(doc).find("PLANESTEER_NOTICE|16"), std::string::npos);
    doc = noticeConfig();
    doc["PLANESTEER_NOTICE"]["1"]["senders"] = "10.254.1.1,not-an-address";
    EXPECT_NE(refused(doc).find("field senders"), std::string::npos);
    doc = noticeConfig();
    doc["PLANESTEER"]["global"]["notice_port"] = "65536";
    EXPECT_NE(refused(doc).find("notice_port"), std::string::npos);
}

std::vector<uint8_t> lossNotice(uint8_t plane, const IpAddr& sender, const fnn::Key& key,
                                uint64_t seq, uint64_t wallNs, IpPrefix subject = kPeer32) {
    fnn::Notice n;
    n.event = fnn::Event::HostPortDown;
    n.plane = plane;
    n.key = {fnn::KeyKind::Receiver, 0};
    n.sequence = seq;
    n.sentNs = wallNs;
    n.sender = sender;
    n.subjects = {subject};
    return fnn::encode(n, key);
}

TEST(NoticeIntake, PicksTheBondByAddressThePortByPlaneAndRefusesTheRest) {
    NoticeIntake intake(std::get<Config>(parseConfig(noticeConfig())));
    const std::map<std::string, IpAddr> addresses{{"bond0", kBondAddr}};
    const uint64_t wall = 1'800'000'000'000'000'000ULL;
    const fnn::MonoTime t = fnn::MonoTime{} + 10s;
    auto v = intake.admit(lossNotice(2, kLeaf2, fnn::receiverKey(kPlane2, kBondAddr), 1, wall),
                          kLeaf2, kBondAddr, addresses, wall, t);
    ASSERT_TRUE(std::holds_alternative<NoticeForBond>(v)) << std::get<fnn::Refused>(v).detail;
    EXPECT_EQ(std::get<NoticeForBond>(v).port, 1U);
    EXPECT_TRUE(std::get<NoticeForBond>(v).lost);
    // To an address that is no bond's; a plane the bond has no key of; another bond's key.
    auto reason = [&](const std::vector<uint8_t>& b, const IpAddr& src, const IpAddr& dst) {
        auto r = intake.admit(b, src, dst, addresses, wall, t);
        return std::holds_alternative<fnn::Refused>(r) ? std::get<fnn::Refused>(r).reason
                                                       : fnn::Refusal{255};
    };
    auto good1 = lossNotice(1, kLeaf1, fnn::receiverKey(kPlane1, kBondAddr), 1, wall);
    EXPECT_EQ(reason(good1, kLeaf1, *IpAddr::parse("10.128.0.9")), fnn::Refusal::Malformed);
    EXPECT_EQ(reason(lossNotice(3, kLeaf1, kPlane1, 2, wall), kLeaf1, kBondAddr),
              fnn::Refusal::WrongPlane);
    auto other =
        lossNotice(1, kLeaf1, fnn::receiverKey(kPlane1, *IpAddr::parse("10.128.0.3")), 3, wall);
    EXPECT_EQ(reason(other, kLeaf1, kBondAddr), fnn::Refusal::BadMac);
    // A server with its own key of plane 2 cannot speak for plane 2's leaf either.
    EXPECT_EQ(reason(lossNotice(2, kLeaf2, fnn::receiverKey(kPlane2, kBondAddr), 4, wall),
                     *IpAddr::parse("10.128.0.3"), kBondAddr),
              fnn::Refusal::SourceMismatch);
    auto c = intake.counters();
    EXPECT_EQ(c.accepted, 1U);
    EXPECT_EQ(c.of(fnn::Refusal::Malformed) + c.of(fnn::Refusal::WrongPlane) +
                  c.of(fnn::Refusal::BadMac) + c.of(fnn::Refusal::SourceMismatch),
              4U);
}

class PlanesteerNotices : public PlanesteerDaemon {
  protected:
    PlanesteerNotices() {
        cfg = std::get<Config>(parseConfig(noticeConfig()));
        cfg.steer.interval = 1ms;
        cfg.steer.activeInterval = 1ms;
        cfg.steer.misses = 3;
    }
    void deliver(const std::vector<uint8_t>& bytes, const IpAddr& from) {
        ASSERT_TRUE(noticeHandler);
        noticeHandler(fnn::Datagram{bytes, from, kBondAddr});
        loop.settle();
    }
};

TEST_F(PlanesteerNotices, ASwitchsNoticePinsThePeerBeforeAnyProbeMisses) {
    start();
    loop.settle();
    EXPECT_EQ(noticePort, 7430);
    round(3);
    EXPECT_EQ(count(tc->lines(), "replace"), 0u) << "both planes answer";
    // Plane 1's leaf lost the peer's port: the peer goes to port2 now, no round later.
    const auto key1 = fnn::receiverKey(kPlane1, kBondAddr);
    deliver(lossNotice(1, kLeaf1, key1, 1, wallNs), kLeaf1);
    EXPECT_EQ(pins().pinnedPort(peer), std::optional<size_t>(1));
    EXPECT_EQ(tc->pins("bond0"), (std::map<std::string, std::string>{{"10.128.0.3", "port2"}}));
    EXPECT_EQ(daemon->noticeCounters().accepted, 1U);
    // Plane 1 keeps answering (the fake's leaf repaired it): back on the hash.
    round(3);
    EXPECT_FALSE(pins().pinnedPort(peer));
}

TEST_F(PlanesteerNotices, ForgedReplayedAndStaleNoticesMoveNothing) {
    start();
    loop.settle();
    round(3);
    const auto key1 = fnn::receiverKey(kPlane1, kBondAddr);
    const IpAddr server = *IpAddr::parse("10.128.0.3");
    deliver(lossNotice(1, kLeaf1, fnn::receiverKey(kPlane1, server), 1, wallNs), kLeaf1);
    deliver(lossNotice(1, server, key1, 2, wallNs), server);
    deliver(lossNotice(1, kLeaf1, key1, 3, wallNs - 5'000'000'000ULL), kLeaf1);
    EXPECT_EQ(count(tc->lines(), "replace"), 0u);
    deliver(lossNotice(1, kLeaf1, key1, 4, wallNs), kLeaf1);
    round(3);  // repaired: let go
    EXPECT_FALSE(pins().pinnedPort(peer));
    deliver(lossNotice(1, kLeaf1, key1, 4, wallNs), kLeaf1);  // the same again
    EXPECT_FALSE(pins().pinnedPort(peer)) << "a replay moved the peer";
    auto c = daemon->noticeCounters();
    EXPECT_EQ(c.accepted, 1U);
    EXPECT_EQ(c.of(fnn::Refusal::BadMac), 1U);
    EXPECT_EQ(c.of(fnn::Refusal::UnknownSender), 1U);
    EXPECT_EQ(c.of(fnn::Refusal::Stale), 1U);
    EXPECT_EQ(c.of(fnn::Refusal::Replayed), 1U);
}

TEST_F(PlanesteerNotices, NoNoticePortNoSocket) {
    cfg.noticePort = 0;
    start();
    loop.settle();
    EXPECT_EQ(noticePort, 0);
    EXPECT_FALSE(noticeHandler);
}

}  // namespace
}  // namespace twinrail::planesteer
