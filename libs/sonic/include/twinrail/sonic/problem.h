// One thing wrong with a config_db.json document, located the way an operator reads it:
// the CONFIG_DB table, the row key ("Vlan100", "Vlan100|Ethernet0", "localhost") and the
// field, any of which may be empty when the problem is above that level.
#pragma once

#include <algorithm>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace twinrail::sonic {

struct Problem {
    std::string table;
    std::string key;
    std::string field;
    std::string message;

    // "TABLE|key: field: message", leaving out what is empty.
    std::string str() const {
        std::string where = table;
        if (!key.empty()) where += "|" + key;
        if (!field.empty()) where += (where.empty() ? "" : ": ") + field;
        return where.empty() ? message : where + ": " + message;
    }
    bool operator==(const Problem&) const = default;
};

// How deeply `doc` nests, counted without recursion and up to `limit` + 1: copying or
// comparing a document recurses, so a hostile one (100000 nested arrays) is refused
// before anything else touches it. config_db.json nests 3 or 4 levels.
inline constexpr std::size_t kMaxNesting = 32;
inline std::size_t nestingDepth(const nlohmann::json& doc, std::size_t limit = kMaxNesting) {
    std::size_t deepest = 0;
    std::vector<std::pair<const nlohmann::json*, std::size_t>> todo{{&doc, 1}};
    while (!todo.empty()) {
        auto [node, depth] = todo.back();
        todo.pop_back();
        if (!node->is_structured()) continue;
        deepest = std::max(deepest, depth);
        if (deepest > limit) return deepest;
        for (const auto& child : *node) todo.emplace_back(&child, depth + 1);
    }
    return deepest;
}

inline std::optional<Problem> tooDeep(const nlohmann::json& doc, const std::string& what) {
    if (nestingDepth(doc) <= kMaxNesting) return std::nullopt;
    return Problem{"", "", "",
                   what + " nests deeper than " + std::to_string(kMaxNesting) +
                       " levels (config_db.json has 3 or 4)"};
}

}  // namespace twinrail::sonic
