#include "config.h"

#include <sstream>

namespace twinrail::planesteer {

std::variant<Config, service::ConfigError> parseConfig(const nlohmann::json& doc) {
    Config c;
    if (!doc.is_object()) return service::ConfigError{"config", "must be a JSON object of tables"};
    if (auto t = doc.find("PLANESTEER"); t != doc.end()) {
        for (auto it = t->begin(); it != t->end(); ++it) {
            std::string where = "PLANESTEER|" + it.key();
            if (it.key() != "global")
                return service::ConfigError{where, "unknown key (only \"global\")"};
            service::FieldReader r{it.value(), where, std::nullopt};
            if (!it.value().is_object())
                return service::ConfigError{where, "must be an object of fields"};
            r.rejectUnknown({"interval_ms", "misses", "max_peers"});
            long long ms = c.steer.interval.count();
            r.integer("interval_ms", ms, 20, 10000);
            c.steer.interval = std::chrono::milliseconds(ms);
            r.integer("misses", c.steer.misses, 1, 100);
            r.integer("max_peers", c.maxPeers, 1, 1'000'000);
            if (r.error) return *r.error;
        }
    }
    auto t = doc.find("PLANESTEER_BOND");
    if (t == doc.end() || !t->is_object() || t->empty())
        return service::ConfigError{"PLANESTEER_BOND", "no bond to steer"};
    for (auto it = t->begin(); it != t->end(); ++it) {
        std::string where = "PLANESTEER_BOND|" + it.key();
        if (!it.value().is_object() || !it.value().contains("ports") ||
            !it.value()["ports"].is_string())
            return service::ConfigError{where + " field ports", "missing: \"port1,port2\""};
        std::vector<std::string> ports;
        std::stringstream in(it.value()["ports"].get<std::string>());
        for (std::string p; std::getline(in, p, ',');)
            if (!p.empty()) ports.push_back(p);
        if (ports.size() != 2)
            return service::ConfigError{where + " field ports", "needs exactly two ports"};
        c.bonds[it.key()] = ports;
    }
    return c;
}

}  // namespace twinrail::planesteer
