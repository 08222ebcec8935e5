#include "twinrail/sonic/translate.h"

#include <charconv>
#include <map>
#include <utility>

namespace twinrail::sonic {
namespace {

using nlohmann::json;
using Kind = SchemaNode::Kind;

std::string trim(const std::string& s) {
    auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t pos; (pos = s.find(sep, start)) != std::string::npos; start = pos + 1)
        out.push_back(s.substr(start, pos - start));
    out.push_back(s.substr(start));
    return out;
}

std::optional<long long> wholeNumber(const std::string& t) {
    long long v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size() || t.empty()) return std::nullopt;
    return v;
}

// One scalar, as text, into the JSON type the leaf wants. A value that does not fit
// stays a string, so libyang names the problem in its own words (as SONiC shows it).
json typed(const std::string& text, JsonKind kind) {
    switch (kind) {
        case JsonKind::Number:
        case JsonKind::NumberOrString:
            if (auto v = wholeNumber(text)) return *v;
            return text;
        case JsonKind::Boolean:
            if (text == "true") return true;
            if (text == "false") return false;
            return text;
        case JsonKind::Empty:
            return json::array({nullptr});
        case JsonKind::String:
            break;
    }
    return text;
}

std::optional<std::string> scalarText(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_number()) return v.dump();
    return std::nullopt;
}

// SONiC's exceptions to ',' between the elements of a leaf-list held as one string.
char leafListSeparator(const std::string& table, const std::string& field) {
    return (table == "NTP" && field == "src_intf") ? ';' : ',';
}

class Translator {
  public:
    Translator(const SchemaModel& schema, Translation& out) : schema_(schema), out_(out) {}

    void document(const json& doc) {
        if (!doc.is_object()) {
            problem("", "", "",
                    "the document is a JSON " + std::string(doc.type_name()) +
                        ", not an object of tables ({\"TABLE\": {\"key\": {\"field\": "
                        "\"value\"}}})");
            return;
        }
        for (const auto& [table, rows] : doc.items()) {
            const TableModel* model = schema_.table(table);
            if (model == nullptr) {
                out_.tablesWithoutModel.push_back(table);
                continue;
            }
            if (!rows.is_object()) {
                problem(table, "", "",
                        "the table is a JSON " + std::string(rows.type_name()) +
                            ", not an object of rows");
                continue;
            }
            table_ = table;
            json& top = out_.yang[model->module + ":" + model->top];
            json& container = top[model->top + ":" + table];
            container = json::object();
            tableRows(model->container, rows, container);
        }
    }

  private:
    void problem(const std::string& table, const std::string& key, const std::string& field,
                 const std::string& what) {
        out_.problems.push_back({table, key, field, what});
    }

    void tableRows(const SchemaNode& container, const json& rows, json& out) {
        const auto lists = container.childrenOf(Kind::List);
        for (const auto& [key, row] : rows.items()) {
            const SchemaNode* child = container.child(key);
            if (child != nullptr && child->kind == Kind::Container) {
                if (!row.is_object()) {
                    problem(table_, key, "",
                            "the row is a JSON " + std::string(row.type_name()) +
                                ", not an object of fields");
                    continue;
                }
                json fields = json::object();
                rowFields(*child, key, row, fields);
                if (!fields.empty()) out[key] = std::move(fields);
                continue;
            }
            if (child != nullptr && (child->kind == Kind::Leaf || child->kind == Kind::LeafList)) {
                fieldValue(*child, key, "", row, out);
                continue;
            }
            listRow(container, lists, key, row, out);
        }
    }

    void listRow(const SchemaNode& container, const std::vector<const SchemaNode*>& lists,
                 const std::string& key, const json& row, json& out) {
        // SONiC's convention: a lone list is <TABLE>_LIST; several lists are told apart
        // by the number of key parts.
        std::vector<std::string> parts = split(key, '|');
        const SchemaNode* list = nullptr;
        for (const SchemaNode* l : lists) {
            if (lists.size() == 1 && l->name != container.name + "_LIST") continue;
            if (l->keys.size() == parts.size()) {
                list = l;
                break;
            }
        }
        if (list == nullptr) {
            std::string wanted;
            for (const SchemaNode* l : lists) {
                std::string names;
                for (const auto& k : l->keys) names += (names.empty() ? "" : "|") + k;
                wanted += (wanted.empty() ? "" : " or ") + names;
            }
            problem(table_, key, "",
                    wanted.empty()
                        ? "no such row in the model (the table has no list and no container "
                          "named \"" +
                              key + "\")"
                        : "the key has " + std::to_string(parts.size()) +
                              " part(s) separated by '|'; the model wants " + wanted);
            return;
        }
        if (!row.is_object()) {
            problem(
                table_, key, "",
                "the row is a JSON " + std::string(row.type_name()) + ", not an object of fields");
            return;
        }
        json entry = json::object();
        for (std::size_t i = 0; i < parts.size(); ++i) {
            const SchemaNode* leaf = list->child(list->keys[i]);
            entry[list->keys[i]] = typed(trim(parts[i]), leaf ? leaf->json : JsonKind::String);
        }
        const auto inner = list->childrenOf(Kind::List);
        if (!inner.empty()) {
            mapRow(*inner.front(), key, row, entry);
        } else {
            rowFields(*list, key, row, entry);
        }
        out[list->name].push_back(std::move(entry));
    }

