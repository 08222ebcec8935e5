// The libyang edge: everything that calls libyang is here.
#include "twinrail/sonic/yang_context.h"

#include <libyang/libyang.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace twinrail::sonic {
namespace {

void discardMessage(LY_LOG_LEVEL /*level*/, const char* /*msg*/, const char* /*path*/) {}

// Store errors, print nothing, for one call; the previous options and printer come back
// after. libyang 2.1's schema compiler sets per-thread log options of its own while it
// checks XPath (and prints its warnings about SONiC's modules whatever ours are), so
// the printer itself is replaced.
class QuietLibyang {
  public:
    QuietLibyang() : options_(ly_log_options(LY_LOSTORE)), printer_(ly_get_log_clb()) {
        ly_set_log_clb(discardMessage, 1);  // 1: errors keep their data path
    }
    ~QuietLibyang() {
        ly_set_log_clb(printer_, 1);  // 1 is libyang's default
        ly_log_options(options_);
    }
    QuietLibyang(const QuietLibyang&) = delete;
    QuietLibyang& operator=(const QuietLibyang&) = delete;

  private:
    uint32_t options_;
    ly_log_clb printer_;
};

// libyang 2.1 words an error's location: 'Data location "/a:b/c[k='v']/d", line number
// 1.' or 'Schema location "/a:b/c/d"' (or both): the data path when there is one.
std::string pathOf(const char* location) {
    if (location == nullptr) return "";
    std::string text = location;
    for (const char* label : {"Data location \"", "data location \"", "Schema location \""}) {
        auto at = text.find(label);
        if (at == std::string::npos) continue;
        at += std::char_traits<char>::length(label);
        auto end = text.find('"', at);
        return text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    }
    return text;
}

std::vector<YangError> takeErrors(const ly_ctx* ctx) {
    std::vector<YangError> out;
    for (const ly_err_item* e = ly_err_first(ctx); e != nullptr; e = e->next) {
        if (e->level != LY_LLERR) continue;
        out.push_back({e->msg != nullptr ? e->msg : "libyang error", pathOf(e->path)});
    }
    ly_err_clean(const_cast<ly_ctx*>(ctx), nullptr);
    return out;
}

JsonKind kindOf(const lysc_type* type) {
    switch (type->basetype) {
        case LY_TYPE_INT8:
        case LY_TYPE_INT16:
        case LY_TYPE_INT32:
        case LY_TYPE_UINT8:
        case LY_TYPE_UINT16:
        case LY_TYPE_UINT32:
            return JsonKind::Number;
        case LY_TYPE_BOOL:
            return JsonKind::Boolean;
        case LY_TYPE_EMPTY:
            return JsonKind::Empty;
        case LY_TYPE_LEAFREF: {
            const auto* leafref = reinterpret_cast<const lysc_type_leafref*>(type);
            return leafref->realtype != nullptr ? kindOf(leafref->realtype) : JsonKind::String;
        }
        case LY_TYPE_UNION: {
            // A member that wants a JSON number makes "9100" a number; libyang 2.1 then
            // tries the members in order, as it would for any JSON value.
            const auto* un = reinterpret_cast<const lysc_type_union*>(type);
            for (LY_ARRAY_COUNT_TYPE i = 0; i < LY_ARRAY_COUNT(un->types); ++i) {
                JsonKind member = kindOf(un->types[i]);
                if (member == JsonKind::Number || member == JsonKind::NumberOrString)
                    return JsonKind::NumberOrString;
            }
            return JsonKind::String;
        }
        default:
            return JsonKind::String;
    }
}

void addNode(const lysc_node* node, SchemaNode& parent);

void addChildren(const lysc_node* node, SchemaNode& out) {
    for (const lysc_node* c = lysc_node_child(node); c != nullptr; c = c->next) addNode(c, out);
}

void addNode(const lysc_node* node, SchemaNode& parent) {
    if ((node->flags & LYS_CONFIG_R) != 0) return;  // state data: never in CONFIG_DB
    SchemaNode n;
    n.name = node->name;
    switch (node->nodetype) {
        case LYS_CHOICE:
        case LYS_CASE:
            addChildren(node, parent);  // config_db.json has no choice level
            return;
        case LYS_CONTAINER:
            n.kind = SchemaNode::Kind::Container;
            addChildren(node, n);
            break;
        case LYS_LIST:
            n.kind = SchemaNode::Kind::List;
            for (const lysc_node* c = lysc_node_child(node); c != nullptr; c = c->next)
                if ((c->flags & LYS_KEY) != 0) n.keys.emplace_back(c->name);
            addChildren(node, n);
            break;
        case LYS_LEAF:
            n.kind = SchemaNode::Kind::Leaf;
            n.json = kindOf(reinterpret_cast<const lysc_node_leaf*>(node)->type);
            break;
        case LYS_LEAFLIST:
            n.kind = SchemaNode::Kind::LeafList;
            n.json = kindOf(reinterpret_cast<const lysc_node_leaflist*>(node)->type);
            break;
        default:
            return;  // anydata, anyxml: not in SONiC's CONFIG_DB models
    }
    parent.children.push_back(std::move(n));
}

// "sonic-vlan.yang" and "sonic-vlan@2021-04-22.yang" both hold module sonic-vlan.
std::string moduleNameOf(const std::filesystem::path& file) {
    std::string stem = file.stem().string();
    return stem.substr(0, stem.find('@'));
}

}  // namespace

