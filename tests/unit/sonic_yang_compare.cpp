// The comparison of twinrail's YANG models with its JSON Schemas (sonic_yang_compare.h):
// each side read into the same FieldSpec, then compared field by field.
#include "sonic_yang_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace twinrail::sonic_yang_test {

namespace {

// Fields a schema allows that never reach YANG: SONiC's translator drops the "NULL"
// marker of a row without fields (sonic_yang_ext does the same), so no model has it.
const std::set<std::string> kDroppedByTranslator = {"NULL"};

}  // namespace

std::string readFile(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// ---- The JSON Schema side ----

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

std::string errors(const ly_ctx* ctx) {
    std::string out;
    for (const ly_err_item* e = ly_err_first(ctx); e != nullptr; e = e->next) {
        out += std::string(e->msg != nullptr ? e->msg : "") + " (" +
               (e->path != nullptr ? e->path : "") + ")\n";
    }
    return out;
}

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

}  // namespace twinrail::sonic_yang_test
