// planesteer's trust in what it hears and its bounds: echo and ARP answers matched to
// its own requests, peer budgets, and the coalesced pin queue. Time and keys injected.
#include <gtest/gtest.h>

#include "config.h"
#include "echo_frame.h"
#include "peer_budget.h"
#include "pin_table.h"
#include "probe_match.h"
#include "steer_policy.h"

namespace twinrail::planesteer {
namespace {

using namespace std::chrono_literals;
const IpAddr kPeer = *IpAddr::parse("10.128.0.2");
const IpAddr kThird = *IpAddr::parse("10.128.3.9");
const NonceKey kKey{0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL};
const auto kT0 = Clock::time_point{} + 100s;

IpAddr ip(const std::string& s) {
    return *IpAddr::parse(s);
}

TEST(SipHash, MatchesTheReferenceVectors) {
    // The paper's key 00..0f; messages 00, 00 01, ... (vectors.h of the reference code).
    uint8_t msg[15];
    for (uint8_t i = 0; i < 15; ++i) msg[i] = i;
    EXPECT_EQ(sipHash24(kKey, msg, 0), 0x726fdb47dd0e0e31ULL);
    EXPECT_EQ(sipHash24(kKey, msg, 1), 0x74f839c593dc67fdULL);
    EXPECT_EQ(sipHash24(kKey, msg, 8), 0x93f5f5799a932462ULL);
    EXPECT_EQ(sipHash24(kKey, msg, 15), 0xa129ca6149be45e5ULL);
}

TEST(EchoMatcher, CountsOnlyTheAnswerToAnOutstandingRequestForItsOwnPort) {
    EchoMatcher m(kKey, 600ms, 1000);
    uint16_t seq0 = echoSeq(0, 1), seq1 = echoSeq(1, 2);
    uint64_t n0 = m.issue(0, kPeer, seq0, kT0);
    uint64_t n1 = m.issue(1, kPeer, seq1, kT0);
    EXPECT_NE(n0, n1);
    // A forger who knows the id and guesses a seq: no nonce, or a wrong one.
    EXPECT_EQ(m.match(std::nullopt, kPeer, seq1, kT0 + 1ms).heard, Heard::Unmatched);
    EXPECT_EQ(m.match(n1 ^ 1, kPeer, seq1, kT0 + 1ms).heard, Heard::Unmatched);
    // Port 1's nonce from a third address, or with port 0's seq: not the peer's reply.
    EXPECT_EQ(m.match(n1, kThird, seq1, kT0 + 1ms).heard, Heard::Mismatched);
    EXPECT_EQ(m.match(n1, kPeer, seq0, kT0 + 1ms).heard, Heard::Mismatched);
    // The real ones: each counts for the port its request left by, once.
    auto a0 = m.match(n0, kPeer, seq0, kT0 + 1ms);
    EXPECT_EQ(a0.heard, Heard::Answer);
    EXPECT_EQ(a0.port, 0u);
    EXPECT_EQ(m.match(n0, kPeer, seq0, kT0 + 2ms).heard, Heard::Unmatched) << "a replay";
    auto a1 = m.match(n1, kPeer, seq1, kT0 + 1ms);
    EXPECT_EQ(a1.heard, Heard::Answer);
    EXPECT_EQ(a1.port, 1u);
    EXPECT_EQ(m.counters().unmatched, 3u);
    EXPECT_EQ(m.counters().mismatched, 2u);
}

TEST(EchoMatcher, LateAnswersAndExpiredRequestsDoNotCount) {
    EchoMatcher m(kKey, 600ms, 1000);
    uint16_t seq = echoSeq(1, 9);
    uint64_t n = m.issue(1, kPeer, seq, kT0);
    EXPECT_EQ(m.match(n, kPeer, seq, kT0 + 601ms).heard, Heard::Late);
    uint64_t old = m.issue(1, kPeer, seq, kT0 + 1s);
    m.expire(kT0 + 2s);
    EXPECT_EQ(m.outstanding(), 0u);
    EXPECT_EQ(m.match(old, kPeer, seq, kT0 + 2s).heard, Heard::Unmatched);
    EXPECT_EQ(m.counters().late, 1u);
}

TEST(EchoMatcher, OutstandingRequestsStayWithinCapacity) {
    EchoMatcher m(kKey, 600ms, 8);
    for (uint16_t i = 0; i < 100; ++i) m.issue(i % 2, kPeer, i, kT0);
    EXPECT_LE(m.outstanding(), 8u);
    EXPECT_EQ(m.counters().overflow, 92u);
}

TEST(EchoFrame, TheNonceTravelsInThePayloadAndComesBack) {
    auto src = ip("10.128.1.2");
    auto req = buildEchoRequest(src, kPeer, kEchoId, echoSeq(0, 3), 0x0123456789abcdefULL);
    ASSERT_EQ(req.size(), 20u + 8u + kEchoPayloadLen);
    auto rep = req;  // the peer's reply: addresses swapped, type 0, checksum fixed up
    std::copy(req.begin() + 12, req.begin() + 16, rep.begin() + 16);
    std::copy(req.begin() + 16, req.begin() + 20, rep.begin() + 12);
    rep[20] = 0;
    rep[22] = rep[23] = 0;
    uint16_t sum = internetChecksum(rep.data() + 20, rep.size() - 20);
    rep[22] = static_cast<uint8_t>(sum >> 8);
    rep[23] = static_cast<uint8_t>(sum);
    auto r = parseEchoReply(rep.data(), rep.size());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->nonce, std::optional<uint64_t>(0x0123456789abcdefULL));
    // A reply without our payload (someone's own ping with our id) carries no nonce.
    auto bare = rep;
    bare[28] ^= 0xff;
    bare[22] = bare[23] = 0;
    sum = internetChecksum(bare.data() + 20, bare.size() - 20);
    bare[22] = static_cast<uint8_t>(sum >> 8);
    bare[23] = static_cast<uint8_t>(sum);
    auto b = parseEchoReply(bare.data(), bare.size());
    ASSERT_TRUE(b);
    EXPECT_FALSE(b->nonce);
}

// The attack of issue 18: plane 1 lost the peer, and a host keeps answering port 1's
// probes with every kind of forged reply. The peer must still be pinned to port 0
// within the policy's bound (misses intervals, plus the round that notices).
TEST(EchoMatcher, ForgedRepliesDoNotKeepADeadPlaneInUse) {
    SteerParams params{200ms, 3};
    SteerPolicy policy(2, params);
    EchoMatcher m(kKey, params.interval * params.misses, 1000);
    policy.addPeer(kPeer, kT0);
    uint16_t counter = 0;
    std::optional<uint64_t> previousPort1;
    auto deadAt = kT0 + 1s;
    std::optional<Clock::time_point> pinnedAt;
    for (auto t = kT0; t < kT0 + 3s; t += params.interval) {
        uint16_t s0 = echoSeq(0, counter++), s1 = echoSeq(1, counter++);
        uint64_t n0 = m.issue(0, kPeer, s0, t), n1 = m.issue(1, kPeer, s1, t);
        auto hear = [&](std::optional<uint64_t> n, const IpAddr& from, uint16_t seq,
                        Clock::time_point at) {
            auto v = m.match(n, from, seq, at);
            if (v.heard == Heard::Answer) policy.answered(from, v.port, at);
        };
        hear(n0, kPeer, s0, t + 1ms);  // plane 0 delivers throughout
        if (t < deadAt) {
            hear(n1, kPeer, s1, t + 1ms);
        } else {
            hear(std::nullopt, kPeer, s1, t + 1ms);   // the right id, no nonce
            hear(n1 ^ 0x5a5a, kPeer, s1, t + 1ms);    // a guessed nonce
            hear(previousPort1, kPeer, s1, t + 1ms);  // an old one, replayed
            hear(n1, kThird, s1, t + 1ms);            // seen, answered from elsewhere
            hear(n0, kPeer, s1, t + 2ms);             // port 0's nonce claiming port 1
            hear(n1, kPeer, s1, t + params.interval * params.misses + 1ms);  // too late
        }
        previousPort1 = n1;
        m.expire(t);
        if (!pinnedAt && policy.pinFor(kPeer, t + 1ms)) pinnedAt = t + 1ms;
    }
    ASSERT_TRUE(pinnedAt) << "a forger kept plane 1 in use";
    EXPECT_EQ(policy.pinFor(kPeer, kT0 + 3s), std::optional<size_t>(0));
    EXPECT_LE(*pinnedAt - deadAt, params.interval * (params.misses + 1));
    EXPECT_GT(m.counters().unmatched + m.counters().mismatched, 0u);
}

TEST(ArpMatcher, AnswersComeFromTheAskedIpOnTheAskedPortWithinTheWindow) {
    ArpMatcher m(600ms, 100);
    MacAddr leaf0{2, 0, 0, 0, 0, 1}, leaf1{2, 0, 0, 0, 0, 2}, other{2, 0, 0, 0, 0, 9};
    EXPECT_EQ(m.match(0, kPeer, leaf0, kT0), Heard::Unmatched) << "never asked";
    m.asked(0, kPeer, kT0);
    EXPECT_EQ(m.match(1, kPeer, leaf1, kT0 + 1ms), Heard::Unmatched) << "the other port";
    EXPECT_EQ(m.match(0, kThird, leaf0, kT0 + 1ms), Heard::Unmatched) << "another IP";
    EXPECT_EQ(m.match(0, kPeer, leaf0, kT0 + 1ms), Heard::Answer);
    EXPECT_EQ(m.match(0, kPeer, leaf0, kT0 + 2ms), Heard::Unmatched) << "one per request";
    m.asked(0, kPeer, kT0 + 1s);
    EXPECT_EQ(m.match(0, kPeer, leaf0, kT0 + 1s + 601ms), Heard::Late);
    // The port's MAC sticks until the port loses carrier.
    m.asked(0, kPeer, kT0 + 2s);
    EXPECT_EQ(m.match(0, kPeer, other, kT0 + 2s + 1ms), Heard::MacChanged);
    EXPECT_EQ(m.match(0, kPeer, leaf0, kT0 + 2s + 2ms), Heard::Answer) << "still asked";
    m.portDown(0);
    m.asked(0, kPeer, kT0 + 3s);
    EXPECT_EQ(m.match(0, kPeer, other, kT0 + 3s + 1ms), Heard::Answer);
    m.asked(1, kThird, kT0 + 4s);
    m.expire(kT0 + 5s);
    EXPECT_EQ(m.outstanding(), 0u);
    EXPECT_EQ(m.counters().unmatched, 4u);
    EXPECT_EQ(m.counters().macChanged, 1u);
}

TEST(PeerBudget, EvictsTheLeastRecentlySeenWhenFull) {
    PeerBudget b(2);
    EXPECT_TRUE(b.touch(ip("10.0.0.1"), kT0).added);
    b.touch(ip("10.0.0.2"), kT0 + 1s);
    b.touch(ip("10.0.0.1"), kT0 + 2s);  // seen again: now the newest
    auto t = b.touch(ip("10.0.0.3"), kT0 + 3s);
    EXPECT_TRUE(t.added);
    EXPECT_EQ(t.evicted, ip("10.0.0.2"));
    EXPECT_EQ(b.size(), 2u);
    EXPECT_EQ(b.evictions(), 1u);
    EXPECT_EQ(b.seenBefore(kT0 + 3s), std::vector<IpAddr>{ip("10.0.0.1")});
    EXPECT_EQ(b.setCapacity(1), std::vector<IpAddr>{ip("10.0.0.1")});
    EXPECT_TRUE(b.contains(ip("10.0.0.3")));
    EXPECT_TRUE(b.remove(ip("10.0.0.3")));
    EXPECT_EQ(b.size(), 0u);
}

TEST(PeerBudget, AFloodStaysWithinTheCap) {
    PeerBudget b(64);
    for (uint32_t i = 0; i < 10000; ++i) {
        uint8_t a[4] = {10, 200, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
        b.touch(IpAddr::v4(a), kT0 + std::chrono::milliseconds(i));
    }
    EXPECT_EQ(b.size(), 64u);
    EXPECT_EQ(b.evictions(), 10000u - 64u);
}

TEST(PlanesteerConfig, PeerBudgetsHaveDefaultsAndNameTheirField) {
    auto parse = [](const std::string& global) {
        return parseConfig(
            nlohmann::json::parse(R"({"PLANESTEER": {"global": )" + global +
                                  R"(}, "PLANESTEER_BOND": {"b": {"ports": "a,b"}}})"));
    };
    auto d = parse("{}");
    ASSERT_TRUE(std::holds_alternative<Config>(d));
    EXPECT_EQ(std::get<Config>(d).maxOnlinkPeers, 1024u);
    EXPECT_EQ(std::get<Config>(d).maxRemotePeers, 3072u);
    auto set = parse(R"({"max_onlink_peers": "10", "max_remote_peers": 20})");
    ASSERT_TRUE(std::holds_alternative<Config>(set));
    EXPECT_EQ(std::get<Config>(set).maxOnlinkPeers, 10u);
    EXPECT_EQ(std::get<Config>(set).maxRemotePeers, 20u);
    auto legacy = parse(R"({"max_peers": "500", "max_remote_peers": "7"})");
    ASSERT_TRUE(std::holds_alternative<Config>(legacy));
    EXPECT_EQ(std::get<Config>(legacy).maxOnlinkPeers, 500u);
    EXPECT_EQ(std::get<Config>(legacy).maxRemotePeers, 7u);
    for (const char* bad : {R"({"max_onlink_peers": "0"})", R"({"max_remote_peers": "x"})"}) {
        auto r = parse(bad);
        ASSERT_TRUE(std::holds_alternative<service::ConfigError>(r)) << bad;
        auto text = std::get<service::ConfigError>(r).str();
        EXPECT_NE(text.find("PLANESTEER|global field max_"), std::string::npos) << text;
    }
}

TEST(PinTable, CoalescesPerPeerAndTheQueueStaysWithinThePeers) {
    PinTable t;
    std::vector<IpAddr> peers;
    for (int i = 0; i < 50; ++i) peers.push_back(ip("10.128.0." + std::to_string(i + 1)));
    // The policy flaps every peer many times before tc gets to run anything.
    for (int round = 0; round < 100; ++round)
        for (const auto& p : peers) t.want(p, round % 2 == 0 ? std::optional<size_t>(1) : 0);
    EXPECT_LE(t.queued(), peers.size());
    int commands = 0;
    while (auto c = t.next()) {
        ++commands;
        EXPECT_EQ(c->op, PinCommand::Op::Set);
        EXPECT_EQ(c->port, 0u) << "only the latest wish runs";
        t.done(true);
    }
    EXPECT_EQ(commands, 50);
    EXPECT_EQ(t.size(), 50u);
    // Wanting what is installed runs nothing; a wish undone before it ran is dropped.
    t.want(peers[0], 0);
    t.want(peers[1], 1);
    t.want(peers[1], 0);
    EXPECT_FALSE(t.next());
    EXPECT_GE(t.counters().coalesced, 1u);
}

TEST(PinTable, ReplacesInPlaceAndFreesHandles) {
    PinTable t;
    auto a = ip("10.128.0.7"), b = ip("10.128.1.7");  // the same bucket (last byte 7)
    t.want(a, 1);
    auto ca = t.next();
    ASSERT_TRUE(ca);
    EXPECT_FALSE(t.next()) << "one command in flight at a time";
    t.want(a, 0);  // changes while tc runs: queued behind it
    t.done(true);
    t.want(b, 1);
    auto re = t.next();
    ASSERT_TRUE(re);
    EXPECT_EQ(re->peer, a);
    EXPECT_EQ(re->handle, ca->handle) << "re-pointed in place";
    EXPECT_EQ(re->port, 0u);
    t.done(true);
    auto cb = t.next();
    ASSERT_TRUE(cb);
    EXPECT_EQ(cb->handle.bucket, 7);
    EXPECT_NE(cb->handle.item, ca->handle.item);
    t.done(false);  // tc refused: not installed, handle free again
    EXPECT_FALSE(t.pinnedPort(b));
    t.want(a, std::nullopt);
    auto rm = t.next();
    ASSERT_TRUE(rm);
    EXPECT_EQ(rm->op, PinCommand::Op::Remove);
    t.done(true);
    EXPECT_EQ(t.size(), 0u);
    EXPECT_EQ(t.counters().failed, 1u);
}

TEST(PinTable, ReinstallsEverythingWhenTheTableIsGone) {
    PinTable t;
    t.want(ip("10.128.0.1"), 0);
    t.want(ip("10.128.0.2"), 1);
    while (t.next()) t.done(true);
    t.reinstallAll();
    EXPECT_EQ(t.size(), 0u);
    int again = 0;
    while (t.next()) {
        ++again;
        t.done(true);
    }
    EXPECT_EQ(again, 2);
    EXPECT_EQ(t.pinnedPort(ip("10.128.0.2")), std::optional<size_t>(1));
}

TEST(PinTable, TcCommandsUseOneHashTable) {
    PinCommand set{PinCommand::Op::Set, ip("10.128.0.200"), {200, 3}, 1};
    auto argv = tcArgv("tc", "bond1", {"p1", "p2"}, set);
    std::string line;
    for (const auto& a : argv) line += a + " ";
    EXPECT_EQ(line,
              "tc filter replace dev bond1 egress pref 100 protocol ip handle 1:c8:3 u32 ht "
              "1:c8: match ip dst 10.128.0.200/32 action mirred egress redirect dev p2 ");
    PinCommand rm{PinCommand::Op::Remove, ip("10.128.0.200"), {200, 3}, 0};
    EXPECT_EQ(tcArgv("tc", "bond1", {"p1", "p2"}, rm).back(), "u32");
    auto setup = tcTableSetup("tc", "bond1");
    ASSERT_EQ(setup.size(), 3u);
    EXPECT_NE(std::find(setup[2].begin(), setup[2].end(), "hashkey"), setup[2].end());
    EXPECT_TRUE(
        tcListsPinTable(R"([{"pref":100,"options":{"fh":"1:","ht_divisor":256}},{"pref":30000}])"));
    EXPECT_FALSE(tcListsPinTable(R"([{"pref":30000,"options":{"fh":"1:"}}])"));
    EXPECT_FALSE(tcListsPinTable(R"([{"pref":"100","options":{"fh":1}}, 7])"));
    EXPECT_FALSE(tcListsPinTable("not json"));
}

}  // namespace
}  // namespace twinrail::planesteer
