// planesteer's decision and config, with time injected.
#include <gtest/gtest.h>

#include "config.h"
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
    EXPECT_EQ(std::get<Config>(ok).bonds.at("bond1"),
              (std::vector<std::string>{"nic1p1", "nic1p2"}));
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

}  // namespace
}  // namespace twinrail::planesteer
