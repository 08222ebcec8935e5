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

const std::string kFixtures = TWINRAIL_PATHQD_SONIC_FIXTURES;

// A sonic-db-dump file (key -> {"type": "hash", "value": {...}}) or a mock table
// (key -> {...}) as rows.
sw::Rows loadDump(const std::string& path) {
    std::ifstream in(path);
    auto doc = nlohmann::json::parse(in, nullptr, false);
    sw::Rows rows;
    if (!doc.is_object()) return rows;
    for (const auto& [key, v] : doc.items()) {
        const auto& fields = v.contains("value") && v.contains("type") ? v["value"] : v;
        if (!fields.is_object()) continue;
        for (const auto& [f, val] : fields.items())
            if (val.is_string()) rows[key][f] = val.get<std::string>();
    }
    return rows;
}

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

PortWeights w(unsigned a, unsigned b) {
    return {{"Ethernet0", a}, {"Ethernet4", b}};
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

constexpr const char* kQuarterJson = R"json({"paths": [
    {"valid": true, "multipath": true, "peer": {"interface": "Ethernet0"},
     "extendedCommunity": {"string": "LB:65100:3125000 (25.000 Mbps)"}},
    {"valid": true, "multipath": true, "peer": {"interface": "Ethernet4"},
     "extendedCommunity": {"string": "LB:65100:9375000 (75.000 Mbps)"}}]})json";

bool runUntil(boost::asio::io_context& io, const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + 3s;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        if (io.stopped()) io.restart();
        io.run_for(1ms);
    }
    return true;
}

TEST(PathqdSonicAuditor, ASourceThatCannotBeReadIsUnreachableAndNeverRepaired) {
    boost::asio::io_context io;
    fakes::FakeFrr frr(io);
    frr.showAnswers["show bgp ipv4 unicast 10.20.1.0/24 json"] = kQuarterJson;
    auto owned = std::make_unique<fakes::FakeForwardingWeights>(io);
    auto& source = *owned;
    source.error = "APPL_DB: not connected";
    size_t writers = 0;
    WeightAuditor auditor(
        io, frr, std::move(owned),
        [&writers] {
            ++writers;
            return std::unique_ptr<netlink::RouteProgrammer>();
        },
        /*repair=*/true, 1ms);
    auditor.start(3600s);
    auditor.runSoon();
    ASSERT_TRUE(runUntil(io, [&] { return auditor.stats().state == "unreachable"; }));
    EXPECT_EQ(auditor.stats().readErrors, 1u);
    EXPECT_TRUE(frr.shows.empty());
    // Readable again, diverged: reported, but a source that is not the kernel is never
    // "repaired" by a kernel route delete.
    source.error.clear();
    source.result.routes = {
        {*IpPrefix::parse("10.20.1.0/24"), w(1, 1), WeightRule::Exact, "ASIC_DB"}};
    source.result.badRows = {"ROUTE_TABLE:10.40.0.0/24: missing field nexthop"};
    auditor.runSoon();
    ASSERT_TRUE(runUntil(io, [&] { return auditor.stats().state == "diverged"; }));
    EXPECT_EQ(auditor.stats().divergedPrefixes, 1u);
    EXPECT_EQ(auditor.stats().badRows, 1u);
    EXPECT_EQ(auditor.stats().repairs, 0u);
    EXPECT_EQ(writers, 0u);
}

// The daemon with weight_audit_source sonic over fake APPL_DB, ASIC_DB, COUNTERS_DB and
// CONFIG_DB: the real SonicWeightReader reads them with SCAN and HGETALL.
class PathqdSonicDaemon : public ::testing::Test {
  protected:
    PathqdSonicDaemon() {
        cfg.sampleInterval = 5ms;
        cfg.probePort = 0;
        cfg.publish = false;
        cfg.weightsInterval = 5ms;
        cfg.weightAuditInterval = 3600s;  // FRR restarts run it here
        cfg.weightAuditSource = WeightAuditSource::Sonic;
        cfg.bgpPeersInterval = 0ms;
        options.periods.stats = 5ms;
        options.periods.auditAfterRestart = 5ms;
        options.periods.wcmpPoll = 5ms;
        for (const char* p : {"10.20.0.0/24", "10.20.1.0/24", "10.20.2.0/24", "10.40.2.0/24"})
            frr.showAnswers[std::string("show bgp ipv4 unicast ") + p + " json"] = kQuarterJson;
        load(appl, "appl_db.json");
        load(counters, "counters_db.json");
    }
    static void load(fakes::FakeRedis& db, const char* file) {
        for (auto& [k, row] : loadDump(kFixtures + "/" + file))
            for (auto& [f, v] : row) db.hashes[k][f] = v;
    }
    void start() {
        Edges e;
        e.counters = std::make_unique<fakes::FakeCounterSource>(io);
        e.frr = std::move(frrOwned_);
        e.stateDb = std::move(stateOwned_);
        e.applDb = std::move(applOwned_);
        e.asicDb = std::move(asicOwned_);
        e.countersDb = std::move(countersOwned_);
        e.configDb = std::move(configOwned_);
        daemon = std::make_unique<Daemon>(io, cfg, options, std::move(e));
        daemon->start();
    }
    std::string stat(const std::string& field) {
        auto it = state.hashes.find("PATHQD_STATS|global");
        if (it == state.hashes.end() || !it->second.count(field)) return "";
        return it->second.at(field);
    }
    bool statIs(const std::string& field, const std::string& value) {
        return runUntil(io, [&] { return stat(field) == value; });
    }

