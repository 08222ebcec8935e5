// `twinrail show` views: filters, JSON, stats columns, and when a daemon's state is stale.
#include <gtest/gtest.h>

#include <algorithm>

#include "show_views.h"

using namespace twinrail::cli;
using namespace std::chrono_literals;

namespace {
std::vector<Row> hosts() {
    return {{"10.1.1.10", {{"ifname", "swp3"}, {"family", "ipv4"}, {"state", "installed"}}},
            {"10.1.2.10", {{"ifname", "swp4"}, {"family", "ipv4"}, {"state", "pending"}}},
            {"2001:db8::10", {{"ifname", "swp3"}, {"family", "ipv6"}, {"state", "installed"}}}};
}

std::chrono::system_clock::time_point at(const char* iso) {
    std::tm tm{};
    strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm);
    return std::chrono::system_clock::from_time_t(timegm(&tm));
}
}  // namespace

TEST(CliViews, HostRoutesFilterByInterfaceAndFamily) {
    auto all = hostRoutesView(hosts(), {});
    EXPECT_EQ(all.rows.size(), 3u);
    auto swp3 = hostRoutesView(hosts(), {"swp3", 0});
    ASSERT_EQ(swp3.rows.size(), 2u);
    auto v6 = hostRoutesView(hosts(), {"swp3", 6});
    ASSERT_EQ(v6.rows.size(), 1u);
    EXPECT_EQ(v6.rows[0][0], "2001:db8::10");
    EXPECT_EQ(v6.json[0]["host"], "2001:db8::10");
    EXPECT_EQ(v6.json[0]["state"], "installed");
    EXPECT_EQ(hostRoutesView(hosts(), {"", 4}).rows.size(), 2u);
    EXPECT_EQ(all.rows[0][3], "-") << "a missing field shows as -";
}

TEST(CliViews, TableColumnsAreAligned) {
    std::string t = renderTable(hostRoutesView(hosts(), {}));
    auto header = t.substr(0, t.find('\n'));
    auto second = t.substr(t.find('\n') + 1);
    EXPECT_EQ(header.find("INTERFACE"), second.find("swp3"));
}

TEST(CliViews, PathQualityExplainsItsCongestion) {
    std::vector<Row> rows = {{"Ethernet0",
                              {{"role", "downlink"},
                               {"capacity_bps", "400000000000"},
                               {"congestion", "0.500"},
                               {"congestion_cause", "ecn"},
                               {"ecn_ratio", "0.0500"},
                               {"ecn_source", "queue_counters"},
                               {"pause_rx_pps", "12.0"},
                               {"pfc_storm", "false"},
                               {"level", "28"},
                               {"levels", "32"}}},
                             {"Ethernet8",
                              {{"role", "uplink"},
                               {"congestion", "1.000"},
                               {"congestion_cause", "pfc_storm"},
                               {"ecn_source", "none"},
                               {"ecn_ratio", "0.0000"},
                               {"pause_rx_pps", "0.0"},
                               {"pfc_storm", "true"}}},
                             {"swp1", {{"congestion", "0.000"}, {"congestion_cause", "none"}}}};
    auto v = pathQualityView(rows);
    auto col = [&v](const std::string& name) {
        return std::find(v.columns.begin(), v.columns.end(), name) - v.columns.begin();
    };
    ASSERT_EQ(v.rows.size(), 3u);
    EXPECT_EQ(v.rows[0][col("CONGESTION")], "0.500 ecn");
    EXPECT_EQ(v.rows[0][col("ECN")], "0.0500");
    EXPECT_EQ(v.rows[0][col("PAUSE RX/s")], "12.0");
    EXPECT_EQ(v.rows[1][col("CONGESTION")], "1.000 pfc_storm");
    EXPECT_EQ(v.rows[1][col("ECN")], "-") << "no mark counter: not a measured 0";
    EXPECT_EQ(v.rows[1][col("PAUSE RX/s")], "0.0 STORM");
    EXPECT_EQ(v.rows[2][col("CONGESTION")], "0.000");
    EXPECT_EQ(v.json[0]["congestion_cause"], "ecn");
}

TEST(CliViews, StatsPutEachDaemonInAColumn) {
    auto v = statsView({{"hostrouted", {{"routes", "5"}, {"updated", "x"}}},
                        {"pathqd", {{"samples", "10"}, {"updated", "y"}}}});
    EXPECT_EQ(v.columns, (std::vector<std::string>{"COUNTER", "hostrouted", "pathqd"}));
    ASSERT_EQ(v.rows.size(), 3u);  // routes, samples, updated
    EXPECT_EQ(v.rows[0], (std::vector<std::string>{"routes", "5", ""}));
    EXPECT_EQ(v.rows[2], (std::vector<std::string>{"updated", "x", "y"}));
    EXPECT_EQ(v.json["pathqd"]["samples"], "10");
}

TEST(CliViews, StaleStateIsNamed) {
    auto now = at("2026-11-29T20:00:30");
    auto none = staleness("hostrouted", std::nullopt, now);
    ASSERT_TRUE(none);
    EXPECT_NE(none->find("not running"), std::string::npos);
    auto old = staleness("pathqd", Fields{{"updated", "2026-11-29T20:00:00.123Z"}}, now);
    ASSERT_TRUE(old);
    EXPECT_NE(old->find("30 s old"), std::string::npos) << *old;
    EXPECT_FALSE(staleness("pathqd", Fields{{"updated", "2026-11-29T20:00:25Z"}}, now));
    auto bad = staleness("pathqd", Fields{{"updated", "yesterday"}}, now);
    ASSERT_TRUE(bad);
    EXPECT_NE(bad->find("no valid"), std::string::npos);
}

TEST(CliViews, ConfigListsKeysWithoutFields) {
    auto v = configView({{"HOSTROUTED_INTERFACE|swp3", {}}, {"PATHQD|global", {{"levels", "32"}}}});
    ASSERT_EQ(v.rows.size(), 2u);
    EXPECT_EQ(v.rows[0], (std::vector<std::string>{"HOSTROUTED_INTERFACE|swp3", "", ""}));
    EXPECT_EQ(v.json["PATHQD|global"]["levels"], "32");
}
