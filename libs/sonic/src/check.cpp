#include "twinrail/sonic/check.h"

#include <algorithm>

#include "twinrail/sonic/translate.h"

namespace twinrail::sonic {
namespace {

struct Step {
    std::string name;
    std::vector<std::string> predicateValues;  // [k='v'][k2='v2'] in key order
};

// Splits an XPath-like data path on '/' outside predicates and quotes.
std::vector<Step> parsePath(const std::string& path) {
    std::vector<Step> steps;
    std::size_t i = 0;
    while (i < path.size()) {
        if (path[i] == '/') {
            ++i;
            continue;
        }
        Step step;
        while (i < path.size() && path[i] != '/' && path[i] != '[') step.name += path[i++];
        while (i < path.size() && path[i] == '[') {
            std::size_t eq = path.find('=', i);
            if (eq == std::string::npos || eq + 1 >= path.size()) return steps;
            char quote = path[eq + 1];
            std::size_t close = path.find(quote, eq + 2);
            if ((quote != '\'' && quote != '"') || close == std::string::npos) return steps;
            step.predicateValues.push_back(path.substr(eq + 2, close - eq - 2));
            i = path.find(']', close);
            if (i == std::string::npos) return steps;
            ++i;
        }
        steps.push_back(std::move(step));
    }
    return steps;
}

std::string localName(const std::string& name) {
    auto colon = name.find(':');
    return colon == std::string::npos ? name : name.substr(colon + 1);
}

std::string joinKey(const std::vector<std::string>& parts) {
    std::string key;
    for (const auto& p : parts) key += (key.empty() ? "" : "|") + p;
    return key;
}

std::string firstQuoted(const std::string& text) {
    auto open = text.find('"');
    if (open == std::string::npos) return "";
    auto close = text.find('"', open + 1);
    return close == std::string::npos ? "" : text.substr(open + 1, close - open - 1);
}

std::vector<std::string> splitKey(const std::string& key) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (std::size_t pos; (pos = key.find('|', start)) != std::string::npos; start = pos + 1)
        parts.push_back(key.substr(start, pos - start));
    parts.push_back(key.substr(start));
    return parts;
}

bool holds(const nlohmann::json& value, const std::string& text) {
    if (value.is_string()) {
        const std::string v = value.get<std::string>();
        if (v == text) return true;
        std::size_t start = 0;
        for (std::size_t pos; (pos = v.find(',', start)) != std::string::npos; start = pos + 1)
            if (v.compare(start, pos - start, text) == 0) return true;
        return v.compare(start, std::string::npos, text) == 0;
    }
    if (value.is_array()) {
        for (const auto& item : value)
            if (holds(item, text)) return true;
        return false;
    }
    return (value.is_number() || value.is_boolean()) && value.dump() == text;
}

// libyang reports an error found while parsing a list entry before the entry has its
// keys, so its path has none: the row is the first one the message fits (the missing
// field, the bad key part, or the bad value it quotes). "" when none does.
std::string findRow(const nlohmann::json& configDb, const std::string& table,
                    const SchemaNode& list, const std::string& field, const std::string& message) {
    if (!configDb.is_object() || !configDb.contains(table) || !configDb[table].is_object())
        return "";
    const bool mandatory = message.rfind("Mandatory node \"", 0) == 0;
    const std::string quoted = firstQuoted(message);
    auto keyAt = std::find(list.keys.begin(), list.keys.end(), field);
    for (const auto& [key, row] : configDb[table].items()) {
        auto parts = splitKey(key);
        if (parts.size() != list.keys.size()) continue;
        if (mandatory) {
            if (!row.is_object() || !row.contains(field)) return key;
        } else if (keyAt != list.keys.end()) {
            if (parts[static_cast<std::size_t>(keyAt - list.keys.begin())] == quoted) return key;
        } else if (row.is_object() && row.contains(field) && holds(row[field], quoted)) {
            return key;
        }
    }
    return "";
}

// Takes what a problem names out of the document; false when nothing was there.
bool remove(nlohmann::json& doc, const Problem& p) {
    if (!doc.is_object() || !doc.contains(p.table)) return false;
    nlohmann::json& table = doc[p.table];
    if (!p.key.empty() && table.is_object() && table.contains(p.key)) {
        nlohmann::json& row = table[p.key];
        if (!p.field.empty() && row.is_object() && row.contains(p.field)) {
            row.erase(p.field);
            if (row.empty()) row["NULL"] = "NULL";  // keep the row, as CONFIG_DB does
            return true;
        }
        table.erase(p.key);
        return true;
    }
    return false;  // an error above the rows: nothing smaller to take out, so stop here
}

}  // namespace

std::string CheckReport::missingModelsLine() const {
    std::string names;
    for (const auto& t : tablesWithoutModel) names += (names.empty() ? "'" : ", '") + t + "'";
    return "Config tables are missing yang models: dict_keys([" + names + "])";
}

