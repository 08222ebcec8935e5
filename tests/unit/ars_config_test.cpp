// parseArsConfig (libs/ars/include/twinrail/ars/config.h): SONiC's Local ARS tables, spray as
// SWITCH_HASH|GLOBAL ecmp_hash_algorithm RANDOM and twinrail's GLOBAL_ARS, read into the
// software path's settings; every bad value refused with the table, key and field named.
// The planner's documents read back are in plan_ars_test.cpp.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "twinrail/ars/config.h"

namespace {

using nlohmann::json;
using twinrail::IpPrefix;
using namespace twinrail::ars;

// A switch with two fabric ports, an ARS profile and object with SONiC's defaults.
json base() {
    return json::parse(R"({
      "PORT": {"swp1": {"speed": "100000"}, "swp2": {"speed": "100000"}},
      "ARS_PROFILE": {"p": {}},
      "ARS_OBJECT": {"o": {}},
      "ARS_INTERFACES": {"swp1": {}, "swp2": {"scaling_factor": "10", "ars_obj_name": "o"}}
    })");
}

ArsConfig parsed(const json& doc) {
    auto r = parseArsConfig(doc);
    if (auto* e = std::get_if<std::string>(&r)) ADD_FAILURE() << *e;
    return std::holds_alternative<ArsConfig>(r) ? std::get<ArsConfig>(r) : ArsConfig{};
}

std::string error(const json& doc) {
    auto r = parseArsConfig(doc);
    return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : "(accepted)";
}

TEST(ArsConfig, NoTablesAttachNothing) {
    EXPECT_EQ(parsed(json::object()), ArsConfig{});
    EXPECT_FALSE(parsed(json::object()).enabled);
    // A profile alone creates no ARS object: nothing to run.
    EXPECT_FALSE(parsed({{"ARS_PROFILE", {{"p", json::object()}}}}).enabled);
    // A hash that is not RANDOM is plain ECMP.
    EXPECT_FALSE(parsed({{"SWITCH_HASH", {{"GLOBAL", {{"ecmp_hash_algorithm", "CRC"}}}}}}).enabled);
}

TEST(ArsConfig, EmptyRowsTakeSonicsDefaults) {
    ArsConfig c = parsed(base());
    EXPECT_TRUE(c.enabled);
    EXPECT_EQ(c.profile, "p");
    EXPECT_EQ(c.object, "o");
    EXPECT_EQ(c.datapath.mode, AssignMode::FlowletQuality);
    EXPECT_EQ(c.datapath.idleTimeUs, 256U);
    EXPECT_FALSE(c.datapath.global);
    EXPECT_EQ(c.selector, NhgSelector::Interface);
    EXPECT_EQ(c.maxFlows, 512U);
    EXPECT_EQ(c.samplingIntervalUs, 16U);
    EXPECT_EQ(c.pastLoadWeight, 16U);
    EXPECT_EQ(c.futureLoadWeight, 16U);
    EXPECT_EQ(c.pastLoad, (LoadRange{0, kDefaultPastLoadMax}));
    EXPECT_EQ(c.futureLoad, (LoadRange{0, kDefaultFutureLoadMax}));
    EXPECT_TRUE(c.ipv4);
    EXPECT_TRUE(c.ipv6);
    EXPECT_EQ(c.interfaces, (std::vector<ArsInterface>{{"swp1", 0}, {"swp2", 10}}));
    EXPECT_TRUE(c.nexthops.empty());
}

