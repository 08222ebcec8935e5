// planesteer's decision and config, with time injected.
#include <gtest/gtest.h>

#include "config.h"
#include "echo_frame.h"
#include "echo_prober.h"
#include "steer_policy.h"

namespace twinrail::planesteer {
namespace {

using namespace std::chrono_literals;
const IpAddr kPeer = *IpAddr::parse("10.128.0.2");

TEST(SteerPolicy, PinsAPeerToThePlaneThatStillAnswersAndLetsItGo) {
    SteerPolicy p(2, {200ms, 3});
    auto t = Clock::time_point{} + 100s;
    p.addPeer(kPeer, t);
    EXPECT_FALSE(p.pinFor(kPeer, t));
    // Both planes answer: the bond's own hash.
    for (int i = 1; i <= 5; ++i) {
        p.answered(kPeer, 0, t + i * 200ms);
        p.answered(kPeer, 1, t + i * 200ms);
    }
    t += 1s;
    EXPECT_FALSE(p.pinFor(kPeer, t));
    // Plane 1 goes silent for this peer: pinned to port 2 once 3 intervals have passed.
    for (int i = 1; i <= 3; ++i) p.answered(kPeer, 1, t + i * 200ms);
    EXPECT_FALSE(p.pinFor(kPeer, t + 500ms)) << "too early: one lost answer is not a plane";
    EXPECT_EQ(p.pinFor(kPeer, t + 601ms), std::optional<size_t>(1));
    // It answers again on port 1: back on the hash.
    p.answered(kPeer, 0, t + 700ms);
    p.answered(kPeer, 1, t + 700ms);
    EXPECT_FALSE(p.pinFor(kPeer, t + 750ms));
}

TEST(SteerPolicy, NoPinWhenNoPlaneAnswersOrOnlyOnePortIsUp) {
    SteerPolicy p(2, {200ms, 3});
    auto t = Clock::time_point{} + 100s;
    p.addPeer(kPeer, t);
    EXPECT_FALSE(p.pinFor(kPeer, t + 5s)) << "a peer nobody answers for: nothing to gain";
    p.answered(kPeer, 1, t + 5s);
    p.setPortUp(1, false, t + 5s);  // the other port has no carrier: the bond handles it
    EXPECT_FALSE(p.pinFor(kPeer, t + 5s + 100ms));
    p.setPortUp(1, true, t + 6s);
    p.answered(kPeer, 1, t + 6s);
    EXPECT_EQ(p.pinFor(kPeer, t + 6s + 100ms), std::optional<size_t>(1));
    p.removePeer(kPeer);
    EXPECT_FALSE(p.pinFor(kPeer, t + 7s));
    EXPECT_TRUE(p.peers().empty());
}

TEST(PlanesteerConfig, ReadsBondsAndNamesBadFields) {
    auto ok = parseConfig(nlohmann::json::parse(
        R"({"PLANESTEER": {"global": {"interval_ms": "100", "misses": "2"}},
            "PLANESTEER_BOND": {"bond1": {"ports": "nic1p1,nic1p2"}}})"));
    ASSERT_TRUE(std::holds_alternative<Config>(ok));
    EXPECT_EQ(std::get<Config>(ok).steer.interval, 100ms);
    EXPECT_EQ(std::get<Config>(ok).bonds.at("bond1").ports,
              (std::vector<std::string>{"nic1p1", "nic1p2"}));
    EXPECT_FALSE(std::get<Config>(ok).bonds.at("bond1").gateway);
    auto bad =
        parseConfig(nlohmann::json::parse(R"({"PLANESTEER_BOND": {"bond1": {"ports": "p1"}}})"));
    ASSERT_TRUE(std::holds_alternative<service::ConfigError>(bad));
    EXPECT_EQ(
        std::get<service::ConfigError>(bad).str().rfind("PLANESTEER_BOND|bond1 field ports", 0),
        0u);
    EXPECT_TRUE(
        std::holds_alternative<service::ConfigError>(parseConfig(nlohmann::json::parse("{}"))));
    EXPECT_TRUE(std::holds_alternative<service::ConfigError>(parseConfig(nlohmann::json::parse(
        R"({"PLANESTEER": {"global": {"misses": "0"}}, "PLANESTEER_BOND": {"b": {"ports": "a,b"}}})"))));
}

TEST(PlanesteerConfig, ActivePeersHaveDefaultsAndAreNeverProbedSlowerThanIdleOnes) {
    const std::string bond = R"("PLANESTEER_BOND": {"b": {"ports": "p1,p2"}})";
    auto def = parseConfig(nlohmann::json::parse("{" + bond + "}"));
    ASSERT_TRUE(std::holds_alternative<Config>(def));
    EXPECT_EQ(std::get<Config>(def).steer.activeInterval, 20ms);
    EXPECT_EQ(std::get<Config>(def).activeWindow, 1000ms);
    EXPECT_EQ(std::get<Config>(def).maxActivePeers, 64u);
    auto set = parseConfig(nlohmann::json::parse(
        R"({"PLANESTEER": {"global": {"active_interval_ms": "10", "active_window_ms": 500,
            "max_active_peers": "0"}}, )" +
        bond + "}"));
    ASSERT_TRUE(std::holds_alternative<Config>(set));
    EXPECT_EQ(std::get<Config>(set).steer.activeInterval, 10ms);
    EXPECT_EQ(std::get<Config>(set).activeWindow, 500ms);
    EXPECT_EQ(std::get<Config>(set).maxActivePeers, 0u);
    auto slower = parseConfig(nlohmann::json::parse(
        R"({"PLANESTEER": {"global": {"interval_ms": "50", "active_interval_ms": "60"}}, )" + bond +
        "}"));
    ASSERT_TRUE(std::holds_alternative<service::ConfigError>(slower));
    EXPECT_EQ(std::get<service::ConfigError>(slower).str().rfind(
                  "PLANESTEER|global field active_interval_ms", 0),
              0u)
        << std::get<service::ConfigError>(slower).str();
    EXPECT_TRUE(std::holds_alternative<service::ConfigError>(parseConfig(nlohmann::json::parse(
        R"({"PLANESTEER": {"global": {"active_interval_ms": "4"}}, )" + bond + "}"))));
}

