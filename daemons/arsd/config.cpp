#include "config.h"

namespace twinrail::arsd {

namespace {

// The keys of `table`, or an error when it is there but is not an object.
std::optional<std::string> keysOf(const nlohmann::json& doc, const char* table,
                                  std::set<std::string>& out) {
    auto it = doc.find(table);
    if (it == doc.end()) return std::nullopt;
    if (!it->is_object()) return std::string(table) + ": must be an object of keys";
    for (const auto& row : it->items()) {
        if (row.key().empty()) return std::string(table) + ": a key is empty";
        out.insert(row.key());
    }
    return std::nullopt;
}

}  // namespace

std::set<std::string> sampledPorts(const Config& c) {
    std::set<std::string> out;
    for (const auto& i : c.ars.interfaces) out.insert(i.name);
    if (c.ars.selector == ars::NhgSelector::Global) out.insert(c.fabric.begin(), c.fabric.end());
    return out;
}

std::variant<Config, std::string> parseConfig(const nlohmann::json& doc) {
    if (!doc.is_object()) return std::string("the config document must be a JSON object");
    Config c;
    auto ars = ars::parseArsConfig(doc);
    if (const auto* err = std::get_if<std::string>(&ars)) return *err;
    c.ars = std::get<ars::ArsConfig>(ars);
    if (auto err = keysOf(doc, "PORT", c.ports)) return *err;
    if (auto err = keysOf(doc, "UPLINK_PIN", c.pinned)) return *err;
    if (auto err = keysOf(doc, "PATHQD_PORT", c.fabric)) return *err;
    if (c.fabric.empty()) {
        for (const auto& p : c.ports)
            if (c.pinned.count(p) == 0) c.fabric.insert(p);
    }
    for (const auto& p : c.pinned) {
        if (!c.ports.empty() && c.ports.count(p) == 0)
            return "UPLINK_PIN|" + p + ": not a PORT of this switch";
    }
    return c;
}

}  // namespace twinrail::arsd
