// twinrail's YANG models (proto/sonic-*.yang) against the JSON Schemas
// (proto/*_config.schema.json) and against libyang, SONiC's validator.
//
// SONiC refuses CONFIG_DB tables without a YANG model, so every table twinrail owns has
// one; the schemas and docs/configuration.md are the reference, so the models must say
// the same: the same tables, fields, type class (integer, number, boolean, enum, string),
// ranges, enums, defaults and mandatory fields. The comparison (sonic_yang_compare.cpp)
// is a pure function of a schema and a compiled module, and is itself tested
// (sonic_yang_compare_test.cpp): a field, a range or a default changed on one side only
// is caught.
//
// Our modules import sonic-port and sonic-vlan (leafrefs to PORT and VLAN). The test loads
// them twice: with our own stand-ins (tests/fixtures/sonic-yang-stubs: the same module
// names and paths, nothing of SONiC's), so a fresh clone tests the same code, and with
// SONiC's real models next to the checkout when they are there (skipped otherwise).
// tests/fixtures/sonic-yang-own/cases.json holds valid and invalid YANG-JSON instances of
// every table, each invalid one with a part of the error libyang must give.
#include <gtest/gtest.h>
#include <libyang/libyang.h>

#include <string>
#include <vector>

#include "sonic_yang_compare.h"

namespace {

using namespace twinrail::sonic_yang_test;

const fs::path kCases = kSource / "tests/fixtures/sonic-yang-own/cases.json";

// Every case of cases.json against the modules in `ctx`; the mismatches, one line each.
std::vector<std::string> checkCases(ly_ctx* ctx) {
    std::vector<std::string> out;
    json doc = json::parse(readFile(kCases), nullptr, false);
    if (doc.is_discarded() || !doc.contains("cases") || doc["cases"].empty())
        return {kCases.string() + " is missing or has no cases"};
    for (const auto& c : doc["cases"]) {
        const std::string name = c["name"].get<std::string>();
        ly_err_clean(ctx, nullptr);
        lyd_node* tree = nullptr;
        LY_ERR rc = lyd_parse_data_mem(ctx, c["data"].dump().c_str(), LYD_JSON, LYD_PARSE_STRICT,
                                       LYD_VALIDATE_PRESENT, &tree);
        lyd_free_all(tree);
        const std::string why = errors(ctx);
        if (c["valid"].get<bool>() && rc != LY_SUCCESS) out.push_back(name + ": refused: " + why);
        if (!c["valid"].get<bool>()) {
            const std::string expected = c["error"].get<std::string>();
            if (rc == LY_SUCCESS) out.push_back(name + ": accepted, should fail on " + expected);
            if (rc != LY_SUCCESS && why.find(expected) == std::string::npos)
                out.push_back(name + ": refused without \"" + expected + "\": " + why);
        }
    }
    return out;
}

// ---- Tests ----

TEST(SonicYang, OurModulesLoadWithoutWarnings) {
    std::string problem;
    Ctx ctx = loadModels(kStubs, problem);
    ASSERT_TRUE(ctx) << problem;
    EXPECT_EQ(errors(ctx.get()), "");  // libyang keeps its warnings there too
}

// The same checks on our stand-ins (always) and on SONiC's own models (when there).
class SonicYangOn : public ::testing::TestWithParam<fs::path> {
  protected:
    void SetUp() override {
        if (!fs::exists(GetParam())) GTEST_SKIP() << GetParam() << " absent";
        std::string problem;
        ctx_ = loadModels(GetParam(), problem);
        ASSERT_TRUE(ctx_) << problem;
    }
    Ctx ctx_;
};

TEST_P(SonicYangOn, TablesAndFieldsMatchTheSchemas) {
    auto diff = compareAll(ctx_.get());
    EXPECT_TRUE(diff.empty()) << lines(diff);
}

TEST_P(SonicYangOn, InstancesValidateOrFailAsExpected) {
    auto bad = checkCases(ctx_.get());
    EXPECT_TRUE(bad.empty()) << lines(bad);
}

INSTANTIATE_TEST_SUITE_P(Models, SonicYangOn, ::testing::Values(kStubs, kSonicModels),
                         [](const auto& which) { return which.index == 0 ? "StandIns" : "Sonic"; });

}  // namespace