    // SONiC's "type 1" maps: {"1": "1", "2": "2"} -> [{dscp: "1", tc: "1"}, ...].
    void mapRow(const SchemaNode& inner, const std::string& key, const json& row, json& entry) {
        if (inner.keys.size() != 1) return;
        const SchemaNode* keyLeaf = inner.child(inner.keys.front());
        const SchemaNode* valueLeaf = nullptr;
        for (const SchemaNode* l : inner.childrenOf(Kind::Leaf))
            if (l->name != inner.keys.front()) valueLeaf = l;
        json items = json::array();
        for (const auto& [field, value] : row.items()) {
            auto text = scalarText(value);
            if (!text) {
                problem(table_, key, field,
                        "is a JSON " + std::string(value.type_name()) + ", not a string");
                continue;
            }
            json item = json::object();
            item[keyLeaf->name] = typed(field, keyLeaf->json);
            if (valueLeaf != nullptr) item[valueLeaf->name] = typed(*text, valueLeaf->json);
            items.push_back(std::move(item));
        }
        if (!items.empty()) entry[inner.name] = std::move(items);
    }

    void rowFields(const SchemaNode& node, const std::string& key, const json& row, json& out) {
        for (const auto& [field, value] : row.items()) {
            if (field == "NULL" && value == "NULL") continue;  // a row without fields
            const SchemaNode* child = node.child(field);
            if (child == nullptr) {
                problem(table_, key, field, "no such field in the model (" + node.name + ")");
                continue;
            }
            if (child->kind == Kind::Container) {
                if (!value.is_object()) {
                    problem(table_, key, field,
                            "is a JSON " + std::string(value.type_name()) + ", not an object");
                    continue;
                }
                json inner = json::object();
                rowFields(*child, key, value, inner);
                if (!inner.empty()) out[field] = std::move(inner);
                continue;
            }
            if (child->kind == Kind::List) {
                problem(table_, key, field, "is a list in the model, not a field");
                continue;
            }
            fieldValue(*child, field, key, value, out);
        }
    }

    void fieldValue(const SchemaNode& leaf, const std::string& field, const std::string& key,
                    const json& value, json& out) {
        if (leaf.kind == Kind::LeafList) {
            json items = json::array();
            if (value.is_string()) {
                for (const auto& part :
                     split(value.get<std::string>(), leafListSeparator(table_, field))) {
                    std::string item = trim(part);
                    if (!item.empty()) items.push_back(typed(item, leaf.json));
                }
            } else if (value.is_array()) {
                for (const auto& v : value) {
                    auto text = scalarText(v);
                    if (!text) {
                        problem(table_, key, field,
                                "holds a JSON " + std::string(v.type_name()) + ", not a string");
                        return;
                    }
                    items.push_back(typed(*text, leaf.json));
                }
            } else if (auto text = scalarText(value)) {
                items.push_back(typed(*text, leaf.json));
            } else {
                problem(table_, key, field,
                        "is a JSON " + std::string(value.type_name()) +
                            ", not a string or a list of strings");
                return;
            }
            out[field] = std::move(items);
            return;
        }
        auto text = scalarText(value);
        if (!text) {
            problem(table_, key, field,
                    "is a JSON " + std::string(value.type_name()) + ", not a string");
            return;
        }
        out[field] = typed(*text, leaf.json);
    }

    const SchemaModel& schema_;
    Translation& out_;
    std::string table_;
};

// Walks YANG-JSON beside the schema, turning strings into the JSON types libyang 2.1
// wants. Names may carry a "module:" prefix.
std::string localName(const std::string& name) {
    auto colon = name.find(':');
    return colon == std::string::npos ? name : name.substr(colon + 1);
}

json coerceValue(const json& v, JsonKind kind) {
    if (kind == JsonKind::Empty) return v;
    // RFC 7951 writes 64-bit integers and decimals as strings: 0 becomes "0".
    if (kind == JsonKind::String && v.is_number()) return v.dump();
    if (!v.is_string()) return v;
    return typed(v.get<std::string>(), kind);
}

void coerceNode(json& data, const SchemaNode& node) {
    if (!data.is_object()) return;
    for (auto& el : data.items()) {
        json& value = el.value();
        const SchemaNode* child = node.child(localName(el.key()));
        if (child == nullptr) continue;  // libyang reports it (strict)
        switch (child->kind) {
            case Kind::Container:
                coerceNode(value, *child);
                break;
            case Kind::List:
                if (value.is_array())
                    for (auto& entry : value) coerceNode(entry, *child);
                break;
            case Kind::Leaf:
                value = coerceValue(value, child->json);
                break;
            case Kind::LeafList:
                if (value.is_array())
                    for (auto& item : value) item = coerceValue(item, child->json);
                break;
        }
    }
}

}  // namespace

Translation translateConfigDb(const nlohmann::json& configDb, const SchemaModel& schema) {
    Translation out;
    Translator(schema, out).document(configDb);
    return out;
}

nlohmann::json coerceStringDatatypes(const nlohmann::json& yangJson, const SchemaModel& schema) {
    json out = yangJson;
    if (!out.is_object()) return out;
    for (auto& top : out.items()) {
        const std::string module = top.key().substr(0, top.key().find(':'));
        if (!top.value().is_object()) continue;
        for (auto& table : top.value().items()) {
            auto name = schema.tableOfQualified(module, localName(table.key()));
            if (name) coerceNode(table.value(), schema.table(*name)->container);
        }
    }
    return out;
}

}  // namespace twinrail::sonic
