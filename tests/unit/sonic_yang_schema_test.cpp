// twinrail's YANG models (proto/sonic-*.yang) against the JSON Schemas
// (proto/*_config.schema.json) and against libyang, SONiC's validator.
//
// SONiC refuses CONFIG_DB tables without a YANG model, so every table twinrail owns has
// one; the schemas and docs/configuration.md are the reference, so the models must say
// the same: the same tables, fields, type class (integer, number, boolean, enum, string),
// ranges, enums, defaults and mandatory fields. The comparison is a pure function of a
// schema and a compiled module, and is itself tested: a field, a range or a default
// changed on one side only is caught.
//
// Our modules import sonic-port and sonic-vlan (leafrefs to PORT and VLAN). The test loads
// them twice: with our own stand-ins (tests/fixtures/sonic-yang-stubs: the same module
// names and paths, nothing of SONiC's), so a fresh clone tests the same code, and with
// SONiC's real models next to the checkout when they are there (skipped otherwise).
// tests/fixtures/sonic-yang-own/cases.json holds valid and invalid YANG-JSON instances of
// every table, each invalid one with a part of the error libyang must give.
#include <gtest/gtest.h>
#include <libyang/libyang.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kSource = TWINRAIL_SOURCE_DIR;
const fs::path kStubs = kSource / "tests/fixtures/sonic-yang-stubs";
const fs::path kCases = kSource / "tests/fixtures/sonic-yang-own/cases.json";
const fs::path kSonicModels = TWINRAIL_SONIC_YANG_SHARED;

// Each of our modules and the schema it must match.
const std::vector<std::pair<std::string, std::string>> kPairs = {
    {"sonic-hostrouted", "hostrouted_config.schema.json"},
    {"sonic-pathqd", "pathqd_config.schema.json"},
    {"sonic-planesteer", "planesteer_config.schema.json"},
    {"sonic-hostrouted-state", "hostrouted_state.schema.json"},
    {"sonic-pathqd-state", "pathqd_state.schema.json"},
};

// Fields a schema allows that never reach YANG: SONiC's translator drops the "NULL"
// marker of a row without fields (sonic_yang_ext does the same), so no model has it.
const std::set<std::string> kDroppedByTranslator = {"NULL"};

