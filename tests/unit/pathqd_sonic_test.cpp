// pathqd on SONiC (docs/pathqd.md, "pathqd on SONiC"): the weight audit reads what the
// ASIC forwards by (APPL_DB, ASIC_DB) and compares it with BGP after the release's rule;
// SONiC's static W-ECMP knob is watched, never touched. Fixtures: tests/fixtures/pathqd-sonic
// (ours, in sonic-db-dump's shape), and SONiC's own dump next to the checkout when present.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>

#include "config.h"
#include "daemon.h"
#include "frr_policy.h"
#include "pathqd_sonic_fixture.h"
#include "sonic_weights.h"
#include "twinrail_fakes/frr.h"
#include "twinrail_fakes/kernel.h"
#include "twinrail_fakes/pathqd_edges.h"
#include "twinrail_fakes/redis.h"
#include "wcmp_watch.h"

namespace twinrail::pathqd {
namespace {

using namespace std::chrono_literals;
namespace sw = sonic_weights;

sw::Rows only(const sw::Rows& rows, const std::string& prefix) {
    sw::Rows out;
    for (const auto& [k, v] : rows)
        if (k.rfind(prefix, 0) == 0) out[k] = v;
    return out;
}

sw::SonicTables applTables(const std::string& file) {
    auto rows = loadDump(kFixtures + "/" + file);
    return {only(rows, "ROUTE_TABLE:"), only(rows, "NEXTHOP_GROUP_TABLE:"), std::nullopt};
}

sw::AsicTables asicTables(const std::vector<std::string>& files) {
    sw::AsicTables t;
    const std::string s = "ASIC_STATE:SAI_OBJECT_TYPE_";
    for (const auto& f : files) {
        auto rows = loadDump(kFixtures + "/" + f);
        t.routes.merge(only(rows, s + "ROUTE_ENTRY:"));
        t.members.merge(only(rows, s + "NEXT_HOP_GROUP_MEMBER:"));
        t.nexthops.merge(only(rows, s + "NEXT_HOP:"));
        t.rifs.merge(only(rows, s + "ROUTER_INTERFACE:"));
    }
    t.portNames = loadDump(kFixtures + "/counters_db.json")["COUNTERS_PORT_NAME_MAP"];
    return t;
}

const ForwardedRoute* find(const ForwardedRead& r, const char* prefix) {
    for (const auto& route : r.routes)
        if (route.dst == *IpPrefix::parse(prefix)) return &route;
    return nullptr;
}

std::string badRow(const std::vector<std::string>& bad, const std::string& key) {
    std::string hit;
    for (const auto& b : bad)
        if (b.rfind(key, 0) == 0) hit += b;
    return hit;
}

// BGP's two multipaths at 25:75 of the link bandwidth.
const std::vector<BgpPath> kQuarter{{"Ethernet0", 3125000}, {"Ethernet4", 9375000}};

TEST(PathqdSonicConfig, SourceAndReleaseAreParsedAndErrorsNameTheField) {
    nlohmann::json doc = {{"PATHQD", {{"global", {{"weight_audit_source", "sonic"}}}}}};
    auto cfg = std::get<Config>(parseConfig(doc));
    EXPECT_EQ(cfg.weightAuditSource, WeightAuditSource::Sonic);
    EXPECT_EQ(cfg.sonicRelease, 202505);
    auto error = [](nlohmann::json global) {
        auto r = parseConfig({{"PATHQD", {{"global", std::move(global)}}}});
        const auto* e = std::get_if<ConfigError>(&r);
        return e != nullptr ? e->str() : "";
    };
    EXPECT_EQ(error({{"sonic_release", "202311"}}), "");
    EXPECT_NE(error({{"weight_audit_source", "asic"}})
                  .find("field weight_audit_source: \"asic\" is not kernel or sonic"),
              std::string::npos);
    EXPECT_NE(error({{"sonic_release", "201805"}}).find("field sonic_release"), std::string::npos);
    EXPECT_NE(error({{"sonic_release", "202513"}}).find("is not a YYYYMM month"),
              std::string::npos);
    // Repair is a kernel route delete: refused where the ASIC forwards by APPL_DB.
    auto repair = error({{"weight_audit_source", "sonic"}, {"weight_audit_repair", "true"}});
    EXPECT_NE(repair.find("field weight_audit_repair: cannot be true with weight_audit_source "
                          "sonic"),
              std::string::npos)
        << repair;
}

TEST(PathqdSonicRules, FrrScaleAndFpmsyncdRulePerRelease) {
    // FRR 8.x: percent of the total; FRR 10 (202411 on): the largest is 255.
    EXPECT_EQ(frrScaleOf(202405), FrrScale::Percent);
    EXPECT_EQ(frrScaleOf(202411), FrrScale::Max255);
    EXPECT_EQ(frrWeights(kQuarter, FrrScale::Percent), w(25, 75));
    EXPECT_EQ(frrWeights(kQuarter, FrrScale::Max255), w(85, 255));
    EXPECT_EQ(frrWeights({{"Ethernet0", 5}, {"Ethernet4", std::nullopt}}, FrrScale::Max255),
              w(1, 1));  // a path without the community: ECMP
    EXPECT_EQ(routeTableRule(202106), WeightRule::Ecmp);
    EXPECT_EQ(routeTableRule(202111), WeightRule::ExactOrEcmp);
    EXPECT_EQ(routeTableRule(202311), WeightRule::MinusOneOrEcmp);
    EXPECT_EQ(routeTableRule(202405), WeightRule::MinusOneFloorOne);
    EXPECT_EQ(routeTableRule(202505), WeightRule::MinusOneFloorOne);
    EXPECT_EQ(expectedWeights(w(25, 75), WeightRule::MinusOneFloorOne), w(24, 74));
    EXPECT_EQ(expectedWeights(w(1, 99), WeightRule::MinusOneFloorOne), w(1, 98));
    EXPECT_EQ(expectedWeights(w(1, 99), WeightRule::MinusOneOrEcmp), w(1, 1));  // field dropped
    EXPECT_EQ(expectedWeights(w(2, 98), WeightRule::MinusOneOrEcmp), w(1, 97));
    EXPECT_EQ(expectedWeights(w(2, 98), WeightRule::ExactOrEcmp), w(2, 98));
    EXPECT_EQ(expectedWeights(w(25, 75), WeightRule::Ecmp), w(1, 1));
}

TEST(PathqdSonicRules, AgreementIsJudgedAfterTheReleasesRule) {
    // 202311, FRR 8.5: one path of weight 1 makes fpmsyncd drop the weights: the ASIC
    // forwards ECMP, and that is SONiC's rule, not a divergence.
    EXPECT_FALSE(weightsAgree(w(1, 99), w(1, 1)));
    EXPECT_TRUE(weightsAgreeAfter(w(1, 99), w(1, 1), WeightRule::MinusOneOrEcmp));
    EXPECT_FALSE(weightsAgreeAfter(w(1, 99), w(1, 1), WeightRule::MinusOneFloorOne));
    // 202405 (FRR 8.5.4) and 202505 (FRR 10.3) write BGP's 25:75 differently; both agree.
    EXPECT_TRUE(weightsAgreeAfter(frrWeights(kQuarter, frrScaleOf(202405)), w(24, 74),
                                  routeTableRule(202405)));
    EXPECT_TRUE(weightsAgreeAfter(frrWeights(kQuarter, frrScaleOf(202505)), w(84, 254),
                                  routeTableRule(202505)));
    EXPECT_FALSE(weightsAgreeAfter(frrWeights(kQuarter, frrScaleOf(202505)), w(49, 49),
                                   routeTableRule(202505)));
}

TEST(PathqdSonicRows, RouteKeysOfBothFamiliesVrfsAndHostRoutes) {
    std::string error;
    auto k = sw::parseRouteKey("ROUTE_TABLE:10.20.0.0/24", error);
    ASSERT_TRUE(k);
    EXPECT_EQ(k->vrf, "");
    EXPECT_EQ(k->prefix.str(), "10.20.0.0/24");
    k = sw::parseRouteKey("ROUTE_TABLE:fc00:20::/64", error);  // split on the first ':' only
    ASSERT_TRUE(k);
    EXPECT_EQ(k->prefix.str(), "fc00:20::/64");
    k = sw::parseRouteKey("ROUTE_TABLE:Vrf-blue:fc00:20::/64", error);
    ASSERT_TRUE(k);
    EXPECT_EQ(k->vrf, "Vrf-blue");
    EXPECT_EQ(k->prefix.str(), "fc00:20::/64");
    k = sw::parseRouteKey("ROUTE_TABLE:10.1.0.32", error);  // fpmsyncd drops a full /32
    ASSERT_TRUE(k);
    EXPECT_EQ(k->prefix.length, 32);
    EXPECT_FALSE(sw::parseRouteKey("ROUTE_TABLE:not-a-prefix", error));
    EXPECT_EQ(error, "\"not-a-prefix\" is not a prefix");
    EXPECT_FALSE(sw::parseRouteKey("NEIGH_TABLE:Ethernet0:10.0.0.1", error));
}

TEST(PathqdSonicRows, ApplDbRoutesNexthopGroupsAndUnnumberedNextHops) {
    auto read = sw::forwardedOnSonic(applTables("appl_db.json"), 202505);
    EXPECT_TRUE(read.badRows.empty()) << read.badRows.front();
    ASSERT_EQ(read.routes.size(), 4u);  // no VRF route, no single-path route
    const auto* r = find(read, "10.20.0.0/24");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->weights, w(24, 74));
    EXPECT_EQ(r->rule, WeightRule::MinusOneFloorOne);
    EXPECT_EQ(r->from, "APPL_DB");
    r = find(read, "fc00:20::/64");  // fe80::1 on both ports: told apart by ifname
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->weights, w(24, 74));
    r = find(read, "10.20.2.0/24");  // NEXTHOP_GROUP_TABLE: FRR's weights exactly
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->weights, w(25, 75));
    EXPECT_EQ(r->rule, WeightRule::Exact);
    EXPECT_EQ(find(read, "10.30.0.0/24"), nullptr);
}