TEST(PlanesteerConfig, GatewayAndFabricSteerOtherRailsAndGoTogether) {
    auto ok = parseConfig(nlohmann::json::parse(
        R"({"PLANESTEER": {"global": {"remote_idle_s": "10", "sample_one_in": "16"}},
            "PLANESTEER_BOND": {"bond1": {"ports": "a,b", "gateway": "10.128.0.1",
                                          "fabric": "10.128.0.0/21"}}})"));
    ASSERT_TRUE(std::holds_alternative<Config>(ok)) << std::get<service::ConfigError>(ok).str();
    const auto& c = std::get<Config>(ok);
    EXPECT_EQ(c.remoteIdle, 10s);
    EXPECT_EQ(c.sampleOneIn, 16u);
    EXPECT_EQ(c.bonds.at("bond1").gateway, IpAddr::parse("10.128.0.1"));
    EXPECT_TRUE(c.bonds.at("bond1").fabric->contains(*IpAddr::parse("10.128.7.9")));
    auto error = [](const char* text) {
        auto r = parseConfig(nlohmann::json::parse(text));
        return std::holds_alternative<service::ConfigError>(r)
                   ? std::get<service::ConfigError>(r).str()
                   : std::string("accepted");
    };
    EXPECT_EQ(error(R"({"PLANESTEER_BOND": {"b": {"ports": "a,b", "gateway": "10.0.0.1"}}})")
                  .rfind("PLANESTEER_BOND|b", 0),
              0u);
    EXPECT_NE(error(R"({"PLANESTEER_BOND": {"b": {"ports": "a,b", "gateway": "fe80::1",
                                                  "fabric": "10.0.0.0/8"}}})")
                  .find("field gateway"),
              std::string::npos);
    EXPECT_NE(error(R"({"PLANESTEER_BOND": {"b": {"ports": "a,b", "gateway": "10.0.0.1",
                                                  "fabric": "10.0.0.0/99"}}})")
                  .find("field fabric"),
              std::string::npos);
    EXPECT_NE(
        error(R"({"PLANESTEER_BOND": {"b": {"ports": "a,b", "gw": "10.0.0.1"}}})").find("field gw"),
        std::string::npos);
    EXPECT_NE(error(R"({"PLANESTEER": {"global": {"sample_one_in": "48"}},
                        "PLANESTEER_BOND": {"b": {"ports": "a,b"}}})")
                  .find("not a power of two"),
              std::string::npos);
}