    boost::asio::io_context io;
    Config cfg;
    DaemonOptions options;

  private:
    std::unique_ptr<fakes::FakeFrr> frrOwned_ = std::make_unique<fakes::FakeFrr>(io);
    std::unique_ptr<fakes::FakeRedis> stateOwned_ = std::make_unique<fakes::FakeRedis>(io),
                                      applOwned_ = std::make_unique<fakes::FakeRedis>(io),
                                      asicOwned_ = std::make_unique<fakes::FakeRedis>(io),
                                      countersOwned_ = std::make_unique<fakes::FakeRedis>(io),
                                      configOwned_ = std::make_unique<fakes::FakeRedis>(io);

  protected:
    fakes::FakeFrr& frr = *frrOwned_;
    fakes::FakeRedis &state = *stateOwned_, &appl = *applOwned_, &asic = *asicOwned_,
                     &counters = *countersOwned_, &config = *configOwned_;
    std::unique_ptr<Daemon> daemon;  // last: goes first
};

TEST_F(PathqdSonicDaemon, ADivergedApplDbRouteIsReported) {
    start();
    ASSERT_TRUE(statIs("weight_audit_source", "sonic"));
    frr.restart("zebra");
    ASSERT_TRUE(statIs("weight_audit", "diverged")) << stat("weight_audit");
    // 10.20.1.0/24 (49:49 against 25:75); 10.20.0.0/24 and fc00:20::/64 (24:74) and the
    // nexthop group (25:75) agree after 202505's rule. ASIC_DB is empty: APPL_DB alone.
    EXPECT_EQ(stat("weight_audit_diverged_groups"), "1");
    EXPECT_EQ(stat("weight_audit_diverged_routes"), "1");
    EXPECT_EQ(stat("weight_audit_lookups"), "3");
    EXPECT_EQ(stat("weight_audit_bad_rows"), "0");
    EXPECT_EQ(stat("weight_audit_repairs"), "0");
}

TEST_F(PathqdSonicDaemon, TheAsicsWeightsAreAuditedAndMalformedRowsCounted) {
    load(asic, "asic_db.json");
    load(appl, "appl_db_malformed.json");
    start();
    frr.restart("zebra");
    ASSERT_TRUE(statIs("weight_audit", "diverged")) << stat("weight_audit");
    // 10.20.2.0/24 is ECMP in the ASIC although APPL_DB asks 25:75: a second group.
    EXPECT_EQ(stat("weight_audit_diverged_groups"), "2");
    EXPECT_EQ(stat("weight_audit_bad_rows"), "9");
}

TEST_F(PathqdSonicDaemon, RedisDownIsUnreachableNotACrash) {
    appl.setUp(false);
    start();
    frr.restart("zebra");
    ASSERT_TRUE(statIs("weight_audit", "unreachable")) << stat("weight_audit");
    EXPECT_EQ(stat("weight_audit_read_errors"), "1");
}

TEST_F(PathqdSonicDaemon, SonicsStaticWecmpIsShownAndFollowed) {
    config.hashes[kWcmpKey]["wcmp_enabled"] = "true";
    start();
    ASSERT_TRUE(statIs("sonic_wcmp", "on"));
    config.hashes[kWcmpKey]["wcmp_enabled"] = "false";
    ASSERT_TRUE(statIs("sonic_wcmp", "off"));
    // A change of source or release needs a restart: refused, the running one stays.
    auto next = cfg;
    next.sonicRelease = 202311;
    daemon->applyConfig(next);
    EXPECT_EQ(daemon->stats().configRejected, 1u);
}

}  // namespace
}  // namespace twinrail::pathqd
