#include "twinrail/redis/sonic_db.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace twinrail::redis {

DbLocation resolveDb(const std::string& name, const Endpoint& fallback,
                     const std::string& configPath) {
    static const std::map<std::string, int> kWellKnown = {
        {"APPL_DB", 0}, {"ASIC_DB", 1}, {"COUNTERS_DB", 2}, {"CONFIG_DB", 4}, {"STATE_DB", 6}};
    DbLocation loc;
    loc.endpoint = fallback;
    loc.separator = (name == "APPL_DB" || name == "ASIC_DB" || name == "COUNTERS_DB") ? ':' : '|';
    if (!configPath.empty() && std::filesystem::exists(configPath)) {
        std::ifstream in(configPath);
        nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
        if (doc.is_discarded()) throw std::runtime_error(configPath + ": not valid JSON");
        const auto& db = doc["DATABASES"][name];
        if (!db.is_object() || !db["id"].is_number_integer())
            throw std::runtime_error(configPath + ": DATABASES." + name + ".id missing");
        loc.id = db["id"].get<int>();
        if (db["separator"].is_string() && !db["separator"].get<std::string>().empty())
            loc.separator = db["separator"].get<std::string>()[0];
        if (db["instance"].is_string()) {
            const auto& inst = doc["INSTANCES"][db["instance"].get<std::string>()];
            if (inst["unix_socket_path"].is_string())
                loc.endpoint.unixSocket = inst["unix_socket_path"].get<std::string>();
            if (inst["hostname"].is_string()) loc.endpoint.host = inst["hostname"];
            if (inst["port"].is_number_integer()) loc.endpoint.port = inst["port"];
        }
        return loc;
    }
    auto it = kWellKnown.find(name);
    if (it == kWellKnown.end()) throw std::runtime_error("unknown Redis database " + name);
    loc.id = it->second;
    return loc;
}

}  // namespace twinrail::redis
