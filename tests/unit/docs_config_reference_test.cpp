// docs/configuration.md is the one configuration reference: every table and field of
// proto/<daemon>_config.schema.json must be documented there, under the daemon's own
// section, and nothing may be documented that the schema lacks. Where the schema gives a
// non-empty default, the reference's default column must show the same value.
//
// How the reference is read (the shape docs/configuration.md keeps):
//   ## <daemon>                a daemon's section ("## hostrouted"); any other "## " ends it
//   ### `TABLE|key`            a table's rows; `<...>` as the key means any key (a schema's
//                              additionalProperties), a literal key is that key ("global")
//   | `field` | type | default | ...   a field of that table, one row each
// Any other heading ends the table. Fenced code blocks are skipped.
//
// The schemas: for each table in "properties", its "properties" (rows with fixed keys,
// such as "global") or its "additionalProperties" (rows keyed by a port, an address...),
// each row's "properties" being the fields.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kSource = TWINRAIL_SOURCE_DIR;
constexpr const char* kReference = "docs/configuration.md";

// A row of a table: "HOSTROUTED|global", or "PATHQD_PORT|*" for rows of any key.
struct Field {
    std::string defaultValue;  // the schema's default, or the reference's first `value`
    bool hasDefault = false;
};

struct Table {
    std::string daemon;
    std::map<std::string, Field> fields;
};

using Tables = std::map<std::string, Table>;  // by "TABLE|key"