TEST(PathqdSonicRows, EveryMalformedApplRowIsANamedError) {
    auto read = sw::forwardedOnSonic(applTables("appl_db_malformed.json"), 202505);
    ASSERT_EQ(read.routes.size(), 1u);
    EXPECT_EQ(read.routes[0].dst.str(), "10.40.2.0/24");
    const auto& bad = read.badRows;
    EXPECT_EQ(bad.size(), 9u);
    auto has = [&bad](const char* key, const char* what) {
        auto hit = badRow(bad, key);
        EXPECT_NE(hit.find(what), std::string::npos) << key << ": " << hit;
    };
    has("ROUTE_TABLE:10.40.0.0/24", "missing field nexthop");
    has("ROUTE_TABLE:10.40.1.0/24", "nexthop has 2 entries but ifname has 1");
    has("ROUTE_TABLE:10.40.3.0/24", "weight \"one\" is not a whole number");
    has("ROUTE_TABLE:10.40.4.0/24", "weight \"0\" is not a whole number of 1 or more");
    has("ROUTE_TABLE:10.40.5.0/24", "missing field weight");
    has("ROUTE_TABLE:10.40.6.0/24", "nexthop_group \"99\" has no NEXTHOP_GROUP_TABLE row");
    has("ROUTE_TABLE:not-a-prefix", "is not a prefix");
    has("ROUTE_TABLE:10.40.7.0/24", "nexthop \"bogus\" is not an address");
    has("ROUTE_TABLE:10.40.8.0/24", "ifname \"Eth\\x0aernet4\"");
    // Before 202405 fpmsyncd dropped the weights when one was 0: no field is ECMP, not an error.
    auto old = sw::forwardedOnSonic(applTables("appl_db_malformed.json"), 202311);
    EXPECT_EQ(badRow(old.badRows, "ROUTE_TABLE:10.40.5.0/24"), "");
    ASSERT_NE(find(old, "10.40.5.0/24"), nullptr);
    EXPECT_EQ(find(old, "10.40.5.0/24")->weights, w(1, 1));
}

