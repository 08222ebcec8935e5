// The comparison of twinrail's YANG models with its JSON Schemas (sonic_yang_compare.h),
// tested on the real hostrouted pair: one change on one side is one named difference.
#include <gtest/gtest.h>
#include <libyang/libyang.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sonic_yang_compare.h"

namespace {

using namespace twinrail::sonic_yang_test;

// The comparison itself: one change on one side is one named difference.
class SonicYangCompare : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string problem;
        ctx_ = loadModels(kStubs, problem);
        ASSERT_TRUE(ctx_) << problem;
        schema_ = loadSchema("hostrouted_config.schema.json");
        ASSERT_FALSE(schema_.is_discarded());
    }
    json& global() { return schema_["properties"]["HOSTROUTED"]["properties"]["global"]; }
    std::vector<std::string> diff(const lys_module* mod) {
        std::vector<std::string> out;
        Tables yang = moduleTables(mod, out);
        auto d = compare(schemaTables(schema_), yang);
        out.insert(out.end(), d.begin(), d.end());
        return out;
    }
    const lys_module* ours() {
        return ly_ctx_get_module_implemented(ctx_.get(), "sonic-hostrouted");
    }
    Ctx ctx_;
    json schema_;
};

TEST_F(SonicYangCompare, AgreesOnTheRealPair) {
    EXPECT_EQ(lines(diff(ours())), "");
}

TEST_F(SonicYangCompare, NamesAFieldOnlyInTheSchema) {
    global()["properties"]["extra_knob"] = {{"$ref", "#/$defs/integer"}};
    auto d = diff(ours());
    ASSERT_EQ(d.size(), 1U) << lines(d);
    EXPECT_EQ(d[0], "HOSTROUTED|global field extra_knob: in the schema, not in YANG");
}

TEST_F(SonicYangCompare, NamesAFieldOnlyInTheModule) {
    std::string text = readFile(kSource / "proto/sonic-hostrouted.yang");
    const std::string anchor = "container global {";
    ASSERT_NE(text.find(anchor), std::string::npos);
    text.insert(text.find(anchor) + anchor.size(), "\nleaf extra_knob { type string; }\n");
    // The edited module replaces ours in a context of its own.
    ly_ctx* raw = nullptr;
    ASSERT_EQ(ly_ctx_new(kStubs.c_str(), 0, &raw), LY_SUCCESS);
    Ctx other(raw);
    lys_module* mod = nullptr;
    ASSERT_EQ(lys_parse_mem(other.get(), text.c_str(), LYS_IN_YANG, &mod), LY_SUCCESS)
        << errors(other.get());
    auto d = diff(mod);
    ASSERT_EQ(d.size(), 1U) << lines(d);
    EXPECT_EQ(d[0], "HOSTROUTED|global field extra_knob: in YANG only");
}

TEST_F(SonicYangCompare, NamesARangeADefaultAnEnumAndATable) {
    global()["properties"]["route_table"]["maximum"] = 253;
    global()["properties"]["move_limit"]["default"] = "6";
    global()["properties"]["platform"]["enum"].push_back("cumulus");
    schema_["properties"]["HOSTROUTED_EXTRA"] = {{"additionalProperties", json::object()}};
    schema_["properties"]["UPLINK_PIN"]["additionalProperties"]["required"] = json::array();
    auto d = diff(ours());
    ASSERT_EQ(d.size(), 5U) << lines(d);
    for (const char* expected :
         {"HOSTROUTED|global field route_table: range 1..252 in YANG, 1..253 in the schema",
          "HOSTROUTED|global field move_limit: default \"5\" in YANG, \"6\"",
          "HOSTROUTED|global field platform: enum {linux,sonic} in YANG, {cumulus,linux,sonic}",
          "HOSTROUTED_EXTRA|*: in the schema, not in YANG",
          "UPLINK_PIN|* field uplink: mandatory in YANG only"})
        EXPECT_NE(std::find(d.begin(), d.end(), expected), d.end()) << expected << "\n" << lines(d);
}

}  // namespace