std::string readFile(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// What one field allows, as either side can say it.
struct FieldSpec {
    std::string type;  // integer, number, boolean, enum or string
    std::optional<double> min, max;
    std::set<double> points;  // the allowed values, when a set (a power of two...)
    std::set<std::string> enums;
    std::string dflt;  // empty: none
    bool mandatory = false;
};
using Row = std::map<std::string, FieldSpec>;
using Tables = std::map<std::string, Row>;  // by "TABLE|global", or "TABLE|*" for a list

// ---- The JSON Schema side ----

// `spec` with its local "$ref"s (and theirs) merged in; the field's own keywords win.
json resolved(const json& spec, const json& root) {
    json out = spec;
    for (int depth = 0; depth < 8 && out.contains("$ref"); ++depth) {
        std::string ref = out["$ref"].get<std::string>();
        out.erase("$ref");
        const json::json_pointer at(ref.rfind('#', 0) == 0 ? ref.substr(1) : "/missing");
        if (!root.contains(at)) break;  // not a local $defs: no keywords to merge
        for (const auto& [key, value] : root.at(at).items())
            if (!out.contains(key)) out[key] = value;
    }
    return out;
}

void addTypes(const json& spec, std::set<std::string>& types) {
    if (!spec.contains("type")) return;
    if (spec["type"].is_string()) types.insert(spec["type"].get<std::string>());
    if (spec["type"].is_array())
        for (const auto& t : spec["type"]) types.insert(t.get<std::string>());
}

FieldSpec fromSchema(const json& raw, const json& root, bool mandatory) {
    json spec = resolved(raw, root);
    FieldSpec f;
    f.mandatory = mandatory;
    std::set<std::string> types;
    addTypes(spec, types);
    std::vector<json> alternatives = {spec};
    if (spec.contains("anyOf")) {
        for (const auto& alt : spec["anyOf"]) {
            alternatives.push_back(resolved(alt, root));
            addTypes(alternatives.back(), types);
        }
    }
    for (const auto& alt : alternatives) {
        if (!alt.contains("enum")) continue;
        for (const auto& v : alt["enum"]) {
            if (v.is_number()) f.points.insert(v.get<double>());
            if (v.is_string()) f.enums.insert(v.get<std::string>());
        }
    }
    if (types.count("boolean") != 0) {
        f.type = "boolean";  // its enum lists the spellings, not choices
    } else if (types.count("integer") != 0) {
        f.type = "integer";
    } else if (types.count("number") != 0) {
        f.type = "number";
    } else {
        f.type = f.enums.empty() ? "string" : "enum";
    }
    if (f.type != "enum") f.enums.clear();
    if (spec.contains("minimum")) f.min = spec["minimum"].get<double>();
    if (spec.contains("maximum")) f.max = spec["maximum"].get<double>();
    if (spec.contains("default") && spec["default"].is_string())
        f.dflt = spec["default"].get<std::string>();
    return f;
}

void addSchemaRow(const std::string& key, const json& row, const json& root, Tables& out) {
    Row& fields = out[key];
    if (!row.contains("properties")) return;
    std::set<std::string> required;
    if (row.contains("required"))
        for (const auto& name : row["required"]) required.insert(name.get<std::string>());
    for (const auto& [name, spec] : row["properties"].items()) {
        if (kDroppedByTranslator.count(name) != 0) continue;
        fields[name] = fromSchema(spec, root, required.count(name) != 0);
    }
}

// A schema's tables: fixed keys ("global") from "properties", any key from
// "additionalProperties".
Tables schemaTables(const json& root) {
    Tables tables;
    for (const auto& [table, spec] : root["properties"].items()) {
        if (spec.contains("properties")) {
            for (const auto& [key, row] : spec["properties"].items())
                addSchemaRow(table + "|" + key, row, root, tables);
        }
        if (spec.contains("additionalProperties") && spec["additionalProperties"].is_object())
            addSchemaRow(table + "|*", spec["additionalProperties"], root, tables);
    }
    return tables;
}

// ---- The YANG side ----

void addRange(const lysc_range* range, LY_DATA_TYPE base, uint8_t fractionDigits, FieldSpec& f) {
    const bool isUnsigned = base < LY_TYPE_DEC64;
    const double scale = std::pow(10.0, fractionDigits);
    auto bound = [&](int64_t s, uint64_t u) {
        return isUnsigned ? static_cast<double>(u) : static_cast<double>(s) / scale;
    };
    if (range == nullptr) return;  // our modules state every range, as the schemas do
    LY_ARRAY_COUNT_TYPE count = LY_ARRAY_COUNT(range->parts);
    if (count == 1) {
        f.min = bound(range->parts[0].min_64, range->parts[0].min_u64);
        f.max = bound(range->parts[0].max_64, range->parts[0].max_u64);
        return;
    }
    for (LY_ARRAY_COUNT_TYPE i = 0; i < count; ++i)
        f.points.insert(bound(range->parts[i].min_64, range->parts[i].min_u64));
}

FieldSpec fromLeaf(const ly_ctx* ctx, const lysc_node* node) {
    const auto* leaf = reinterpret_cast<const lysc_node_leaf*>(node);
    const lysc_type* type = leaf->type;
    FieldSpec f;
    f.mandatory = (node->flags & LYS_MAND_TRUE) != 0;
    const LY_DATA_TYPE base = type->basetype;
    if (base == LY_TYPE_DEC64) {
        const auto* dec = reinterpret_cast<const lysc_type_dec*>(type);
        f.type = "number";
        addRange(dec->range, base, dec->fraction_digits, f);
    } else if ((base >= LY_TYPE_UINT8 && base <= LY_TYPE_UINT64) ||
               (base >= LY_TYPE_INT8 && base <= LY_TYPE_INT64)) {
        f.type = "integer";
        addRange(reinterpret_cast<const lysc_type_num*>(type)->range, base, 0, f);
    } else if (base == LY_TYPE_BOOL) {
        f.type = "boolean";
    } else if (base == LY_TYPE_ENUM) {
        f.type = "enum";
        const auto* en = reinterpret_cast<const lysc_type_enum*>(type);
        for (LY_ARRAY_COUNT_TYPE i = 0; i < LY_ARRAY_COUNT(en->enums); ++i)
            f.enums.insert(en->enums[i].name);
    } else {
        f.type = "string";  // string, union, leafref, inet types
    }
    if (leaf->dflt != nullptr) f.dflt = lyd_value_get_canonical(ctx, leaf->dflt);
    return f;
}

// A module's tables, and where it breaks SONiC's layout (top container named like the
// module, one container per table, a fixed key as a container, rows as <TABLE>_LIST).
Tables moduleTables(const lys_module* mod, std::vector<std::string>& problems) {
    Tables tables;
    const lysc_node* top = mod->compiled != nullptr ? mod->compiled->data : nullptr;
    if (top == nullptr || top->nodetype != LYS_CONTAINER || mod->name != std::string(top->name)) {
        problems.push_back(std::string(mod->name) + ": no top container named like the module");
        return tables;
    }
    for (const lysc_node* table = lysc_node_child(top); table; table = table->next) {
        const std::string name = table->name;
        if (table->nodetype != LYS_CONTAINER) {
            problems.push_back(std::string(mod->name) + ": table " + name + " is no container");
            continue;
        }
        for (const lysc_node* row = lysc_node_child(table); row; row = row->next) {
            std::string key = name + "|" + row->name;
            if (row->nodetype == LYS_LIST) {
                key = name + "|*";
                if (row->name != name + "_LIST")
                    problems.push_back(name + ": list " + row->name + " is not " + name + "_LIST");
            } else if (row->nodetype != LYS_CONTAINER) {
                problems.push_back(name + ": " + row->name + " is neither a list nor a key");
                continue;
            }
            Row& fields = tables[key];
            for (const lysc_node* leaf = lysc_node_child(row); leaf; leaf = leaf->next) {
                if (lysc_is_key(leaf)) continue;
                if (leaf->nodetype != LYS_LEAF) {
                    problems.push_back(key + ": " + leaf->name + " is not a leaf");
                    continue;
                }
                fields[leaf->name] = fromLeaf(mod->ctx, leaf);
            }
        }
    }
    return tables;
}

// ---- The comparison ----

bool same(double a, double b) {
    return std::fabs(a - b) <= 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)});
}