std::string readFile(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string trim(const std::string& s) {
    auto begin = s.find_first_not_of(" \t");
    if (begin == std::string::npos) return "";
    auto end = s.find_last_not_of(" \t");
    return s.substr(begin, end - begin + 1);
}

// The first `...` span of `text`, and whether there is one.
bool firstCode(const std::string& text, std::string& out) {
    auto open = text.find('`');
    if (open == std::string::npos) return false;
    auto close = text.find('`', open + 1);
    if (close == std::string::npos) return false;
    out = text.substr(open + 1, close - open - 1);
    return true;
}

// "`TABLE|<port>`" -> "TABLE|*"; "`TABLE|global`" -> "TABLE|global"; else "".
std::string tableKey(const std::string& heading) {
    std::string code;
    if (!firstCode(heading, code)) return "";
    auto bar = code.find('|');
    if (bar == std::string::npos || bar == 0) return "";
    std::string key = code.substr(bar + 1);
    if (key.size() >= 2 && key.front() == '<' && key.back() == '>') key = "*";
    return code.substr(0, bar) + "|" + key;
}

// The cells of a markdown table row "| a | b |" (without the outer bars).
std::vector<std::string> cells(const std::string& line) {
    std::vector<std::string> out;
    std::string body = trim(line);
    if (body.size() < 2 || body.front() != '|') return out;
    body = body.substr(1);
    if (!body.empty() && body.back() == '|') body.pop_back();
    std::string cell;
    bool inCode = false;
    for (char c : body) {
        if (c == '`') inCode = !inCode;
        if (c == '|' && !inCode) {
            out.push_back(trim(cell));
            cell.clear();
        } else {
            cell += c;
        }
    }
    out.push_back(trim(cell));
    return out;
}

// The tables and fields the reference documents; problems it has on its own (a field
// twice, a field outside a table) go to `problems`.
Tables parseReference(const std::string& text, std::vector<std::string>& problems) {
    Tables tables;
    std::string daemon, table;
    std::istringstream in(text);
    std::string line;
    bool fenced = false;
    int lineNo = 0;
    while (std::getline(in, line)) {
        ++lineNo;
        const std::string at = std::string(kReference) + ":" + std::to_string(lineNo) + ": ";
        if (line.rfind("```", 0) == 0 || line.rfind("~~~", 0) == 0) {
            fenced = !fenced;
            continue;
        }
        if (fenced) continue;
        if (line.rfind("## ", 0) == 0) {
            daemon = trim(line.substr(3));
            table.clear();
            continue;
        }
        if (line.rfind("### ", 0) == 0) {
            table = tableKey(line);
            if (!table.empty()) {
                if (tables.count(table) != 0) problems.push_back(at + "table " + table + " twice");
                tables[table].daemon = daemon;
            }
            continue;
        }
        if (!line.empty() && line[0] == '#') {
            table.clear();
            continue;
        }
        auto row = cells(line);
        std::string name;
        if (row.size() < 3 || row[0].size() < 3 || row[0].front() != '`' || row[0].back() != '`' ||
            !firstCode(row[0], name))
            continue;
        if (table.empty()) continue;  // a table of values or examples, not of fields
        auto& fields = tables[table].fields;
        if (fields.count(name) != 0) {
            problems.push_back(at + table + " field " + name + " twice");
            continue;
        }
        Field f;
        f.hasDefault = firstCode(row[2], f.defaultValue);
        fields[name] = f;
    }
    return tables;
}

void addRows(const std::string& daemon, const std::string& key, const json& row, Tables& out) {
    Table& t = out[key];
    t.daemon = daemon;
    if (!row.is_object() || !row.contains("properties")) return;
    for (const auto& [name, spec] : row["properties"].items()) {
        Field f;
        if (spec.is_object() && spec.contains("default") && spec["default"].is_string() &&
            !spec["default"].get<std::string>().empty()) {
            f.defaultValue = spec["default"].get<std::string>();
            f.hasDefault = true;
        }
        t.fields[name] = f;
    }
}

// The tables and fields of one daemon's config schema.
Tables schemaTables(const std::string& daemon, const json& schema) {
    Tables tables;
    if (!schema.contains("properties")) return tables;
    for (const auto& [table, spec] : schema["properties"].items()) {
        if (spec.contains("properties")) {
            for (const auto& [key, row] : spec["properties"].items())
                addRows(daemon, table + "|" + key, row, tables);
        }
        if (spec.contains("additionalProperties") && spec["additionalProperties"].is_object())
            addRows(daemon, table + "|*", spec["additionalProperties"], tables);
    }
    return tables;
}

std::string shown(const std::string& key) {
    auto bar = key.find('|');
    if (bar != std::string::npos && key.substr(bar + 1) == "*")
        return key.substr(0, bar) + "|<key>";
    return key;
}

// Every difference between the schemas' tables and the reference's, one line each,
// naming the table and field.
std::vector<std::string> compare(const Tables& schema, const Tables& reference) {
    std::vector<std::string> out;
    const std::string ref = kReference;
    for (const auto& [key, table] : schema) {
        const std::string from = "proto/" + table.daemon + "_config.schema.json";
        auto it = reference.find(key);
        if (it == reference.end()) {
            out.push_back(ref + " has no section `" + shown(key) + "` (a table of " + from + ")");
            continue;
        }
        if (it->second.daemon != table.daemon) {
            out.push_back(ref + " documents `" + shown(key) + "` under \"## " + it->second.daemon +
                          "\", not \"## " + table.daemon + "\" (" + from + ")");
        }
        for (const auto& [name, field] : table.fields) {
            auto doc = it->second.fields.find(name);
            if (doc == it->second.fields.end()) {
                out.push_back(ref + " lacks " + shown(key) + " field " + name + " (in " + from +
                              ")");
                continue;
            }
            if (field.hasDefault &&
                (!doc->second.hasDefault || doc->second.defaultValue != field.defaultValue)) {
                out.push_back(ref + ": " + shown(key) + " field " + name + " default is `" +
                              (doc->second.hasDefault ? doc->second.defaultValue : "") + "`, " +
                              from + " says \"" + field.defaultValue + "\"");
            }
        }
        for (const auto& [name, field] : it->second.fields) {
            if (table.fields.count(name) == 0) {
                out.push_back(ref + " documents " + shown(key) + " field " + name + ", which " +
                              from + " lacks");
            }
        }
    }
    for (const auto& [key, table] : reference) {
        if (schema.count(key) == 0) {
            out.push_back(ref + " documents table `" + shown(key) + "` (under \"## " +
                          table.daemon + "\"), which no proto/*_config.schema.json has");
        }
    }
    return out;
}

// Every proto/<daemon>_config.schema.json, merged.
Tables allSchemas(std::vector<std::string>& problems, std::set<std::string>& daemons) {
    Tables all;
    const std::string suffix = "_config.schema.json";
    for (const auto& entry : fs::directory_iterator(kSource / "proto")) {
        std::string file = entry.path().filename().string();
        if (file.size() <= suffix.size() || !file.ends_with(suffix)) continue;
        std::string daemon = file.substr(0, file.size() - suffix.size());
        json schema = json::parse(readFile(entry.path()), nullptr, false);
        if (schema.is_discarded()) {
            problems.push_back("proto/" + file + " is not valid JSON");
            continue;
        }
        daemons.insert(daemon);
        for (auto& [key, table] : schemaTables(daemon, schema)) {
            if (all.count(key) != 0) problems.push_back("table " + key + " in two schemas");
            all[key] = table;
        }
    }
    return all;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    return out;
}

TEST(DocsConfigReference, EveryDaemonHasAConfigSchema) {
    std::vector<std::string> problems;
    std::set<std::string> daemons;
    allSchemas(problems, daemons);
    for (const auto& entry : fs::directory_iterator(kSource / "daemons")) {
        if (!fs::exists(entry.path() / "config.cpp")) continue;
        std::string daemon = entry.path().filename().string();
        EXPECT_EQ(daemons.count(daemon), 1U) << "daemons/" << daemon << "/config.cpp has no proto/"
                                             << daemon << "_config.schema.json";
    }
}

TEST(DocsConfigReference, MatchesTheSchemas) {
    std::vector<std::string> problems;
    std::set<std::string> daemons;
    Tables schema = allSchemas(problems, daemons);
    ASSERT_FALSE(schema.empty()) << "no proto/*_config.schema.json under " << kSource;
    std::string text = readFile(kSource / kReference);
    ASSERT_FALSE(text.empty()) << kSource / kReference << " is missing or empty";
    Tables reference = parseReference(text, problems);
    auto diff = compare(schema, reference);
    problems.insert(problems.end(), diff.begin(), diff.end());
    EXPECT_TRUE(problems.empty()) << joined(problems);
}

// The checker itself: a schema and a reference that disagree are caught, both ways.
const char* const kSchema = R"({"properties": {
  "DEMO": {"properties": {"global": {"properties": {
      "alpha": {"default": "1"}, "beta": {}}}}},
  "DEMO_PORT": {"additionalProperties": {"properties": {"role": {}}}}}})";

