// libs/sonic: the config_db.json -> YANG-JSON translator, the check (every error located,
// the tables without a model), the merge, hostile input; on the fixture's own module
// (tests/fixtures/sonic-check). The CLI and the daemons' --check-config:
// sonic_check_cli_test.cpp; SONiC's own cases and sample: sonic_check_sonic_test.cpp.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "sonic_check_helpers.h"
#include "twinrail/sonic/check.h"
#include "twinrail/sonic/merge.h"
#include "twinrail/sonic/translate.h"

using nlohmann::json;
using namespace twinrail::sonic;
using namespace twinrail::sonic_check_test;

namespace {

// The fixture's module, loaded once per test (a few ms).
struct Demo {
    YangContext yang;
    SchemaModel schema;
    Demo() {
        auto problems = yang.loadDirectory((kFixture / "yang").string());
        EXPECT_TRUE(problems.empty()) << problems.front();
        schema = yang.schemaModel();
    }
    CheckReport check(const json& doc) const { return checkConfigDb(yang, schema, doc); }
};

const json& portEntry(const json& yang, const std::string& name) {
    for (const auto& e :
         yang["sonic-rail-demo:sonic-rail-demo"]["sonic-rail-demo:RAIL_PORT"]["RAIL_PORT_LIST"])
        if (e["name"] == name) return e;
    throw std::runtime_error("no entry " + name);
}

}  // namespace

TEST(SonicSchema, WalksTablesListsKeysAndLeafTypesFromLibyang) {
    Demo d;
    ASSERT_NE(d.schema.table("RAIL_PORT"), nullptr);
    EXPECT_EQ(d.schema.table("RAIL_PORT")->module, "sonic-rail-demo");
    EXPECT_EQ(d.schema.table("RAIL_STATE"), nullptr) << "config false is not a CONFIG_DB table";
    const auto& list = *d.schema.table("RAIL_BINDING")->container.child("RAIL_BINDING_LIST");
    EXPECT_EQ(list.keys, (std::vector<std::string>{"port", "address"}));
    EXPECT_EQ(list.child("port")->json, JsonKind::String) << "a leafref to a string";
    const auto& port = *d.schema.table("RAIL_PORT")->container.child("RAIL_PORT_LIST");
    EXPECT_EQ(port.child("mtu")->json, JsonKind::Number);
    EXPECT_EQ(port.child("octets")->json, JsonKind::String) << "RFC 7951: uint64 is a string";
    EXPECT_EQ(port.child("enabled")->json, JsonKind::Boolean);
    EXPECT_EQ(port.child("weight")->json, JsonKind::NumberOrString);
    EXPECT_EQ(port.child("peers")->kind, SchemaNode::Kind::LeafList);
}

TEST(SonicTranslate, AppliesSonicRulesToTheFixture) {
    Demo d;
    auto t = translateConfigDb(readJson(kFixture / "config_db.json"), d.schema);
    EXPECT_TRUE(t.problems.empty()) << t.problems.front().str();
    EXPECT_EQ(t.tablesWithoutModel, (std::vector<std::string>{"bgpraw"}));
    const json& e0 = portEntry(t.yang, "Ethernet0");
    EXPECT_EQ(e0["mtu"], 9100);
    EXPECT_EQ(e0["enabled"], true);
    EXPECT_EQ(e0["peers"], json::array({"leaf1", "leaf2"})) << "comma string, trimmed";
    EXPECT_EQ(e0["octets"], "18446744073709551615");
    EXPECT_EQ(e0["weight"], 5);
    EXPECT_EQ(e0["tuning"]["delay"], -3);
    const json& e4 = portEntry(t.yang, "Ethernet4");
    EXPECT_EQ(e4["weight"], "auto");
    EXPECT_EQ(e4["peers"], json::array({"spine1", "spine2"}));
    const json& top = t.yang["sonic-rail-demo:sonic-rail-demo"];
    json binding = top["sonic-rail-demo:RAIL_BINDING"]["RAIL_BINDING_LIST"];
    EXPECT_EQ(binding[0], (json{{"port", "Ethernet0"}, {"address", "10.128.0.5"}, {"vlan", 100}}));
    EXPECT_EQ(binding[1], (json{{"port", "Ethernet4"}, {"address", "10.128.0.0/24"}}))
        << "\"NULL\": \"NULL\" is dropped";
    EXPECT_EQ(top["sonic-rail-demo:RAIL_GLOBAL"]["global"],
              (json{{"holdtime", 30}, {"enabled", false}}));
    EXPECT_EQ(top["sonic-rail-demo:RAIL_MAP"]["RAIL_MAP_LIST"][0]["RAIL_MAP"],
              (json::array({{{"from", "0"}, {"to", 1}}, {{"from", "46"}, {"to", 5}}})));
    const json& rif = top["sonic-rail-demo:RAIL_IF"];
    EXPECT_EQ(rif["RAIL_IF_LIST"][0]["name"], "Ethernet0");
    EXPECT_EQ(rif["RAIL_IF_PREFIX_LIST"][0],
              (json{{"name", "Ethernet0"}, {"prefix", "10.1.0.1/31"}, {"scope", "global"}}));
}