TEST(ArsConfig, EveryFieldIsRead) {
    json d = base();
    d["ARS_PROFILE"]["p"] = {{"algorithm", "ewma"},
                             {"ars_nhg_path_selector_mode", "global"},
                             {"ars_lag_path_selector_mode", "global"},
                             {"default_ars_object", "o"},
                             {"max_flows", "8192"},
                             {"sampling_interval", "2000"},
                             {"past_load_min_value", "10"},
                             {"past_load_max_value", "90"},
                             {"past_load_weight", "1"},
                             {"future_load_min_value", "0"},
                             {"future_load_max_value", "500"},
                             {"future_load_weight", "5"},
                             {"current_load_min_value", "0"},
                             {"current_load_max_value", "10"},
                             {"ipv4_enable", "true"},
                             {"ipv6_enable", "false"}};
    // Numbers and booleans as a hand-written file has them, strings as CONFIG_DB does.
    d["ARS_OBJECT"]["o"] = {{"assign_mode", "per_packet_quality"},
                            {"flowlet_idle_time", 100},
                            {"max_flows", 1000},
                            {"primary_path_threshold", "100"},
                            {"alternative_path_cost", "250"}};
    ArsConfig c = parsed(d);
    EXPECT_EQ(c.selector, NhgSelector::Global);
    EXPECT_EQ(c.samplingIntervalUs, 2000U);
    EXPECT_EQ(c.pastLoad, (LoadRange{10, 90}));
    EXPECT_EQ(c.futureLoad, (LoadRange{0, 500}));
    EXPECT_EQ(c.pastLoadWeight, 1U);
    EXPECT_EQ(c.futureLoadWeight, 5U);
    EXPECT_FALSE(c.ipv6);
    EXPECT_EQ(c.datapath.mode, AssignMode::PacketQuality);
    EXPECT_EQ(c.datapath.idleTimeUs, 100U);
    EXPECT_EQ(c.maxFlows, 1024U);  // 1000 rounded up to a power of two
}

TEST(ArsConfig, AssignModesAreSaisFour) {
    for (auto [name, mode] : {std::pair{"per_flowlet_quality", AssignMode::FlowletQuality},
                              std::pair{"per_packet_quality", AssignMode::PacketQuality},
                              std::pair{"per_flowlet_random", AssignMode::FlowletRandom},
                              std::pair{"per_packet_random", AssignMode::PacketRandom}}) {
        json d = base();
        d["ARS_OBJECT"]["o"]["assign_mode"] = name;
        EXPECT_EQ(parsed(d).datapath.mode, mode) << name;
    }
}

TEST(ArsConfig, RowsWithoutFieldsAsCONFIG_DBHoldsThem) {
    json d = base();
    for (const char* t : {"ARS_PROFILE", "ARS_OBJECT"})
        for (auto& [k, row] : d[t].items()) row = {{"NULL", "NULL"}};
    d["ARS_INTERFACES"]["swp1"] = {{"NULL", "NULL"}};
    d["GLOBAL_ARS"]["o"] = {{"NULL", "NULL"}};
    ArsConfig c = parsed(d);
    EXPECT_TRUE(c.enabled);
    EXPECT_TRUE(c.datapath.global);  // a row without fields: enabled's default, true
}

TEST(ArsConfig, SprayIsRandomPerPacketOnEveryMultipathRoute) {
    json d = {{"SWITCH_HASH",
               {{"GLOBAL",
                 {{"ecmp_hash", json::array({"SRC_IP", "DST_IP", "L4_SRC_PORT"})},
                  {"lag_hash@", "SRC_MAC,DST_MAC"},
                  {"ecmp_hash_algorithm", "RANDOM"},
                  {"lag_hash_algorithm", "CRC"}}}}}};
    ArsConfig c = parsed(d);
    EXPECT_TRUE(c.enabled);
    EXPECT_EQ(c.datapath.mode, AssignMode::PacketRandom);
    EXPECT_EQ(c.selector, NhgSelector::Global);
    EXPECT_FALSE(c.datapath.global);
    EXPECT_TRUE(c.interfaces.empty());
}

TEST(ArsConfig, GlobalArsSwitchesOnTheRemoteHalf) {
    json d = base();
    d["GLOBAL_ARS"]["o"] = {{"enabled", "true"}};
    EXPECT_TRUE(parsed(d).datapath.global);
    d["GLOBAL_ARS"]["o"] = {{"enabled", "false"}};
    EXPECT_FALSE(parsed(d).datapath.global);
    d["GLOBAL_ARS"]["o"] = json::object();
    EXPECT_TRUE(parsed(d).datapath.global);
}

TEST(ArsConfig, NexthopsCountOnlyWithTheNexthopSelector) {
    json d = base();
    d["ARS_NEXTHOPS"] = {{"default|10.0.0.1", json::object()},
                         {"default|fe80::1", {{"ars_obj_name", "o"}, {"role", "primary_path"}}}};
    EXPECT_TRUE(parsed(d).nexthops.empty());  // interface mode: SONiC reads no ARS_NEXTHOPS
    d["ARS_PROFILE"]["p"]["ars_nhg_path_selector_mode"] = "nexthop";
    EXPECT_EQ(parsed(d).nexthops, (std::vector<IpPrefix>{*IpPrefix::parse("10.0.0.1/32"),
                                                         *IpPrefix::parse("fe80::1/128")}));
}

