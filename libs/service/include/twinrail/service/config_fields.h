// Reading fields of the config_db.json shape ({"TABLE": {"key": {"field": "value"}}}).
// CONFIG_DB holds strings; a hand-written file may hold numbers and booleans. Every
// error names the table, key and field, and the first error wins.
#pragma once

#include <charconv>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

namespace twinrail::service {

struct ConfigError {
    std::string where;  // e.g. "HOSTROUTED|global field holdtime"
    std::string what;
    std::string str() const { return where + ": " + what; }
};

inline std::string asText(const nlohmann::json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_number()) return v.dump();
    return "";
}

struct FieldReader {
    const nlohmann::json& row;
    std::string where;
    std::optional<ConfigError> error;

    std::optional<std::string> text(const std::string& field) {
        auto it = row.find(field);
        if (it == row.end()) return std::nullopt;
        if (!it->is_string() && !it->is_number() && !it->is_boolean()) {
            fail(field, "must be a string, number or boolean");
            return std::nullopt;
        }
        return asText(*it);
    }
    void fail(const std::string& field, const std::string& what) {
        if (!error) error = ConfigError{where + " field " + field, what};
    }
    void boolean(const std::string& field, bool& out) {
        auto t = text(field);
        if (!t) return;
        if (*t == "true" || *t == "enabled" || *t == "on") {
            out = true;
        } else if (*t == "false" || *t == "disabled" || *t == "off") {
            out = false;
        } else {
            fail(field, "\"" + *t + "\" is not true/false");
        }
    }
    template <typename Int>
    void integer(const std::string& field, Int& out, long long lo, long long hi) {
        auto t = text(field);
        if (!t) return;
        long long v = 0;
        auto [end, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
        if (ec != std::errc() || end != t->data() + t->size())
            return fail(field, "\"" + *t + "\" is not a whole number");
        if (v < lo || v > hi) {
            return fail(field, std::to_string(v) + " is outside " + std::to_string(lo) + ".." +
                                   std::to_string(hi));
        }
        out = static_cast<Int>(v);
    }
    void seconds(const std::string& field, std::chrono::milliseconds& out, double lo, double hi) {
        auto t = text(field);
        if (!t) return;
        double v = 0;
        auto [end, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
        if (ec != std::errc() || end != t->data() + t->size() || !std::isfinite(v))
            return fail(field, "\"" + *t + "\" is not a number of seconds");
        if (v < lo || v > hi) {
            return fail(field, *t + " s is outside " + std::to_string(lo) + ".." +
                                   std::to_string(hi) + " s");
        }
        out = std::chrono::milliseconds(static_cast<long long>(std::llround(v * 1000)));
    }
    void number(const std::string& field, double& out, double lo, double hi) {
        auto t = text(field);
        if (!t) return;
        double v = 0;
        auto [end, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
        if (ec != std::errc() || end != t->data() + t->size() || !std::isfinite(v))
            return fail(field, "\"" + *t + "\" is not a number");
        if (v < lo || v > hi) {
            return fail(field,
                        *t + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
        }
        out = v;
    }
    void rejectUnknown(const std::set<std::string>& known) {
        for (auto it = row.begin(); it != row.end(); ++it)
            if (known.count(it.key()) == 0) fail(it.key(), "unknown field (typo?)");
    }
};

}  // namespace twinrail::service
