// The plan's host bindings and the refused-claims table (issue 18).
#include <gtest/gtest.h>

#include "binding_config.h"
#include "config.h"
#include "refused_claims.h"

using namespace twinrail;
using namespace twinrail::hostrouted;
using nlohmann::json;

namespace {
IpAddr ip(const std::string& s) {
    return *IpAddr::parse(s);
}
std::string errorOf(const json& db) {
    auto parsed = parseConfig(db);
    const auto* err = std::get_if<ConfigError>(&parsed);
    return err == nullptr ? "" : err->str();
}
}  // namespace

TEST(Binding, ParsedFromTheConfigAndChecked) {
    json db = {{"HOSTROUTED_BINDING",
                {{"10.0.0.2", {{"ifname", "swp1"}}},
                 {"10.0.0.3", {{"ifname", "br-rail1"}, {"port", "hbond2"}}}}}};
    auto cfg = std::get<Config>(parseConfig(db));
    ASSERT_EQ(cfg.bindings.size(), 2u);
    EXPECT_EQ(cfg.bindings.at(ip("10.0.0.3")).port, "hbond2");
    BindingIndex idx;
    idx.reset(cfg.bindings);
    EXPECT_EQ(idx.check(ip("10.0.0.2"), "swp1"), BindingVerdict::Bound);
    EXPECT_EQ(idx.check(ip("10.0.0.2"), "swp2"), BindingVerdict::BoundElsewhere);
    EXPECT_EQ(idx.check(ip("10.0.0.9"), "swp1"), BindingVerdict::NotBoundHere);
    EXPECT_EQ(idx.check(ip("10.0.0.9"), "swp7"), BindingVerdict::Unbound);
    EXPECT_EQ(idx.boundTo("swp1"), std::vector<IpAddr>{ip("10.0.0.2")});
}

TEST(Binding, HostileRowsAreRefusedNamingTheField) {
    EXPECT_NE(errorOf({{"HOSTROUTED_BINDING", {{"10.0.0.0/24", {{"ifname", "swp1"}}}}}})
                  .find("HOSTROUTED_BINDING|10.0.0.0/24: is not an IPv4 or IPv6 address"),
              std::string::npos);
    EXPECT_NE(errorOf({{"HOSTROUTED_BINDING", {{"fe80::1", {{"ifname", "swp1"}}}}}})
                  .find("not a host's unicast address"),
              std::string::npos);
    EXPECT_NE(errorOf({{"HOSTROUTED_BINDING", {{"10.0.0.2", {{"ifname", "swp1\nexit"}}}}}})
                  .find("HOSTROUTED_BINDING|10.0.0.2 field ifname"),
              std::string::npos);
    EXPECT_NE(errorOf({{"HOSTROUTED_BINDING", {{"10.0.0.2", {{"ifname", "../etc"}}}}}})
                  .find("field ifname"),
              std::string::npos);
    EXPECT_NE(
        errorOf({{"HOSTROUTED_BINDING", {{"10.0.0.2", {{"ifname", "br-rail1"}, {"port", "a/b"}}}}}})
            .find("field port"),
        std::string::npos);
    EXPECT_NE(errorOf({{"HOSTROUTED_BINDING", {{"10.0.0.2", json::object()}}}})
                  .find("field ifname: missing"),
              std::string::npos);
    EXPECT_NE(errorOf({{"HOSTROUTED_BINDING", {{"10.0.0.2", {{"mac", "x"}}}}}}).find("mac"),
              std::string::npos);
}

TEST(Binding, MoveSettingsAndUnfreezeRequests) {
    json db = {{"HOSTROUTED", {{"global", {{"move_limit", "3"}, {"move_window", "60"}}}}},
               {"HOSTROUTED_UNFREEZE", {{"10.0.0.2", {{"requested", "1790000000"}}}}}};
    auto cfg = std::get<Config>(parseConfig(db));
    EXPECT_EQ(cfg.moveLimit, 3u);
    EXPECT_EQ(cfg.moveWindow, std::chrono::seconds(60));
    EXPECT_EQ(cfg.unfreeze.at(ip("10.0.0.2")), 1790000000);
    EXPECT_NE(errorOf({{"HOSTROUTED_UNFREEZE", {{"10.0.0.2", {{"requested", "soon"}}}}}})
                  .find("HOSTROUTED_UNFREEZE|10.0.0.2 field requested"),
              std::string::npos);
    EXPECT_NE(errorOf({{"HOSTROUTED", {{"global", {{"move_window", "0"}}}}}}).find("move_window"),
              std::string::npos);
}

TEST(RefusedClaims, OneEntryPerAddressAndPortCappedAndCleared) {
    RefusedClaims claims(2);
    auto t = std::chrono::steady_clock::time_point{} + std::chrono::seconds(5);
    MacAddr m{2, 0, 0, 0, 0, 9};
    EXPECT_TRUE(claims.refused(ip("10.0.0.2"), 4, m, "bound-elsewhere", t));   // new: log it
    EXPECT_FALSE(claims.refused(ip("10.0.0.2"), 4, m, "bound-elsewhere", t));  // repeat
    EXPECT_TRUE(claims.refused(ip("10.0.0.2"), 4, m, "duplicate", t));         // changed
    EXPECT_TRUE(claims.refused(ip("10.0.0.3"), 4, m, "not-bound-here", t));
    EXPECT_FALSE(claims.refused(ip("10.0.0.4"), 4, m, "not-bound-here", t));  // over the cap
    EXPECT_EQ(claims.size(), 2u);
    EXPECT_EQ(claims.total(), 5u);
    EXPECT_EQ(claims.dropped(), 1u);
    EXPECT_EQ(claims.find({ip("10.0.0.2"), 4})->count, 3u);
    EXPECT_TRUE(claims.gone(ip("10.0.0.2"), 4));
    EXPECT_EQ(claims.portGone(4).size(), 1u);
    EXPECT_EQ(claims.size(), 0u);
}