TEST(PathqdSonicRows, AsicDbChainResolvesToPortNames) {
    auto asic = sw::resolveAsic(asicTables({"asic_db.json"}));
    EXPECT_TRUE(asic.errors.empty()) << asic.errors.front();
    ASSERT_EQ(asic.multipath.size(), 2u);  // the host route has one next hop, 0/0 drops
    EXPECT_EQ(asic.multipath.at(*IpPrefix::parse("10.20.0.0/24")), w(24, 74));
    EXPECT_EQ(asic.multipath.at(*IpPrefix::parse("10.20.2.0/24")), w(1, 1));  // no WEIGHT: 1
    // The same prefix in a second virtual router: which VRF is unknown, so it is left out.
    auto t = asicTables({"asic_db.json"});
    auto key =
        std::string("ASIC_STATE:SAI_OBJECT_TYPE_ROUTE_ENTRY:") +
        R"({"dest":"10.20.0.0/24","switch_id":"oid:0x21000000000000","vr":"oid:0x3000000000077"})";
    t.routes[key] = {{"SAI_ROUTE_ENTRY_ATTR_NEXT_HOP_ID", "oid:0x500000000c002"}};
    EXPECT_EQ(sw::resolveAsic(t).multipath.count(*IpPrefix::parse("10.20.0.0/24")), 0u);
}