Problem locateError(const YangError& error, const SchemaModel& schema,
                    const nlohmann::json& configDb) {
    Problem p{"", "", "", error.message};
    auto steps = parsePath(error.path);
    if (steps.size() < 2) return p;
    p.table = localName(steps[1].name);
    const TableModel* model = schema.table(p.table);
    if (steps.size() < 3) return p;
    const Step& row = steps[2];
    const SchemaNode* rowNode = model ? model->container.child(localName(row.name)) : nullptr;
    std::size_t fieldAt = 3;
    if (rowNode != nullptr && rowNode->kind == SchemaNode::Kind::Container) {
        p.key = rowNode->name;  // a fixed key: "localhost", "global"
    } else if (!row.predicateValues.empty()) {
        p.key = joinKey(row.predicateValues);
    }  // else: a list step without keys; findRow() below finds the row
    if (steps.size() > fieldAt) {
        const Step& field = steps[fieldAt];
        // A type-1 map's inner entry is named by its key ("DSCP_TO_TC_MAP[dscp='1']").
        p.field = field.predicateValues.empty() || rowNode == nullptr ||
                          rowNode->kind != SchemaNode::Kind::List ||
                          rowNode->childrenOf(SchemaNode::Kind::List).empty()
                      ? localName(field.name)
                      : field.predicateValues.front();
    }
    if (error.message.rfind("Mandatory node \"", 0) == 0) p.field = firstQuoted(error.message);
    if (p.key.empty() && rowNode != nullptr && rowNode->kind == SchemaNode::Kind::List) {
        p.key = findRow(configDb, p.table, *rowNode, p.field, error.message);
        // A bad key part: the key itself is what is wrong, not a field.
        if (!p.key.empty() &&
            std::find(rowNode->keys.begin(), rowNode->keys.end(), p.field) != rowNode->keys.end())
            p.field.clear();
    }
    return p;
}

CheckReport checkConfigDb(const YangContext& yang, const SchemaModel& schema,
                          const nlohmann::json& configDb, std::size_t maxErrors) {
    CheckReport report;
    if (auto deep = tooDeep(configDb, "the document")) {
        report.problems.push_back(*deep);
        return report;
    }
    Translation first = translateConfigDb(configDb, schema);
    report.problems = first.problems;
    for (const auto& t : first.tablesWithoutModel)
        if (t != "bgpraw") report.tablesWithoutModel.push_back(t);  // as config reload
    nlohmann::json doc = configDb;
    nlohmann::json yangJson = std::move(first.yang);
    for (std::size_t found = 0; found < maxErrors;) {
        auto errors = yang.validate(yangJson);
        if (errors.empty()) break;
        bool progressed = false;
        for (const auto& e : errors) {
            Problem p = locateError(e, schema, doc);
            report.problems.push_back(p);
            ++found;
            progressed = remove(doc, p) || progressed;
        }
        if (!progressed) break;  // nothing left to take out: report what was found
        yangJson = translateConfigDb(doc, schema).yang;
    }
    return report;
}

}  // namespace twinrail::sonic

namespace twinrail::sonic {

namespace {

// The table a leafref error points into: 'Invalid leafref value "x" - no target instance
// "/port:sonic-port/port:PORT/port:PORT_LIST/port:name" with the same value.' -> PORT.
std::string leafrefTargetTable(const std::string& message) {
    if (message.rfind("Invalid leafref value", 0) != 0) return "";
    auto at = message.find("no target instance \"");
    if (at == std::string::npos) return "";
    auto steps = parsePath(firstQuoted(message.substr(at)));
    return steps.size() >= 2 ? localName(steps[1].name) : "";
}

}  // namespace

TablesReport checkTables(const YangContext& yang, const SchemaModel& schema,
                         const nlohmann::json& configDb, const std::vector<std::string>& tables) {
    TablesReport out;
    CheckReport all = checkConfigDb(yang, schema, configDb);
    auto ours = [&tables](const std::string& t) {
        return std::find(tables.begin(), tables.end(), t) != tables.end();
    };
    for (auto& p : all.problems) {
        if (!p.table.empty() && !ours(p.table)) continue;
        std::string target = leafrefTargetTable(p.message);
        if (!target.empty() && !(configDb.is_object() && configDb.contains(target))) {
            Problem where = p;
            where.message = "refers to " + target + ", which this document does not hold";
            out.unchecked.push_back(where.str());
            continue;
        }
        out.report.problems.push_back(std::move(p));
    }
    for (auto& t : all.tablesWithoutModel)
        if (ours(t)) out.report.tablesWithoutModel.push_back(std::move(t));
    return out;
}

}  // namespace twinrail::sonic