TEST(ArsConfig, TablesListsWhatItReads) {
    EXPECT_EQ(arsTables(), (std::vector<std::string>{"ARS_PROFILE", "ARS_OBJECT", "ARS_INTERFACES",
                                                     "ARS_NEXTHOPS", "SWITCH_HASH", "GLOBAL_ARS"}));
}

// ---- Every bad value, with its exact message ----

struct Bad {
    const char* name;
    std::function<void(json&)> change;
    std::string message;
};

class ArsConfigRefuses : public ::testing::TestWithParam<Bad> {};

TEST_P(ArsConfigRefuses, NamingTableKeyAndField) {
    json d = base();
    GetParam().change(d);
    EXPECT_EQ(error(d), GetParam().message);
}

const char* kTwoProfiles = "ARS_PROFILE|q: a second profile: SONiC has one (ARS_PROFILE|p)";

INSTANTIATE_TEST_SUITE_P(
    All, ArsConfigRefuses,
    ::testing::Values(
        Bad{"NotObject", [](json& d) { d = json::array(); },
            "config: must be a JSON object of tables"},
        Bad{"TableNotObject", [](json& d) { d["ARS_OBJECT"] = "o"; },
            "ARS_OBJECT: must be an object of keys"},
        Bad{"RowNotObject", [](json& d) { d["ARS_OBJECT"]["o"] = 1; },
            "ARS_OBJECT|o: must be an object of fields"},
        Bad{"FieldNotScalar", [](json& d) { d["ARS_OBJECT"]["o"]["flowlet_idle_time"] = json::object(); },
            "ARS_OBJECT|o field flowlet_idle_time: must be a string, number or boolean"},
        Bad{"UnknownField", [](json& d) { d["ARS_OBJECT"]["o"]["idle"] = "5"; },
            "ARS_OBJECT|o field idle: unknown field (typo?)"},
        Bad{"IdleTooShort", [](json& d) { d["ARS_OBJECT"]["o"]["flowlet_idle_time"] = "1"; },
            "ARS_OBJECT|o field flowlet_idle_time: 1 is outside 2..2047"},
        Bad{"IdleTooLong", [](json& d) { d["ARS_OBJECT"]["o"]["flowlet_idle_time"] = "2048"; },
            "ARS_OBJECT|o field flowlet_idle_time: 2048 is outside 2..2047"},
        Bad{"IdleNotNumber", [](json& d) { d["ARS_OBJECT"]["o"]["flowlet_idle_time"] = "256us"; },
            "ARS_OBJECT|o field flowlet_idle_time: \"256us\" is not a whole number"},
        Bad{"AssignMode", [](json& d) { d["ARS_OBJECT"]["o"]["assign_mode"] = "per_packet"; },
            "ARS_OBJECT|o field assign_mode: \"per_packet\" is not one of per_flowlet_quality, "
            "per_flowlet_random, per_packet_quality, per_packet_random"},
        Bad{"NoFlows", [](json& d) { d["ARS_OBJECT"]["o"]["max_flows"] = "0"; },
            "ARS_OBJECT|o field max_flows: 0 is outside 1..1048576"},
        Bad{"FlowsAboveProfile",
            [](json& d) {
                d["ARS_PROFILE"]["p"]["max_flows"] = "512";
                d["ARS_OBJECT"]["o"]["max_flows"] = "1024";
            },
            "ARS_OBJECT|o field max_flows: 1024 is above ARS_PROFILE|p max_flows 512"},
        Bad{"Threshold", [](json& d) { d["ARS_OBJECT"]["o"]["primary_path_threshold"] = "-1"; },
            "ARS_OBJECT|o field primary_path_threshold: -1 is outside 0..4294967295"},
        Bad{"Algorithm", [](json& d) { d["ARS_PROFILE"]["p"]["algorithm"] = "wred"; },
            "ARS_PROFILE|p field algorithm: \"wred\" is not one of ewma"},
        Bad{"Selector", [](json& d) { d["ARS_PROFILE"]["p"]["ars_nhg_path_selector_mode"] = "port"; },
            "ARS_PROFILE|p field ars_nhg_path_selector_mode: \"port\" is not one of global, "
            "interface, nexthop"},
        Bad{"LagSelector",
            [](json& d) { d["ARS_PROFILE"]["p"]["ars_lag_path_selector_mode"] = "nexthop"; },
            "ARS_PROFILE|p field ars_lag_path_selector_mode: \"nexthop\" is not one of global, "
            "interface"},
        Bad{"GlobalWithoutDefault",
            [](json& d) { d["ARS_PROFILE"]["p"]["ars_nhg_path_selector_mode"] = "global"; },
            "ARS_PROFILE|p field default_ars_object: missing: ars_nhg_path_selector_mode global "
            "needs it"},
        Bad{"DefaultDangles", [](json& d) { d["ARS_PROFILE"]["p"]["default_ars_object"] = "x"; },
            "ARS_PROFILE|p field default_ars_object: \"x\" is not an ARS_OBJECT"},
        Bad{"NoSampling", [](json& d) { d["ARS_PROFILE"]["p"]["sampling_interval"] = "0"; },
            "ARS_PROFILE|p field sampling_interval: 0 is outside 1..4294967295"},
        Bad{"WeightRange", [](json& d) { d["ARS_PROFILE"]["p"]["past_load_weight"] = "70000"; },
            "ARS_PROFILE|p field past_load_weight: 70000 is outside 0..65535"},
        Bad{"NoWeights",
            [](json& d) {
                d["ARS_PROFILE"]["p"]["past_load_weight"] = "0";
                d["ARS_PROFILE"]["p"]["future_load_weight"] = "0";
            },
            "ARS_PROFILE|p field future_load_weight: 0 with past_load_weight 0: no load to rank "
            "ports by"},
        Bad{"RangeUpsideDown",
            [](json& d) {
                d["ARS_PROFILE"]["p"]["past_load_min_value"] = "50";
                d["ARS_PROFILE"]["p"]["past_load_max_value"] = "10";
            },
            "ARS_PROFILE|p field past_load_max_value: 10 is not above past_load_min_value 50"},
        Bad{"FutureRange", [](json& d) { d["ARS_PROFILE"]["p"]["future_load_max_value"] = "65536"; },
            "ARS_PROFILE|p field future_load_max_value: 65536 is outside 0..65535"},
        Bad{"YangBoolean", [](json& d) { d["ARS_PROFILE"]["p"]["ipv4_enable"] = "enabled"; },
            "ARS_PROFILE|p field ipv4_enable: \"enabled\" is not true or false"},
        Bad{"TwoProfiles", [](json& d) { d["ARS_PROFILE"]["q"] = json::object(); }, kTwoProfiles},
        Bad{"TwoObjects", [](json& d) { d["ARS_OBJECT"]["q"] = json::object(); },
            "ARS_OBJECT|q: a second ARS object: twinrail's data path runs one (ARS_OBJECT|o)"},
        Bad{"BadObjectName", [](json& d) { d["ARS_OBJECT"] = {{"o\n", json::object()}}; },
            "ARS_OBJECT|o\\x0a: \"o\\x0a\" is not a valid name: contains a control character "
            "at offset 1"},
        Bad{"ObjectWithoutProfile", [](json& d) { d.erase("ARS_PROFILE"); },
            "ARS_OBJECT|o: no ARS_PROFILE to create it in"},
        Bad{"InterfaceWithoutObject",
            [](json& d) {
                d.erase("ARS_OBJECT");
                d["ARS_INTERFACES"]["swp2"].erase("ars_obj_name");
            },
            "ARS_INTERFACES|swp1: no ARS_OBJECT to use"},
        Bad{"InterfaceNotAPort", [](json& d) { d["ARS_INTERFACES"]["swp9"] = json::object(); },
            "ARS_INTERFACES|swp9: not a PORT of this switch"},
        Bad{"InterfaceObject", [](json& d) { d["ARS_INTERFACES"]["swp1"]["ars_obj_name"] = "x"; },
            "ARS_INTERFACES|swp1 field ars_obj_name: \"x\" is not an ARS_OBJECT (there is o)"},
        Bad{"ScalingFactor", [](json& d) { d["ARS_INTERFACES"]["swp1"]["scaling_factor"] = "1.5"; },
            "ARS_INTERFACES|swp1 field scaling_factor: \"1.5\" is not a whole number"},
        Bad{"NexthopKey", [](json& d) { d["ARS_NEXTHOPS"]["10.0.0.1"] = json::object(); },
            "ARS_NEXTHOPS|10.0.0.1: key must be <vrf>|<nexthop ip>"},
        Bad{"NexthopIp", [](json& d) { d["ARS_NEXTHOPS"]["default|10.0.0"] = json::object(); },
            "ARS_NEXTHOPS|default|10.0.0: \"10.0.0\" is not an IP address"},
        Bad{"NexthopVrf", [](json& d) { d["ARS_NEXTHOPS"]["Vrf1|10.0.0.1"] = json::object(); },
            "ARS_NEXTHOPS|Vrf1|10.0.0.1: VRF \"Vrf1\": twinrail's data path has the default only"},
        Bad{"NexthopRole",
            [](json& d) { d["ARS_NEXTHOPS"]["default|10.0.0.1"] = {{"role", "alternative_path"}}; },
            "ARS_NEXTHOPS|default|10.0.0.1 field role: alternative_path: twinrail's data path has "
            "no alternative path set"},
        Bad{"HashKey", [](json& d) { d["SWITCH_HASH"]["global"] = json::object(); },
            "SWITCH_HASH|global: unknown key (only \"GLOBAL\")"},
        Bad{"HashAlgorithm", [](json& d) { d["SWITCH_HASH"]["GLOBAL"]["ecmp_hash_algorithm"] = "MD5"; },
            "SWITCH_HASH|GLOBAL field ecmp_hash_algorithm: \"MD5\" is not one of CRC, CRC_32HI, "
            "CRC_32LO, CRC_CCITT, CRC_XOR, RANDOM, XOR"},
        Bad{"HashField",
            [](json& d) { d["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"] = json::array({"DST_IP", "TTL"}); },
            "SWITCH_HASH|GLOBAL field ecmp_hash: \"TTL\" is not a hash field"},
        Bad{"HashFieldAt", [](json& d) { d["SWITCH_HASH"]["GLOBAL"]["lag_hash@"] = "DST_IP,,SRC_IP"; },
            "SWITCH_HASH|GLOBAL field lag_hash@: \"\" is not a hash field"},
        Bad{"HashUnknown", [](json& d) { d["SWITCH_HASH"]["GLOBAL"]["seed"] = "1"; },
            "SWITCH_HASH|GLOBAL field seed: unknown field (typo?)"},
        Bad{"SprayAndArs",
            [](json& d) { d["SWITCH_HASH"]["GLOBAL"]["ecmp_hash_algorithm"] = "RANDOM"; },
            "SWITCH_HASH|GLOBAL field ecmp_hash_algorithm: RANDOM with ARS_OBJECT|o: twinrail's "
            "data path runs one mode; drop one of them"},
        Bad{"GlobalUnknownObject", [](json& d) { d["GLOBAL_ARS"]["x"] = json::object(); },
            "GLOBAL_ARS|x: \"x\" is not an ARS_OBJECT (there is o)"},
        Bad{"GlobalBoolean", [](json& d) { d["GLOBAL_ARS"]["o"] = {{"enabled", "1"}}; },
            "GLOBAL_ARS|o field enabled: \"1\" is not true or false"},
        Bad{"GlobalUnknownField", [](json& d) { d["GLOBAL_ARS"]["o"] = {{"remote", "true"}}; },
            "GLOBAL_ARS|o field remote: unknown field (typo?)"},
        Bad{"GlobalRandom",
            [](json& d) {
                d["ARS_OBJECT"]["o"]["assign_mode"] = "per_flowlet_random";
                d["GLOBAL_ARS"]["o"] = json::object();
            },
            "GLOBAL_ARS|o field enabled: true with a random assign_mode: global ARS refines the "
            "quality choice; a random one already follows the route's weights"},
        Bad{"GlobalWithSpray",
            [](json& d) {
                d = {{"SWITCH_HASH", {{"GLOBAL", {{"ecmp_hash_algorithm", "RANDOM"}}}}},
                     {"GLOBAL_ARS", {{"o", json::object()}}}};
            },
            "GLOBAL_ARS|o: \"o\" is not an ARS_OBJECT"}),
    [](const ::testing::TestParamInfo<Bad>& i) { return std::string(i.param.name); });

}  // namespace