TEST(PathqdSonicRows, EveryMalformedAsicRowIsANamedError) {
    auto asic = sw::resolveAsic(asicTables({"asic_db.json", "asic_db_malformed.json"}));
    EXPECT_EQ(asic.multipath.size(), 2u);  // the good chains still resolve
    ASSERT_EQ(asic.errors.size(), 5u);
    auto has = [&asic](const char* key, const char* what) {
        auto hit = badRow(asic.errors, std::string("ASIC_STATE:SAI_OBJECT_TYPE_") + key);
        EXPECT_NE(hit.find(what), std::string::npos) << key << ": " << hit;
    };
    has("NEXT_HOP_GROUP_MEMBER:oid:0x2d00000000e001",
        "missing field SAI_NEXT_HOP_GROUP_MEMBER_ATTR_NEXT_HOP_GROUP_ID");
    has("NEXT_HOP_GROUP_MEMBER:oid:0x2d00000000e002", "unknown next hop oid oid:0x400000000b999");
    has("NEXT_HOP_GROUP_MEMBER:oid:0x2d00000000e003", "WEIGHT \"0\" is not a whole number");
    has("ROUTE_ENTRY:{not json", "not the JSON syncd writes");
    has("ROUTE_ENTRY:{\"dest\":\"10.50.0.0/24\"", "oid:0x500000000cfff is an unknown oid");
    // A port missing from COUNTERS_PORT_NAME_MAP (syncd restarted, maps not rewritten yet).
    auto t = asicTables({"asic_db.json"});
    t.portNames.erase("Ethernet4");
    auto partial = sw::resolveAsic(t);
    EXPECT_NE(partial.errors.at(0).find("is in no COUNTERS_*_NAME_MAP"), std::string::npos);
    EXPECT_EQ(partial.multipath.count(*IpPrefix::parse("10.20.0.0/24")), 0u);
}

TEST(PathqdSonicRows, AsicWeightsAreTheOnesInForce) {
    auto tables = applTables("appl_db.json");
    tables.asic = asicTables({"asic_db.json"});
    auto read = sw::forwardedOnSonic(tables, 202505);
    const auto* r = find(read, "10.20.2.0/24");  // APPL_DB asks 25:75, the ASIC has 1:1
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->from, "ASIC_DB");
    EXPECT_EQ(r->weights, w(1, 1));
    EXPECT_FALSE(weightsAgreeAfter(frrWeights(kQuarter, FrrScale::Max255), r->weights, r->rule));
    EXPECT_EQ(find(read, "10.20.1.0/24")->from, "APPL_DB");  // not in ASIC_DB (yet)
}

TEST(PathqdSonicRows, SonicsOwnApplDbDumpParses) {
    const std::string dump =
        std::string(TWINRAIL_SONIC_SHARED) + "/sonic-gnmi/testdata/db_dump.trimmed.json";
    if (!std::filesystem::exists(dump)) GTEST_SKIP() << dump << " is not there";
    std::ifstream in(dump);
    auto doc = nlohmann::json::parse(in, nullptr, false);
    ASSERT_TRUE(doc.is_array() && !doc.empty() && doc[0].is_object());  // [APPL_DB, ASIC_DB, ...]
    sw::Rows routes;
    for (const auto& [key, fields] : doc[0].items()) {
        if (key.rfind("ROUTE_TABLE:", 0) != 0) continue;
        for (const auto& [f, v] : fields.items()) routes[key][f] = v.get<std::string>();
    }
    ASSERT_FALSE(routes.empty());
    for (const auto& [key, row] : routes) {
        std::string error;
        EXPECT_TRUE(sw::parseRouteKey(key, error)) << key << ": " << error;
        EXPECT_TRUE(sw::parseApplRoute(row, {}, 202505, error)) << key << ": " << error;
    }
}