TEST(SonicTranslate, RunsOnAHandBuiltModelWithoutLibyang) {
    SchemaModel m;
    SchemaNode list{SchemaNode::Kind::List, "T_LIST", JsonKind::String, {"a", "b"}, {}};
    list.children = {{SchemaNode::Kind::Leaf, "a", JsonKind::String, {}, {}},
                     {SchemaNode::Kind::Leaf, "b", JsonKind::Number, {}, {}},
                     {SchemaNode::Kind::LeafList, "l", JsonKind::Number, {}, {}}};
    m.tables["T"] = TableModel{
        "sonic-t", "sonic-t", {SchemaNode::Kind::Container, "T", JsonKind::String, {}, {list}}};
    auto t = translateConfigDb(json{{"T", {{"x|7", {{"l", "1,2"}}}}}}, m);
    EXPECT_EQ(t.yang["sonic-t:sonic-t"]["sonic-t:T"]["T_LIST"][0],
              (json{{"a", "x"}, {"b", 7}, {"l", {1, 2}}}));
}

TEST(SonicCheck, FixtureValidatesAndBgprawIsExempt) {
    Demo d;
    auto r = d.check(readJson(kFixture / "config_db.json"));
    EXPECT_TRUE(r.ok()) << ::testing::PrintToString(lines(r));
}

TEST(SonicCheck, TablesWithoutAModelAreReportedAsConfigReloadDoes) {
    Demo d;
    json doc = readJson(kFixture / "config_db.json");
    doc["HOSTROUTED_NOPE"] = {{"global", {{"x", "1"}}}};
    doc["ANOTHER"] = json::object();
    auto r = d.check(doc);
    EXPECT_TRUE(r.problems.empty());
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.missingModelsLine(),
              "Config tables are missing yang models: dict_keys(['ANOTHER', 'HOSTROUTED_NOPE'])");
}

TEST(SonicCheck, ListsEveryErrorWithTableKeyAndField) {
    Demo d;
    json doc = readJson(kFixture / "config_db.json");
    doc["RAIL_PORT"]["Ethernet0"]["mtu"] = "99999";
    doc["RAIL_PORT"]["Ethernet4"]["mode"] = "tunnelled";
    doc["RAIL_BINDING"]["Ethernet8|10.0.0.1"] = {{"vlan", "5"}};
    doc["RAIL_GLOBAL"]["global"]["enabled"] = "maybe";
    auto out = lines(d.check(doc));
    ASSERT_EQ(out.size(), 4u) << ::testing::PrintToString(out);
    auto has = [&out](const std::string& prefix, const std::string& words) {
        for (const auto& l : out)
            if (l.rfind(prefix, 0) == 0 && l.find(words) != std::string::npos) return true;
        return false;
    };
    EXPECT_TRUE(has("RAIL_PORT|Ethernet0: mtu: ", "out of type uint16 min/max bounds"));
    EXPECT_TRUE(has("RAIL_PORT|Ethernet4: mode: ", "Invalid enumeration value"));
    EXPECT_TRUE(has("RAIL_BINDING|Ethernet8|10.0.0.1: port: ", "Invalid leafref value"));
    EXPECT_TRUE(has("RAIL_GLOBAL|global: enabled: ", "Invalid"));
}

