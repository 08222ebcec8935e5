// What the YANG model tests share (sonic_yang_schema_test.cpp, sonic_yang_compare_test.cpp):
// twinrail's modules loaded with libyang, each read back into tables of fields, and the
// comparison with the JSON Schemas the daemons' configs follow.
#pragma once

#include <libyang/libyang.h>

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace twinrail::sonic_yang_test {

namespace fs = std::filesystem;
using nlohmann::json;

inline const fs::path kSource = TWINRAIL_SOURCE_DIR;
inline const fs::path kStubs = kSource / "tests/fixtures/sonic-yang-stubs";
inline const fs::path kSonicModels = TWINRAIL_SONIC_YANG_SHARED;

// Each of our modules and the schema it must match.
inline const std::vector<std::pair<std::string, std::string>> kPairs = {
    {"sonic-hostrouted", "hostrouted_config.schema.json"},
    {"sonic-pathqd", "pathqd_config.schema.json"},
    {"sonic-planesteer", "planesteer_config.schema.json"},
    {"sonic-hostrouted-state", "hostrouted_state.schema.json"},
    {"sonic-pathqd-state", "pathqd_state.schema.json"},
};

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

struct CtxFree {
    void operator()(ly_ctx* ctx) const { ly_ctx_destroy(ctx); }
};
using Ctx = std::unique_ptr<ly_ctx, CtxFree>;

std::string readFile(const fs::path& path);

// A schema's tables: fixed keys ("global") from "properties", any key from
// "additionalProperties".
Tables schemaTables(const json& root);

// A module's tables, and where it breaks SONiC's layout (top container named like the
// module, one container per table, a fixed key as a container, rows as <TABLE>_LIST).
Tables moduleTables(const lys_module* mod, std::vector<std::string>& problems);

// Every difference between a schema's tables and a module's, one line each, naming the
// table and field.
std::vector<std::string> compare(const Tables& schema, const Tables& yang);

// libyang's messages kept in `ctx`, one a line.
std::string errors(const ly_ctx* ctx);

// A context with SONiC's modules (or our stand-ins) from `sonicDir` and our three modules;
// nullptr and `problem` set when something does not load.
Ctx loadModels(const fs::path& sonicDir, std::string& problem);

// proto/<file>, discarded when it is not JSON.
json loadSchema(const std::string& file);

// Every module of kPairs against its schema, one line a difference.
std::vector<std::string> compareAll(const ly_ctx* ctx);

std::string lines(const std::vector<std::string>& items);

}  // namespace twinrail::sonic_yang_test