const char* const kGoodReference = R"(# Reference

## demo

```json
{"DEMO": {"global": {"gamma": "ignored in a code block"}}}
```

### `DEMO|global`

| field | type | default | range | meaning | run time |
|---|---|---|---|---|---|
| `alpha` | integer | `1` | 1-2 | a `|` inside code | yes |
| `beta` | boolean | unset | | b | yes |

### `DEMO_PORT|<port>`

| field | type | default | range | meaning | run time |
|---|---|---|---|---|---|
| `role` | string | (required) | | r | yes |

## Values

| type | written as |
|---|---|
| `integer` | whole numbers |
)";

std::vector<std::string> check(const std::string& referenceText) {
    std::vector<std::string> problems;
    Tables reference = parseReference(referenceText, problems);
    auto diff = compare(schemaTables("demo", json::parse(kSchema)), reference);
    problems.insert(problems.end(), diff.begin(), diff.end());
    return problems;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
}

TEST(DocsConfigReference, CheckerAcceptsAMatchingReference) {
    EXPECT_EQ(check(kGoodReference), std::vector<std::string>{});
}

TEST(DocsConfigReference, CheckerNamesAFieldTheReferenceLacks) {
    auto problems =
        check(replaced(kGoodReference, "| `beta` | boolean | unset | | b | yes |\n", ""));
    ASSERT_EQ(problems.size(), 1U) << joined(problems);
    EXPECT_NE(problems[0].find("lacks DEMO|global field beta"), std::string::npos) << problems[0];
}

TEST(DocsConfigReference, CheckerNamesAFieldTheSchemaLacks) {
    auto problems = check(replaced(kGoodReference, "| `role` |", "| `roll` |"));
    ASSERT_EQ(problems.size(), 2U) << joined(problems);
    EXPECT_NE(problems[0].find("lacks DEMO_PORT|<key> field role"), std::string::npos);
    EXPECT_NE(problems[1].find("documents DEMO_PORT|<key> field roll"), std::string::npos);
}

TEST(DocsConfigReference, CheckerNamesAMissingOrExtraTable) {
    auto problems =
        check(replaced(kGoodReference, "### `DEMO_PORT|<port>`", "### `DEMO_PORTS|<port>`"));
    ASSERT_EQ(problems.size(), 2U) << joined(problems);
    EXPECT_NE(problems[0].find("no section `DEMO_PORT|<key>`"), std::string::npos);
    EXPECT_NE(problems[1].find("table `DEMO_PORTS|<key>`"), std::string::npos);
}

TEST(DocsConfigReference, CheckerNamesAWrongDefaultAndAWrongDaemon) {
    auto problems = check(replaced(
        replaced(kGoodReference, "| integer | `1` |", "| integer | `2` |"), "## demo", "## other"));
    ASSERT_EQ(problems.size(), 3U) << joined(problems);
    EXPECT_NE(joined(problems).find("field alpha default is `2`"), std::string::npos);
    EXPECT_NE(joined(problems).find("under \"## other\""), std::string::npos);
}

TEST(DocsConfigReference, CheckerNamesAFieldDocumentedTwice) {
    auto problems = check(
        replaced(kGoodReference, "| `beta` |", "| `alpha` | x | `1` | | a | yes |\n| `beta` |"));
    ASSERT_EQ(problems.size(), 1U) << joined(problems);
    EXPECT_NE(problems[0].find("DEMO|global field alpha twice"), std::string::npos);
}

}  // namespace
