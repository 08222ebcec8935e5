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
        // Only find() and contains() on what the file may lack: a const operator[] on a
        // missing key is undefined behaviour (it crashed on an instance without hostname).
        auto member = [](const nlohmann::json& obj,
                         const std::string& key) -> const nlohmann::json* {
            if (!obj.is_object()) return nullptr;
            auto it = obj.find(key);
            return it == obj.end() ? nullptr : &*it;
        };
        const nlohmann::json* dbs = member(doc, "DATABASES");
        const nlohmann::json* db = dbs != nullptr ? member(*dbs, name) : nullptr;
        const nlohmann::json* id = db != nullptr ? member(*db, "id") : nullptr;
        if (id == nullptr || !id->is_number_integer())
            throw std::runtime_error(configPath + ": DATABASES." + name + ".id missing");
        loc.id = id->get<int>();
        if (const auto* sep = member(*db, "separator");
            sep != nullptr && sep->is_string() && !sep->get<std::string>().empty())
            loc.separator = sep->get<std::string>()[0];
        const nlohmann::json* instName = member(*db, "instance");
        if (instName != nullptr && instName->is_string()) {
            const nlohmann::json* instances = member(doc, "INSTANCES");
            const nlohmann::json* inst =
                instances != nullptr ? member(*instances, instName->get<std::string>()) : nullptr;
            if (inst == nullptr) {
                throw std::runtime_error(configPath + ": INSTANCES." +
                                         instName->get<std::string>() +
                                         " missing (named by DATABASES." + name + ")");
            }
            if (const auto* v = member(*inst, "unix_socket_path"); v != nullptr && v->is_string())
                loc.endpoint.unixSocket = v->get<std::string>();
            if (const auto* v = member(*inst, "hostname"); v != nullptr && v->is_string())
                loc.endpoint.host = v->get<std::string>();
            if (const auto* v = member(*inst, "port"); v != nullptr && v->is_number_integer())
                loc.endpoint.port = v->get<int>();
        }
        return loc;
    }
    auto it = kWellKnown.find(name);
    if (it == kWellKnown.end()) throw std::runtime_error("unknown Redis database " + name);
    loc.id = it->second;
    return loc;
}

}  // namespace twinrail::redis
