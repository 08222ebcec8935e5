// sonic-apply's formats (sonic_apply.h): the running config's ports as a SKU, the target
// file, the patch, the script.
#include <charconv>

#include "twinrail/common/names.h"
#include "twinrail/plan/sonic_apply.h"

namespace twinrail::plan {
namespace {

using json = nlohmann::json;

std::string token(const std::string& key) {
    return jsonPointerToken(key);
}

// One word of a command, single-quoted for bash.
std::string quoted(const std::string& word) {
    std::string out = "'";
    for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string fieldText(const json& v) {
    return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

std::variant<Sku, std::string> skuOfRunningConfig(const json& running) {
    if (!running.is_object() || !running.contains("PORT") || !running["PORT"].is_object() ||
        running["PORT"].empty()) {
        return std::string("the running config has no PORT table");
    }
    // port_config.ini's shape, from the rows: the text parser checks what it always checks.
    std::string ini = "# name lanes alias index speed\n";
    for (const auto& [name, value] : running["PORT"].items()) {
        const json& row = value;  // a lambda cannot capture a structured binding (clang 14)
        if (!row.is_object()) return "PORT|" + names::printable(name) + ": not an object";
        const auto field = [&row](const char* f) {
            return row.contains(f) ? fieldText(row[f]) : std::string();
        };
        const std::string alias = field("alias").empty() ? name : field("alias");
        ini += name + " " + field("lanes") + " " + alias + " " + field("index") + " " +
               field("speed") + "\n";
    }
    auto parsed = parsePortConfigIni(ini, "the running config's PORT table");
    if (auto* e = std::get_if<SkuError>(&parsed)) return e->message;
    Sku sku;
    sku.name = "running";
    sku.ports = std::move(std::get<std::vector<SkuPort>>(parsed));
    for (auto& p : sku.ports) {
        for (const char* f : {"fec", "mtu", "autoneg", "admin_status"}) {
            const json& row = running["PORT"][p.name];
            if (row.contains(f) && row[f].is_string()) p.extra[f] = row[f].get<std::string>();
        }
    }
    return sku;
}

json sonicTargetJson(const SonicOptions& options) {
    return {{"release", sonicReleaseName(options.release)},
            {"buffer_model",
             options.bufferModel == SonicBufferModel::Dynamic ? "dynamic" : "traditional"}};
}

std::variant<SonicOptions, std::string> parseSonicTarget(const json& j) {
    if (!j.is_object() || !j.contains("release") || !j["release"].is_string())
        return std::string("sonic-target.json: no release");
    SonicOptions o;
    const std::string release = j["release"].get<std::string>();
    if (auto why = sonicReleaseRefusal(release)) return "sonic-target.json: " + *why;
    o.release = *parseSonicRelease(release);
    const std::string model = j.value("buffer_model", "traditional");
    if (model != "traditional" && model != "dynamic")
        return "sonic-target.json: buffer_model \"" + names::printable(model) + "\"";
    o.bufferModel = model == "dynamic" ? SonicBufferModel::Dynamic : SonicBufferModel::Traditional;
    return o;
}

json configDbPatch(const json& from, const json& to) {
    json ops = json::array();
    static const json kEmpty = json::object();
    for (const auto& [table, rows] : to.items()) {
        const std::string t = "/" + token(table);
        const json& had = from.contains(table) ? from[table] : kEmpty;
        if (!from.contains(table)) {
            ops.push_back({{"op", "add"}, {"path", t}, {"value", rows}});
            continue;
        }
        for (const auto& [key, row] : rows.items()) {
            const std::string k = t + "/" + token(key);
            if (!had.contains(key)) {
                ops.push_back({{"op", "add"}, {"path", k}, {"value", row}});
                continue;
            }
            for (const auto& [field, value] : row.items()) {
                const bool known = had[key].contains(field);
                if (known && had[key][field] == value) continue;
                ops.push_back({{"op", known ? "replace" : "add"},
                               {"path", k + "/" + token(field)},
                               {"value", value}});
            }
            for (const auto& [field, value] : had[key].items()) {
                if (!row.contains(field))
                    ops.push_back({{"op", "remove"}, {"path", k + "/" + token(field)}});
            }
        }
        for (const auto& [key, row] : had.items()) {
            if (!rows.contains(key))
                ops.push_back({{"op", "remove"}, {"path", t + "/" + token(key)}});
        }
    }
    for (const auto& [table, rows] : from.items())
        if (!to.contains(table)) ops.push_back({{"op", "remove"}, {"path", "/" + token(table)}});
    return ops;
}

std::string sonicApplyScript(const std::vector<SonicApplyStep>& steps, const std::string& header) {
    std::string s = "#!/bin/bash\n" + header +
                    "set -euo pipefail\ncd \"$(dirname \"$0\")\"\n"
                    "step() { echo \"== $1\"; shift; echo \"   $*\"; \"$@\"; }\n";
    for (const auto& st : steps) {
        std::string line = "step " + quoted(st.why);
        for (const auto& w : st.argv) line += " " + quoted(w);
        s += line + "\n";
    }
    return s;
}

}  // namespace twinrail::plan
