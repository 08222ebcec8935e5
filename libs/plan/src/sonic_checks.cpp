// Rules SONiC applies to a config_db that a planner must meet before a switch sees it.
#include <map>

#include "twinrail/common/ip.h"
#include "twinrail/common/names.h"
#include "twinrail/plan/sonic_target.h"

namespace twinrail::plan {
namespace {

using json = nlohmann::json;

struct RouterAddress {
    std::string key;  // TABLE|name|prefix, for messages
    std::string interface;
    IpPrefix prefix;
};

}  // namespace

std::vector<std::string> overlappingRouterInterfaces(const json& db) {
    std::vector<std::string> problems;
    if (!db.is_object()) return {"config_db: not an object"};
    const char* tables[] = {"INTERFACE", "VLAN_INTERFACE", "LOOPBACK_INTERFACE",
                            "PORTCHANNEL_INTERFACE", "VLAN_SUB_INTERFACE"};
    // The VRF of each interface: its own row's vrf_name, the default VRF otherwise.
    std::map<std::string, std::string> vrfOf;
    for (const char* table : tables) {
        if (!db.contains(table) || !db[table].is_object()) continue;
        for (const auto& [key, row] : db[table].items()) {
            if (key.find('|') == std::string::npos && row.is_object() && row.contains("vrf_name") &&
                row["vrf_name"].is_string())
                vrfOf[key] = row["vrf_name"].get<std::string>();
        }
    }
    std::map<std::string, std::vector<RouterAddress>> byVrf;
    for (const char* table : tables) {
        if (!db.contains(table) || !db[table].is_object()) continue;
        for (const auto& [key, row] : db[table].items()) {
            auto bar = key.find('|');
            if (bar == std::string::npos) continue;
            const std::string name = key.substr(0, bar);
            const std::string full = std::string(table) + "|" + key;
            auto prefix = IpPrefix::parse(key.substr(bar + 1));
            if (!prefix || key.find('/') == std::string::npos) {
                problems.push_back(names::printable(full, 200) + ": not an address/length");
                continue;
            }
            byVrf[vrfOf[name]].push_back({full, name, *prefix});
        }
    }
    for (const auto& [vrf, addresses] : byVrf) {
        for (size_t i = 0; i < addresses.size(); ++i) {
            for (size_t j = i + 1; j < addresses.size(); ++j) {
                const auto& a = addresses[i];
                const auto& b = addresses[j];
                if (a.interface == b.interface) continue;  // IntfsOrch compares other RIFs
                if (a.prefix.contains(b.prefix.addr) || b.prefix.contains(a.prefix.addr)) {
                    problems.push_back(names::printable(b.key, 200) + " overlaps " +
                                       names::printable(a.key, 200) +
                                       (vrf.empty() ? "" : " in VRF " + names::printable(vrf)));
                }
            }
        }
    }
    return problems;
}

std::string jsonPointerToken(const std::string& key) {
    std::string out;
    for (char c : key) {
        if (c == '~') {
            out += "~0";
        } else if (c == '/') {
            out += "~1";
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace twinrail::plan
