#include "config.h"

#include <gtest/gtest.h>

using namespace twinrail::hostrouted;
using nlohmann::json;

namespace {
ConfigError errorOf(const json& doc) {
    auto r = parseConfig(doc);
    EXPECT_TRUE(std::holds_alternative<ConfigError>(r)) << doc.dump();
    return std::holds_alternative<ConfigError>(r) ? std::get<ConfigError>(r) : ConfigError{};
}
}  // namespace

TEST(Config, DefaultsWhenEmpty) {
    auto cfg = std::get<Config>(parseConfig(json::object()));
    EXPECT_EQ(cfg.routeTable, 10u);
    EXPECT_EQ(cfg.keepalive.count(), 3000);
    EXPECT_EQ(cfg.holdtime.count(), 9000);
    EXPECT_TRUE(cfg.interfaces.empty());
}

TEST(Config, ParsesStringsAsCONFIG_DBStoresThem) {
    json doc = {{"HOSTROUTED",
                 {{"global",
                   {{"route_table", "20"}, {"keepalive", "0.5"}, {"holdtime", "2"},
                    {"manage_frr", "true"}, {"accept_evpn", "false"}, {"max_routes", "50"}}}}},
                {"HOSTROUTED_INTERFACE",
                 {{"swp3", {{"NULL", "NULL"}}}, {"Ethernet*", json::object()},
                  {"swp9", {{"enabled", "false"}}}}}};
    auto cfg = std::get<Config>(parseConfig(doc));
    EXPECT_EQ(cfg.routeTable, 20u);
    EXPECT_EQ(cfg.keepalive.count(), 500);
    EXPECT_EQ(cfg.holdtime.count(), 2000);
    EXPECT_TRUE(cfg.manageFrr);
    EXPECT_FALSE(cfg.acceptEvpn);
    EXPECT_EQ(cfg.maxRoutes, 50u);
    EXPECT_TRUE(cfg.managesInterface("swp3"));
    EXPECT_TRUE(cfg.managesInterface("Ethernet48"));
    EXPECT_FALSE(cfg.managesInterface("swp9"));
    EXPECT_FALSE(cfg.managesInterface("swp1"));
}

TEST(Config, ParsesNativeJsonTypesFromAFile) {
    json doc = {{"HOSTROUTED", {{"global", {{"route_table", 11}, {"proxy_arp", true}}}}}};
    auto cfg = std::get<Config>(parseConfig(doc));
    EXPECT_EQ(cfg.routeTable, 11u);
    EXPECT_TRUE(cfg.proxyArp);
}

TEST(Config, ErrorsNameTheKeyAndField) {
    auto e = errorOf({{"HOSTROUTED", {{"global", {{"holdtime", "abc"}}}}}});
    EXPECT_EQ(e.where, "HOSTROUTED|global field holdtime");
    EXPECT_NE(e.what.find("abc"), std::string::npos);
    e = errorOf({{"HOSTROUTED", {{"global", {{"route_table", "255"}}}}}});
    EXPECT_EQ(e.where, "HOSTROUTED|global field route_table");
    e = errorOf({{"HOSTROUTED", {{"global", {{"holdtme", "9"}}}}}});
    EXPECT_EQ(e.where, "HOSTROUTED|global field holdtme");
    e = errorOf({{"HOSTROUTED", {{"global", {{"keepalive", "5"}, {"holdtime", "6"}}}}}});
    EXPECT_EQ(e.where, "HOSTROUTED|global field holdtime");
    e = errorOf({{"HOSTROUTED", {{"global", {{"manage_frr", "yes please"}}}}}});
    EXPECT_EQ(e.where, "HOSTROUTED|global field manage_frr");
    e = errorOf({{"HOSTROUTED", {{"other", json::object()}}}});
    EXPECT_EQ(e.where, "HOSTROUTED|other");
    e = errorOf({{"HOSTROUTED_INTERFACE", {{"bad name", json::object()}}}});
    EXPECT_EQ(e.where, "HOSTROUTED_INTERFACE|bad name");
    e = errorOf({{"HOSTROUTED_INTERFACE", {{"swp3", {{"enabled", "maybe"}}}}}});
    EXPECT_EQ(e.where, "HOSTROUTED_INTERFACE|swp3 field enabled");
    e = errorOf(json::array());
    EXPECT_EQ(e.where, "config");
}

TEST(Config, TableCannotChangeAtRuntime) {
    Config a, b;
    b.routeTable = 11;
    EXPECT_TRUE(std::holds_alternative<ConfigError>(checkRuntimeChange(a, b)));
    b = a;
    b.holdtime = std::chrono::milliseconds(20000);
    EXPECT_TRUE(std::holds_alternative<std::monostate>(checkRuntimeChange(a, b)));
}