YangContext::YangContext() {
    QuietLibyang quiet;
    if (ly_ctx_new(nullptr, LY_CTX_DISABLE_SEARCHDIR_CWD, &ctx_) != LY_SUCCESS || ctx_ == nullptr)
        throw std::runtime_error("libyang: cannot create a context");
}

YangContext::~YangContext() {
    QuietLibyang quiet;  // libyang 2.1 lists its dictionary's leftovers here
    ly_ctx_destroy(ctx_);
}

std::vector<std::string> YangContext::loadDirectory(const std::string& dir) {
    QuietLibyang quiet;
    std::vector<std::string> problems;
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".yang") files.push_back(it->path());
    if (ec) return {dir + ": " + ec.message()};
    std::sort(files.begin(), files.end());
    if (ly_ctx_set_searchdir(ctx_, dir.c_str()) != LY_SUCCESS) {
        for (const auto& e : takeErrors(ctx_)) problems.push_back(dir + ": " + e.message);
    }
    for (const auto& file : files) {
        std::string name = moduleNameOf(file);
        if (std::find(modules_.begin(), modules_.end(), name) != modules_.end()) continue;
        lys_module* mod = nullptr;
        LY_ERR rc = lys_parse_path(ctx_, file.c_str(), LYS_IN_YANG, &mod);
        auto errors = takeErrors(ctx_);
        if ((rc != LY_SUCCESS && rc != LY_EEXIST) || mod == nullptr) {
            std::string what = errors.empty() ? "libyang cannot load it" : errors.front().message;
            problems.push_back(file.string() + ": " + what);
            continue;
        }
        modules_.emplace_back(mod->name);
    }
    return problems;
}

SchemaModel YangContext::schemaModel() const {
    SchemaModel model;
    for (const auto& name : modules_) {
        const lys_module* mod = ly_ctx_get_module_implemented(ctx_, name.c_str());
        if (mod == nullptr || mod->compiled == nullptr) continue;
        // SONiC's guideline: one top-level container named like the module; modules
        // without one hold only types and groupings.
        const lysc_node* top = mod->compiled->data;
        while (top != nullptr && top->nodetype != LYS_CONTAINER) top = top->next;
        if (top == nullptr || name != top->name || (top->flags & LYS_CONFIG_R) != 0) continue;
        for (const lysc_node* t = lysc_node_child(top); t != nullptr; t = t->next) {
            if (t->nodetype != LYS_CONTAINER || (t->flags & LYS_CONFIG_R) != 0) continue;
            SchemaNode holder;
            addNode(t, holder);
            if (holder.children.empty()) continue;
            model.tables.emplace(t->name,
                                 TableModel{name, top->name, std::move(holder.children.front())});
        }
    }
    return model;
}

nlohmann::json YangContext::nodeWithSiblings(const nlohmann::json& yangJson,
                                             const std::string& xpath) const {
    QuietLibyang quiet;
    const std::string text = yangJson.dump();
    lyd_node* tree = nullptr;
    nlohmann::json out;
    if (lyd_parse_data_mem(ctx_, text.c_str(), LYD_JSON, LYD_PARSE_STRICT | LYD_PARSE_NO_STATE,
                           LYD_VALIDATE_NO_STATE, &tree) == LY_SUCCESS) {
        ly_set* found = nullptr;
        if (lyd_find_xpath(tree, xpath.c_str(), &found) == LY_SUCCESS && found->count > 0) {
            char* printed = nullptr;
            // From the first sibling: libyang 2.1 puts default nodes before the others.
            if (lyd_print_mem(&printed, lyd_first_sibling(found->dnodes[0]), LYD_JSON,
                              LYD_PRINT_WITHSIBLINGS | LYD_PRINT_WD_ALL) == LY_SUCCESS &&
                printed != nullptr) {
                out = nlohmann::json::parse(printed, nullptr, false);
                if (out.is_discarded()) out = nullptr;
            }
            free(printed);  // NOLINT(cppcoreguidelines-no-malloc): libyang allocates it
        }
        ly_set_free(found, nullptr);
    }
    takeErrors(ctx_);
    lyd_free_all(tree);
    return out;
}

std::vector<YangError> YangContext::validate(const nlohmann::json& yangJson) const {
    QuietLibyang quiet;
    const std::string text = yangJson.dump();
    lyd_node* tree = nullptr;
    // As sonic_yang.loadData: strict (unknown nodes are errors), no state data, and
    // validation of every implemented module (no LYD_VALIDATE_PRESENT).
    LY_ERR rc =
        lyd_parse_data_mem(ctx_, text.c_str(), LYD_JSON, LYD_PARSE_STRICT | LYD_PARSE_NO_STATE,
                           LYD_VALIDATE_NO_STATE, &tree);
    auto errors = takeErrors(ctx_);
    lyd_free_all(tree);
    if (rc != LY_SUCCESS && errors.empty())
        errors.push_back({"libyang: validation failed (error " + std::to_string(rc) + ")", ""});
    if (rc == LY_SUCCESS) errors.clear();  // stored warnings are not failures
    return errors;
}

}  // namespace twinrail::sonic