TEST(PathqdSonicWcmp, WarnsWhenSonicsStaticWecmpIsOn) {
    EXPECT_FALSE(wcmpNotice(std::nullopt, false));  // off from the start: silent
    auto on = wcmpNotice(std::nullopt, true);
    ASSERT_TRUE(on);
    EXPECT_TRUE(on->warning);
    EXPECT_NE(on->text.find("TO_BGP_PEER_V4/V6"), std::string::npos);
    EXPECT_FALSE(wcmpNotice(true, true));
    auto off = wcmpNotice(true, false);
    ASSERT_TRUE(off);
    EXPECT_FALSE(off->warning);
    redis::Value v;
    v.type = redis::Value::Type::Array;
    v.elements = {redis::Value{redis::Value::Type::String, "wcmp_enabled", 0, {}},
                  redis::Value{redis::Value::Type::String, "true", 0, {}}};
    EXPECT_TRUE(wcmpEnabled(v));
    v.elements[1].str = "false";
    EXPECT_FALSE(wcmpEnabled(v));
    EXPECT_FALSE(wcmpEnabled(redis::Value{}));  // no row: off
}

// bgpcfgd's objects on a SONiC switch (its rendered bgpd.peer.conf / bgpd.conf).
constexpr const char* kBgpcfgd = R"(router bgp 65100
 neighbor PEER_V4 peer-group
 neighbor PEER_V6 peer-group
 neighbor 10.0.0.57 peer-group PEER_V4
 address-family ipv4 unicast
  neighbor PEER_V4 route-map FROM_BGP_PEER_V4 in
  neighbor PEER_V4 route-map TO_BGP_PEER_V4 out
 exit-address-family
 address-family ipv6 unicast
  neighbor PEER_V6 route-map FROM_BGP_PEER_V6 in
  neighbor PEER_V6 route-map TO_BGP_PEER_V6 out
 exit-address-family
exit
route-map TO_BGP_PEER_V4 permit 100
 set extcommunity bandwidth num-multipaths
exit
route-map FROM_BGP_PEER_V4 permit 100
exit
)";

TEST(PathqdSonicPolicy, PathqdNeverNamesBgpcfgdsRouteMapsOrPeerGroups) {
    PolicyInput in;
    in.asn = 65100;
    in.levels = 8;
    for (const char* port : {"Ethernet0", "Ethernet4", "PortChannel101"})
        in.downlinks[port] = DownlinkState{3, 2, MetricSnapshot{500, 12, 30, 100}, "", true};
    auto running = frr::RunningConfig::parse(kBgpcfgd);
    auto diff = diffPolicy(running, in);
    std::vector<std::string> texts;
    for (const auto& l : desiredPolicy(in)) texts.push_back(l.line.describe());
    for (const auto& l : diff.add) texts.push_back(l.describe());
    for (const auto& l : diff.remove) texts.push_back(l.describe());
    for (const auto& a : policyVtyshArgs(running, diff, in)) texts.push_back(a);
    ASSERT_GT(texts.size(), 10u);
    for (const auto& t : texts) {
        for (const char* theirs : {"TO_BGP_PEER", "FROM_BGP_PEER", "PEER_V4", "PEER_V6",
                                   "num-multipaths", "10.0.0.57"}) {
            EXPECT_EQ(t.find(theirs), std::string::npos) << theirs << " in: " << t;
        }
    }
    EXPECT_TRUE(diff.remove.empty());  // nothing of bgpcfgd's is taken away
    EXPECT_TRUE(diff.conflicts.empty());
    // A port whose session is in bgpcfgd's peer-group: a route-map on the port would
    // override FROM_BGP_PEER_V4 for it, so the port is a conflict and left alone.
    std::string text = kBgpcfgd;
    text.replace(text.find(" address-family ipv4"), 0, " neighbor Ethernet4 peer-group PEER_V4\n");
    auto grouped = diffPolicy(frr::RunningConfig::parse(text), in);
    ASSERT_EQ(grouped.conflicts.count("Ethernet4"), 1u);
    EXPECT_EQ(grouped.conflicts.at("Ethernet4").rfind("neighbor PEER_V4 route-map ", 0), 0u);
    EXPECT_EQ(grouped.conflicts.count("Ethernet0"), 0u);
    text.replace(text.find(" address-family ipv4"), 0,
                 " neighbor Ethernet0 interface peer-group PEER_V6\n");
    grouped = diffPolicy(frr::RunningConfig::parse(text), in);  // unnumbered: FRR's other form
    EXPECT_EQ(grouped.conflicts.count("Ethernet0"), 1u);
    for (const auto& l : grouped.add) EXPECT_EQ(l.describe().find("Ethernet4"), std::string::npos);
}

}  // namespace
}  // namespace twinrail::pathqd