TEST(SonicCheck, MissingMandatoryFieldAndBadKeyAreLocated) {
    Demo d;
    json doc = readJson(kFixture / "config_db.json");
    doc["RAIL_PORT"]["Ethernet4"].erase("lanes");
    doc["RAIL_PORT"]["Port9"] = {{"lanes", "9"}};
    auto out = lines(d.check(doc));
    ASSERT_GE(out.size(), 2u) << ::testing::PrintToString(out);
    std::string all;
    for (const auto& l : out) all += l + "\n";
    EXPECT_NE(all.find("RAIL_PORT|Ethernet4: lanes: Mandatory node \"lanes\""), std::string::npos)
        << all;
    EXPECT_NE(all.find("RAIL_PORT|Port9: Unsatisfied pattern"), std::string::npos) << all;
}

TEST(SonicCheck, HostileInputGetsClearErrorsNeverACrash) {
    Demo d;
    EXPECT_EQ(lines(d.check(json::array({1, 2}))),
              (std::vector<std::string>{
                  "the document is a JSON array, not an object of tables ({\"TABLE\": {\"key\": "
                  "{\"field\": \"value\"}}})"}));
    json doc = {{"RAIL_PORT", "Ethernet0"}};
    EXPECT_EQ(
        lines(d.check(doc)),
        (std::vector<std::string>{"RAIL_PORT: the table is a JSON string, not an object of rows"}));
    doc = {{"RAIL_PORT", {{"Ethernet0", 5}}},
           {"RAIL_BINDING", {{"Ethernet0|10.0.0.1|extra", {{"vlan", "1"}}}}},
           {"RAIL_GLOBAL", {{"global", {{"holdtime", {{"nested", 1}}}}}}},
           {"RAIL_MAP", {{"m", {{"0", json::array()}}}}}};
    doc["RAIL_IF"] = {{"a|b|c", json::object()}};
    auto out = lines(d.check(doc));
    const std::string parts = "the key has 3 part(s) separated by '|'; the model wants ";
    std::vector<std::string> want = {
        "RAIL_BINDING|Ethernet0|10.0.0.1|extra: " + parts + "port|address",
        "RAIL_GLOBAL|global: holdtime: is a JSON object, not a string",
        "RAIL_IF|a|b|c: " + parts + "name or name|prefix",
        "RAIL_MAP|m: 0: is a JSON array, not a string",
        "RAIL_PORT|Ethernet0: the row is a JSON number, not an object of fields"};
    EXPECT_EQ(out, want);
    doc = {{"RAIL_PORT",
            {{"Ethernet0",
              {{"lanes", json::array({"0"})}, {"peers", {{"a", 1}}}, {"colour", "red"}}}}}};
    out = lines(d.check(doc));
    std::vector<std::string> want2 = {
        "RAIL_PORT|Ethernet0: colour: no such field in the model (RAIL_PORT_LIST)",
        "RAIL_PORT|Ethernet0: lanes: is a JSON array, not a string",
        "RAIL_PORT|Ethernet0: peers: is a JSON object, not a string or a list of strings"};
    ASSERT_GE(out.size(), want2.size());
    EXPECT_EQ(std::vector<std::string>(out.begin(), out.begin() + 3), want2);
}

