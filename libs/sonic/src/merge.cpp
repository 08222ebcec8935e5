#include "twinrail/sonic/merge.h"

#include <string>

namespace twinrail::sonic {
namespace {

std::string notObject(const nlohmann::json& v, const std::string& what) {
    return "is a JSON " + std::string(v.type_name()) + ", not an object of " + what;
}

}  // namespace

Merge mergeConfigDb(const nlohmann::json& base, const nlohmann::json& overlay) {
    Merge out;
    for (const auto* doc : {&base, &overlay}) {
        if (auto deep = tooDeep(*doc, doc == &base ? "the base document" : "the overlay")) {
            out.problems.push_back(*deep);
            return out;
        }
    }
    if (!base.is_object()) {
        out.problems.push_back({"", "", "", "the base document " + notObject(base, "tables")});
        return out;
    }
    out.merged = base;
    if (!overlay.is_object()) {
        out.problems.push_back(
            {"", "", "", "the overlay document " + notObject(overlay, "tables")});
        return out;
    }
    for (const auto& [table, rows] : overlay.items()) {
        if (!rows.is_object()) {
            out.problems.push_back(
                {table, "", "", "the overlay's table " + notObject(rows, "rows")});
            continue;
        }
        nlohmann::json& target = out.merged[table];
        if (!target.is_object()) {
            if (!target.is_null()) {
                out.problems.push_back(
                    {table, "", "", "the base's table " + notObject(target, "rows")});
            }
            target = nlohmann::json::object();
        }
        for (const auto& [key, fields] : rows.items()) {
            if (!fields.is_object()) {
                out.problems.push_back(
                    {table, key, "", "the overlay's row " + notObject(fields, "fields")});
                continue;
            }
            nlohmann::json& row = target[key];
            if (!row.is_object()) row = nlohmann::json::object();
            for (const auto& [field, value] : fields.items()) row[field] = value;
        }
    }
    return out;
}

}  // namespace twinrail::sonic
