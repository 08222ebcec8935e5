#include "twinrail/sonic/schema_model.h"

namespace twinrail::sonic {

const SchemaNode* SchemaNode::child(const std::string& childName) const {
    for (const auto& c : children)
        if (c.name == childName) return &c;
    return nullptr;
}

std::vector<const SchemaNode*> SchemaNode::childrenOf(Kind k) const {
    std::vector<const SchemaNode*> out;
    for (const auto& c : children)
        if (c.kind == k) out.push_back(&c);
    return out;
}

const TableModel* SchemaModel::table(const std::string& name) const {
    auto it = tables.find(name);
    return it == tables.end() ? nullptr : &it->second;
}

std::optional<std::string> SchemaModel::tableOfQualified(const std::string& module,
                                                         const std::string& container) const {
    const TableModel* t = table(container);
    if (t == nullptr || t->module != module) return std::nullopt;
    return container;
}

}  // namespace twinrail::sonic
