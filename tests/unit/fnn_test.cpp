// Fast network notifications (libs/fnn): the wire format of proto/fnn_wire.md, the keys,
// and what a receiver admits, with the attacks a server can try.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "twinrail/fnn/guard.h"
#include "twinrail/fnn/keys.h"
#include "twinrail/fnn/notice.h"

namespace twinrail::fnn {
namespace {

using namespace std::chrono_literals;

const Key kPlane1 =
    *parseKeyHex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
const Key kPlane2 =
    *parseKeyHex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff000102030405060708090a0b0c0d0e0f");
const IpAddr kLeaf = *IpAddr::parse("10.254.1.1");
const IpAddr kSpine = *IpAddr::parse("10.254.1.101");
const IpAddr kServer = *IpAddr::parse("10.128.0.2");
const IpAddr kServer2 = *IpAddr::parse("10.128.0.3");
constexpr uint64_t kWall = 1'800'000'000'000'000'000ULL;
const MonoTime kNow = MonoTime{} + 1000s;

Notice hostPortDown(uint64_t seq = 1) {
    Notice n;
    n.event = Event::HostPortDown;
    n.plane = 1;
    n.sequence = seq;
    n.sentNs = kWall;
    n.sender = kLeaf;
    n.subjects = {*IpPrefix::parse("10.128.0.2/32"), *IpPrefix::parse("2001:db8::2/128")};
    return n;
}

GuardSettings switchGuard() {
    GuardSettings g;
    g.plane = 1;
    g.kind = KeyKind::Plane;
    g.keys = {{0, kPlane1}};
    g.senders = {kLeaf, kSpine};
    return g;
}

TEST(FnnKeys, HexRoundTripAndRefusals) {
    EXPECT_EQ(keyHex(kPlane1), "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
    EXPECT_FALSE(parseKeyHex("00"));
    EXPECT_FALSE(parseKeyHex(std::string(63, '0') + "g"));
    EXPECT_NE(randomKey(), randomKey());
}

TEST(FnnKeys, ReceiverKeysDifferPerServerAndFromThePlaneKey) {
    // HMAC-SHA256(plane key, "twinrail-fnn receiver 10.128.0.2"), as `openssl dgst -sha256 -mac
    // HMAC -macopt hexkey:<plane key>` computes it: a server's key is reproducible by hand.
    EXPECT_EQ(keyHex(receiverKey(kPlane1, kServer)),
              "b059f85a0346cd17cc02dc220d08a660e14a4476dc96ce776efe77d517bf91a7");
    EXPECT_NE(receiverKey(kPlane1, kServer), receiverKey(kPlane1, kServer2));
    EXPECT_NE(receiverKey(kPlane1, kServer), receiverKey(kPlane2, kServer));
    EXPECT_NE(receiverKey(kPlane1, kServer), kPlane1);
}

TEST(FnnWire, RoundTripsEveryEvent) {
    for (uint8_t e = 1; e <= kMaxEvent; ++e) {
        Notice n = hostPortDown(e);
        n.event = static_cast<Event>(e);
        const bool link = e >= 3 && e <= 5;
        if (link) {
            n.subjects.clear();
            n.peer = kSpine;
        }
        if (n.event == Event::UplinkDegraded) n.level = 1, n.levels = 4;
        auto bytes = encode(n, kPlane1);
        auto parsed = parse(bytes);
        ASSERT_TRUE(std::holds_alternative<Parsed>(parsed)) << std::get<ParseError>(parsed).what;
        EXPECT_EQ(std::get<Parsed>(parsed).notice, n) << describe(n);
        EXPECT_TRUE(macValid(bytes, std::get<Parsed>(parsed).macOffset, kPlane1));
        EXPECT_FALSE(macValid(bytes, std::get<Parsed>(parsed).macOffset, kPlane2));
    }
}

// The fuzz seeds were written by a second encoder (Python's struct and hmac, from
// proto/fnn_wire.md alone): this parser and MAC agree with it on every event kind.
TEST(FnnWire, ASecondEncoderFromTheSpecAgrees) {
    const std::filesystem::path dir = TWINRAIL_FNN_SEEDS;
    int seen = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        std::ifstream in(entry.path(), std::ios::binary);
        std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
        auto parsed = parse(bytes);
        ASSERT_TRUE(std::holds_alternative<Parsed>(parsed))
            << entry.path() << ": " << std::get<ParseError>(parsed).what;
        const auto& p = std::get<Parsed>(parsed);
        EXPECT_TRUE(macValid(bytes, p.macOffset, kPlane1)) << entry.path();
        EXPECT_EQ(encode(p.notice, kPlane1), bytes) << entry.path();
        ++seen;
    }
    EXPECT_GE(seen, 4) << dir;
}

TEST(FnnWire, OneNoticeForAWholeLeafFitsAnMtu) {
    Notice n = hostPortDown();
    n.subjects.clear();
    for (int i = 0; i < static_cast<int>(kMaxSubjects); ++i)
        n.subjects.push_back(*IpPrefix::parse("10.128." + std::to_string(i) + ".0/24"));
    auto bytes = encode(n, kPlane1);
    EXPECT_EQ(bytes.size(), kMaxBytes);
    EXPECT_LE(bytes.size(), 1500U - 48U);  // IPv6 + UDP headers
    n.subjects.push_back(*IpPrefix::parse("10.129.0.0/24"));
    EXPECT_THROW(encode(n, kPlane1), std::invalid_argument);
}

TEST(FnnWire, TheSenderCannotWriteWhatTheParserRefuses) {
    Notice n = hostPortDown();
    n.subjects = {*IpPrefix::parse("10.128.0.2/24")};  // host bits set
    EXPECT_THROW(encode(n, kPlane1), std::invalid_argument);
    n = hostPortDown();
    n.sender = *IpAddr::parse("::ffff:10.254.1.1");
    EXPECT_THROW(encode(n, kPlane1), std::invalid_argument);
    n = hostPortDown();
    n.subjects.clear();
    EXPECT_THROW(encode(n, kPlane1), std::invalid_argument);
    n = hostPortDown();
    n.plane = 0;
    EXPECT_THROW(encode(n, kPlane1), std::invalid_argument);
}

std::string parseError(std::vector<uint8_t> bytes) {
    auto parsed = parse(bytes);
    if (const auto* e = std::get_if<ParseError>(&parsed))
        return std::to_string(e->offset) + ": " + e->what;
    return "";
}

TEST(FnnWire, RefusesEveryOtherForm) {
    const auto good = encode(hostPortDown(), kPlane1);
    auto with = [&good](size_t at, uint8_t v) {
        auto b = good;
        b[at] = v;
        return b;
    };
    EXPECT_EQ(parseError(with(0, 'X')), "0: magic is not TRFN");
    EXPECT_EQ(parseError(with(4, 2)), "4: version 2 (1)");
    EXPECT_EQ(parseError(with(5, 0)), "5: unknown event 0");
    EXPECT_EQ(parseError(with(6, 16)), "6: plane 16 (1..15)");
    EXPECT_EQ(parseError(with(31, 1)), "31: reserved byte not zero");
    EXPECT_EQ(parseError(with(28, 5)), "32: sender: address family 5 (4 or 6)");
    EXPECT_EQ(parseError(with(40, 1)), "32: sender: an IPv4 address with bytes after its 4");
    EXPECT_EQ(parseError(with(29, 4)), "29: a peer on an event that has none");
    EXPECT_EQ(parseError(with(25, 1)), "24: level 1 of 0");
    EXPECT_EQ(parseError(with(30, 3)), "116: length is not the header, 3 subjects and a MAC");
    EXPECT_EQ(parseError(with(30, 0)), "30: host-port-down needs its subjects");
    EXPECT_EQ(parseError(with(65, 33)), "65: subject: prefix length 33 > 32");
    EXPECT_EQ(parseError(with(83, 120)), "84: subject: host bits set");  // 2001:db8::2/120
    EXPECT_EQ(parseError(std::vector<uint8_t>(good.begin(), good.begin() + 79)),
              "79: shorter than a header and a MAC (80 bytes)");
    EXPECT_EQ(parseError(std::vector<uint8_t>(good.begin(), good.end() - 1)),
              "100: length is not the header, 2 subjects and a MAC");
    // The IPv4-mapped spelling of the sender: family 6 with ::ffff:10.254.1.1.
    auto mapped = good;
    mapped[28] = 6;
    std::fill(mapped.begin() + 32, mapped.begin() + 48, 0);
    mapped[42] = mapped[43] = 0xff;
    std::copy(kLeaf.data(), kLeaf.data() + 4, mapped.begin() + 44);
    EXPECT_EQ(parseError(mapped), "32: sender: an IPv4-mapped IPv6 address (IPv4 is family 4)");
}

TEST(FnnGuard, AdmitsASwitchsNoticeOnceAndCountsIt) {
    NoticeGuard guard(switchGuard());
    auto bytes = encode(hostPortDown(7), kPlane1);
    auto v = guard.admit(bytes, kLeaf, kWall + 1'000'000, kNow);
    ASSERT_TRUE(std::holds_alternative<Notice>(v)) << std::get<Refused>(v).detail;
    EXPECT_EQ(std::get<Notice>(v), hostPortDown(7));
    // The same datagram again, and an older one: replays.
    v = guard.admit(bytes, kLeaf, kWall, kNow);
    EXPECT_EQ(std::get<Refused>(v).reason, Refusal::Replayed);
    v = guard.admit(encode(hostPortDown(6), kPlane1), kLeaf, kWall, kNow);
    EXPECT_EQ(std::get<Refused>(v).reason, Refusal::Replayed);
    EXPECT_EQ(guard.counters().accepted, 1U);
    EXPECT_EQ(guard.counters().of(Refusal::Replayed), 2U);
}

Refusal refusalOf(NoticeGuard& g, const std::vector<uint8_t>& b, const IpAddr& source,
                  uint64_t wall = kWall) {
    auto v = g.admit(b, source, wall, kNow);
    return std::holds_alternative<Refused>(v) ? std::get<Refused>(v).reason : Refusal{255};
}

TEST(FnnGuard, ServersCannotForgeASwitchsNotice) {
    NoticeGuard guard(switchGuard());
    // A server holds its own receiver key: a MAC under it is no MAC under the plane key,
    // whether it claims the plane key or its own.
    const Key mine = receiverKey(kPlane1, kServer);
    EXPECT_EQ(refusalOf(guard, encode(hostPortDown(1), mine), kLeaf), Refusal::BadMac);
    Notice n = hostPortDown(2);
    n.key = {KeyKind::Receiver, 0};
    EXPECT_EQ(refusalOf(guard, encode(n, mine), kLeaf), Refusal::UnknownKey);
    // In its own name, or from its own address in a switch's name.
    n = hostPortDown(3);
    n.sender = kServer;
    EXPECT_EQ(refusalOf(guard, encode(n, mine), kServer), Refusal::UnknownSender);
    EXPECT_EQ(refusalOf(guard, encode(hostPortDown(4), kPlane1), kServer), Refusal::SourceMismatch);
    // The other plane's key, or a notice for the other plane.
    EXPECT_EQ(refusalOf(guard, encode(hostPortDown(5), kPlane2), kLeaf), Refusal::BadMac);
    n = hostPortDown(6);
    n.plane = 2;
    EXPECT_EQ(refusalOf(guard, encode(n, kPlane2), kLeaf), Refusal::WrongPlane);
    // A flipped bit anywhere in a good notice.
    auto good = encode(hostPortDown(8), kPlane1);
    for (size_t i = 0; i < good.size(); ++i) {
        auto b = good;
        b[i] ^= 0x01;
        auto r = refusalOf(guard, b, kLeaf);
        EXPECT_NE(r, Refusal{255}) << "byte " << i;
    }
    EXPECT_EQ(guard.counters().accepted, 0U);
    EXPECT_TRUE(std::holds_alternative<Notice>(guard.admit(good, kLeaf, kWall, kNow)));
}

TEST(FnnGuard, AServerChecksNoticesUnderItsOwnReceiverKey) {
    GuardSettings g = switchGuard();
    g.kind = KeyKind::Receiver;
    g.keys = {{0, receiverKey(kPlane1, kServer)}};
    NoticeGuard guard(g);
    Notice n = hostPortDown();
    n.key = {KeyKind::Receiver, 0};
    EXPECT_TRUE(std::holds_alternative<Notice>(
        guard.admit(encode(n, receiverKey(kPlane1, kServer)), kLeaf, kWall, kNow)));
    n.sequence = 2;  // meant for 10.128.0.3: 10.128.0.2 cannot check it, and does not take it
    EXPECT_EQ(refusalOf(guard, encode(n, receiverKey(kPlane1, kServer2)), kLeaf), Refusal::BadMac);
}

TEST(FnnGuard, StaleNoticesAreRefusedEitherWay) {
    NoticeGuard guard(switchGuard());
    auto bytes = encode(hostPortDown(), kPlane1);
    EXPECT_EQ(refusalOf(guard, bytes, kLeaf, kWall + 2'000'000'001ULL), Refusal::Stale);
    EXPECT_EQ(refusalOf(guard, bytes, kLeaf, kWall - 2'000'000'001ULL), Refusal::Stale);
    EXPECT_TRUE(
        std::holds_alternative<Notice>(guard.admit(bytes, kLeaf, kWall + 1'999'000'000ULL, kNow)));
}

TEST(FnnGuard, AFloodInASwitchsNameIsCutAtItsRateBeforeAnyMac) {
    GuardSettings g = switchGuard();
    g.ratePerSecond = 100;
    g.burst = 10;
    NoticeGuard guard(g);
    auto forged = encode(hostPortDown(1), kPlane2);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(refusalOf(guard, forged, kLeaf), Refusal::BadMac);
    EXPECT_EQ(refusalOf(guard, forged, kLeaf), Refusal::RateLimited);
    // The other switch is untouched, and the bucket refills at the rate (10 ms: 1 token).
    EXPECT_TRUE(std::holds_alternative<Notice>(guard.admit(encode(
                                                               [] {
                                                                   auto n = hostPortDown(1);
                                                                   n.sender = kSpine;
                                                                   return n;
                                                               }(),
                                                               kPlane1),
                                                           kSpine, kWall, kNow)));
    EXPECT_TRUE(std::holds_alternative<Notice>(
        guard.admit(encode(hostPortDown(2), kPlane1), kLeaf, kWall, kNow + 10ms)));
    EXPECT_EQ(guard.counters().of(Refusal::RateLimited), 1U);
}

TEST(FnnGuard, KeyRotationAndSenderChangesKeepReplayState) {
    NoticeGuard guard(switchGuard());
    auto old = encode(hostPortDown(5), kPlane1);
    EXPECT_TRUE(std::holds_alternative<Notice>(guard.admit(old, kLeaf, kWall, kNow)));
    GuardSettings g = switchGuard();
    g.keys = {{0, kPlane1}, {1, kPlane2}};  // generation 1 arrives, 0 still valid
    guard.setSettings(g);
    EXPECT_EQ(refusalOf(guard, old, kLeaf), Refusal::Replayed);
    Notice n = hostPortDown(6);
    n.key.generation = 1;
    EXPECT_TRUE(
        std::holds_alternative<Notice>(guard.admit(encode(n, kPlane2), kLeaf, kWall, kNow)));
    g.senders = {kSpine};  // the leaf left the plane
    guard.setSettings(g);
    n.sequence = 7;
    EXPECT_EQ(refusalOf(guard, encode(n, kPlane2), kLeaf), Refusal::UnknownSender);
}

}  // namespace
}  // namespace twinrail::fnn