TEST(SonicLocate, ReadsLibyangPathsWithSlashesAndQuotesInKeys) {
    Demo d;
    json doc = {{"RAIL_IF", {{"Ethernet0|10.1.0.1/31", json::object()}}}};
    YangError e{"Some message.",
                "/sonic-rail-demo:sonic-rail-demo/RAIL_IF/"
                "RAIL_IF_PREFIX_LIST[name='Ethernet0'][prefix='10.1.0.1/31']/scope"};
    EXPECT_EQ(locateError(e, d.schema, doc),
              (Problem{"RAIL_IF", "Ethernet0|10.1.0.1/31", "scope", "Some message."}));
    e.path =
        "/sonic-rail-demo:sonic-rail-demo/RAIL_MAP/RAIL_MAP_LIST[name=\"m\"]/RAIL_MAP[from='7']/to";
    EXPECT_EQ(locateError(e, d.schema, doc), (Problem{"RAIL_MAP", "m", "7", "Some message."}));
    e.path = "/sonic-rail-demo:sonic-rail-demo/RAIL_GLOBAL/global/holdtime";
    EXPECT_EQ(locateError(e, d.schema, doc),
              (Problem{"RAIL_GLOBAL", "global", "holdtime", "Some message."}));
    e.path = "/sonic-rail-demo:sonic-rail-demo/RAIL_IF/RAIL_IF_LIST[name='unterminated";
    EXPECT_EQ(locateError(e, d.schema, doc).table, "RAIL_IF");
    e.path = "";
    EXPECT_EQ(locateError(e, d.schema, doc), (Problem{"", "", "", "Some message."}));
}

TEST(SonicMerge, OverlayReplacesAndExtendsFieldsRowByRow) {
    json base = {{"A", {{"r1", {{"x", "1"}, {"y", "2"}}}, {"r2", {{"z", "3"}}}}},
                 {"B", {{"k", {{"f", "v"}}}}}};
    json overlay = {{"A", {{"r1", {{"y", "20"}, {"w", "4"}}}, {"r3", {{"n", "5"}}}}},
                    {"C", {{"c", {{"g", "h"}}}}}};
    auto m = mergeConfigDb(base, overlay);
    EXPECT_TRUE(m.problems.empty());
    EXPECT_EQ(m.merged, (json{{"A",
                               {{"r1", {{"x", "1"}, {"y", "20"}, {"w", "4"}}},
                                {"r2", {{"z", "3"}}},
                                {"r3", {{"n", "5"}}}}},
                              {"B", {{"k", {{"f", "v"}}}}},
                              {"C", {{"c", {{"g", "h"}}}}}}));
}

TEST(SonicMerge, HostileOverlayIsNamedAndSkipped) {
    json base = {{"A", {{"r", {{"x", "1"}}}}}};
    auto m = mergeConfigDb(base, json{{"A", {{"r", "oops"}}}, {"B", 3}});
    EXPECT_EQ(m.merged, base);
    ASSERT_EQ(m.problems.size(), 2u);
    EXPECT_EQ(m.problems[0].str(),
              "A|r: the overlay's row is a JSON string, not an object of fields");
    EXPECT_EQ(m.problems[1].str(),
              "B: the overlay's table is a JSON number, not an object of rows");
    EXPECT_EQ(mergeConfigDb(json::array(), base).problems.size(), 1u);
    EXPECT_EQ(mergeConfigDb(base, "x").problems.size(), 1u);
}

TEST(SonicCheck, DeeplyNestedDocumentsAreRefusedNotRecursedInto) {
    Demo d;
    json deep = json::array();
    for (int i = 0; i < 100000; ++i) deep = json::array({std::move(deep)});
    json doc = {{"RAIL_PORT", {{"Ethernet0", {{"lanes", std::move(deep)}}}}}};
    auto out = lines(d.check(doc));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0], "the document nests deeper than 32 levels (config_db.json has 3 or 4)");
    EXPECT_EQ(mergeConfigDb(json::object(), doc).problems.size(), 1u);
    EXPECT_EQ(nestingDepth(json{{"A", {{"k", {{"f", "v"}}}}}}), 3u);
}