std::string joined(const std::set<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
    return "{" + out + "}";
}

std::string shown(const std::optional<double>& v) {
    if (!v) return "none";
    std::ostringstream out;
    out.precision(12);
    out << *v;
    return out.str();
}

void compareField(const std::string& where, const FieldSpec& s, const FieldSpec& y,
                  std::vector<std::string>& out) {
    if (s.type != y.type) {
        out.push_back(where + ": type " + y.type + " in YANG, " + s.type + " in the schema");
        return;
    }
    if (s.enums != y.enums)
        out.push_back(where + ": enum " + joined(y.enums) + " in YANG, " + joined(s.enums));
    auto differs = [](const std::optional<double>& a, const std::optional<double>& b) {
        return a.has_value() != b.has_value() || (a && !same(*a, *b));
    };
    if (differs(s.min, y.min) || differs(s.max, y.max)) {
        out.push_back(where + ": range " + shown(y.min) + ".." + shown(y.max) + " in YANG, " +
                      shown(s.min) + ".." + shown(s.max) + " in the schema");
    }
    if (s.points.size() != y.points.size() ||
        !std::equal(s.points.begin(), s.points.end(), y.points.begin(), same))
        out.push_back(where + ": the set of allowed values differs");
    bool numeric = s.type == "integer" || s.type == "number";
    bool dfltDiffers = s.dflt.empty() != y.dflt.empty() ||
                       (!s.dflt.empty() && (numeric ? !same(std::strtod(s.dflt.c_str(), nullptr),
                                                            std::strtod(y.dflt.c_str(), nullptr))
                                                    : s.dflt != y.dflt));
    if (dfltDiffers)
        out.push_back(where + ": default \"" + y.dflt + "\" in YANG, \"" + s.dflt + "\"");
    if (s.mandatory != y.mandatory) {
        out.push_back(where + std::string(": mandatory in ") +
                      (y.mandatory ? "YANG" : "the schema") + " only");
    }
}