// A port whose carrier comes back (a leaf restarting) carries nothing until its plane
// answers: its leaf may have no routes yet, while the bond would use it at once.
TEST(SteerPolicy, PortThatComesBackIsSilentUntilItsPlaneAnswers) {
    SteerPolicy p(2, {200ms, 3});
    auto t = Clock::time_point{} + 100s;
    p.addPeer(kPeer, t);
    p.setPortUp(0, false, t);
    p.answered(kPeer, 1, t + 1s);
    EXPECT_FALSE(p.pinFor(kPeer, t + 1s)) << "one port up: the bond handles it";
    p.setPortUp(0, true, t + 2s);
    p.answered(kPeer, 1, t + 2s + 100ms);
    EXPECT_EQ(p.pinFor(kPeer, t + 2s + 100ms), std::optional<size_t>(1)) << "at once, not later";
    p.answered(kPeer, 0, t + 2s + 200ms);
    EXPECT_FALSE(p.pinFor(kPeer, t + 2s + 250ms));
}

TEST(SteerPolicy, RemotePeersAreTheFabricOutsideTheOwnSubnet) {
    auto subnet = *IpPrefix::parse("10.128.1.2/24"), fabric = *IpPrefix::parse("10.128.0.0/21");
    auto gw = *IpAddr::parse("10.128.1.1");
    EXPECT_TRUE(remotePeer(*IpAddr::parse("10.128.0.2"), subnet, fabric, gw));
    EXPECT_FALSE(remotePeer(*IpAddr::parse("10.128.1.3"), subnet, fabric, gw));  // on-link
    EXPECT_FALSE(remotePeer(gw, subnet, fabric, gw));
    EXPECT_FALSE(remotePeer(*IpAddr::parse("10.254.0.1"), subnet, fabric, gw));  // a loopback
    EXPECT_FALSE(remotePeer(*IpAddr::parse("10.128.8.1"), subnet, fabric, gw));
}

TEST(EchoFrame, RequestIsAValidPacketAndItsReplyParsesBack) {
    auto src = *IpAddr::parse("10.128.1.2"), dst = *IpAddr::parse("10.128.0.2");
    auto req = buildEchoRequest(src, dst, kEchoId, echoSeq(1, 7));
    ASSERT_EQ(req.size(), 20u + 8u + kEchoPayloadLen);
    EXPECT_EQ(internetChecksum(req.data(), 20), 0);  // header checksum right
    EXPECT_EQ(internetChecksum(req.data() + 20, req.size() - 20), 0);
    // The peer's answer: addresses swapped, type 0, ICMP checksum fixed up (RFC 1624).
    auto rep = req;
    std::copy(req.begin() + 12, req.begin() + 16, rep.begin() + 16);
    std::copy(req.begin() + 16, req.begin() + 20, rep.begin() + 12);
    rep[20] = 0;
    rep[22] = rep[23] = 0;
    uint16_t sum = internetChecksum(rep.data() + 20, rep.size() - 20);
    rep[22] = static_cast<uint8_t>(sum >> 8);
    rep[23] = static_cast<uint8_t>(sum);
    auto r = parseEchoReply(rep.data(), rep.size());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->from, dst);
    EXPECT_EQ(r->to, src);
    EXPECT_EQ(r->id, kEchoId);
    EXPECT_EQ(echoSeqPort(r->seq), 1u);
    EXPECT_EQ(r->seq & 0x7fff, 7);
    // Not a reply: the request itself, a bad checksum, a truncated or fragmented packet.
    EXPECT_FALSE(parseEchoReply(req.data(), req.size()));
    auto bad = rep;
    bad[30] ^= 1;
    EXPECT_FALSE(parseEchoReply(bad.data(), bad.size()));
    EXPECT_FALSE(parseEchoReply(rep.data(), 30));
    auto frag = rep;
    frag[6] = 0x20;  // more fragments
    EXPECT_FALSE(parseEchoReply(frag.data(), frag.size()));
    EXPECT_EQ(ipv4Destination(req.data(), req.size()), dst);
    EXPECT_FALSE(ipv4Destination(req.data(), 19));
}

TEST(EchoFilter, EveryJumpLandsInsideAndFailuresDrop) {
    for (uint32_t n : {1u, 64u}) {
        auto f = echoAndSampleFilter(n);
        ASSERT_EQ(f.size(), 19u);
        EXPECT_EQ(f.back().code, BPF_RET | BPF_K);
        EXPECT_EQ(f.back().k, 0u);  // the drop
        for (size_t i = 0; i < f.size(); ++i) {
            if (BPF_CLASS(f[i].code) != BPF_JMP) continue;
            EXPECT_LT(i + 1 + f[i].jt, f.size()) << i;
            EXPECT_LT(i + 1 + f[i].jf, f.size()) << i;
        }
        EXPECT_EQ(f[15].k, n - 1);  // the sampling mask
    }
}

}  // namespace
}  // namespace twinrail::planesteer