// Every difference between a schema's tables and a module's, one line each, naming the
// table and field.
std::vector<std::string> compare(const Tables& schema, const Tables& yang) {
    std::vector<std::string> out;
    for (const auto& [key, row] : schema) {
        auto it = yang.find(key);
        if (it == yang.end()) {
            out.push_back(key + ": in the schema, not in YANG");
            continue;
        }
        for (const auto& [name, spec] : row) {
            auto leaf = it->second.find(name);
            if (leaf == it->second.end()) {
                out.push_back(key + " field " + name + ": in the schema, not in YANG");
                continue;
            }
            compareField(key + " field " + name, spec, leaf->second, out);
        }
        for (const auto& [name, spec] : it->second)
            if (row.count(name) == 0) out.push_back(key + " field " + name + ": in YANG only");
    }
    for (const auto& [key, row] : yang)
        if (schema.count(key) == 0) out.push_back(key + ": in YANG, not in the schema");
    return out;
}

// ---- Loading with libyang ----

struct CtxFree {
    void operator()(ly_ctx* ctx) const { ly_ctx_destroy(ctx); }
};
using Ctx = std::unique_ptr<ly_ctx, CtxFree>;

std::string errors(const ly_ctx* ctx) {
    std::string out;
    for (const ly_err_item* e = ly_err_first(ctx); e != nullptr; e = e->next) {
        out += std::string(e->msg != nullptr ? e->msg : "") + " (" +
               (e->path != nullptr ? e->path : "") + ")\n";
    }
    return out;
}

// A context with SONiC's modules (or our stand-ins) from `sonicDir` and our three modules;
// nullptr and `problem` set when something does not load.
Ctx loadModels(const fs::path& sonicDir, std::string& problem) {
    ly_log_options(LY_LOSTORE);  // keep messages in the context: each test reads its own
    ly_ctx* raw = nullptr;
    if (ly_ctx_new(sonicDir.c_str(), 0, &raw) != LY_SUCCESS) {
        problem = "no libyang context";
        return nullptr;
    }
    Ctx ctx(raw);
    // Implemented, so data may hold PORT and VLAN rows for our leafrefs to point at;
    // SONiC's sonic-port has a `when` on DEVICE_METADATA.
    for (const char* name : {"sonic-port", "sonic-vlan", "sonic-device_metadata"}) {
        if (!fs::exists(sonicDir / (std::string(name) + ".yang"))) continue;
        if (ly_ctx_load_module(ctx.get(), name, nullptr, nullptr) == nullptr) {
            problem = std::string(name) + " does not load: " + errors(ctx.get());
            return nullptr;
        }
    }
    ly_err_clean(ctx.get(), nullptr);
    for (const auto& [name, schema] : kPairs) {
        const fs::path path = kSource / "proto" / (name + ".yang");
        if (lys_parse_path(ctx.get(), path.c_str(), LYS_IN_YANG, nullptr) != LY_SUCCESS) {
            problem = path.string() + " does not load: " + errors(ctx.get());
            return nullptr;
        }
    }
    return ctx;
}

json loadSchema(const std::string& file) {
    return json::parse(readFile(kSource / "proto" / file), nullptr, false);
}

std::vector<std::string> compareAll(const ly_ctx* ctx) {
    std::vector<std::string> out;
    for (const auto& [name, file] : kPairs) {
        const lys_module* mod = ly_ctx_get_module_implemented(ctx, name.c_str());
        json schema = loadSchema(file);
        if (mod == nullptr || schema.is_discarded()) {
            out.push_back(name + " or proto/" + file + " is missing");
            continue;
        }
        Tables yang = moduleTables(mod, out);
        for (const auto& line : compare(schemaTables(schema), yang))
            out.push_back(name + ".yang vs " + file + ": " + line);
    }
    return out;
}

std::string lines(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += i + "\n";
    return out;
}

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
