// The ARS tables of a config_db document (config.h). SONiC's YANG for them is the HLD's
// (modelled in proto/linux/twinrail-ars.yang): where it constrains a value, the same constraint is
// checked here; where twinrail's data path is narrower (one profile, one object, the
// default VRF, no alternative path), the error says so.
#include "twinrail/ars/config.h"

#include <set>

#include "twinrail/common/names.h"
#include "twinrail/service/config_fields.h"

namespace twinrail::ars {
namespace {

using nlohmann::json;
using service::ConfigError;
using service::FieldReader;

constexpr long long kU16 = 65535;
constexpr long long kU32 = 4294967295LL;

// sonic-hash.yang: the hash fields its typedef allows, and sonic-types' hash-algorithm.
const std::set<std::string> kHashFields = {
    "IN_PORT",           "DST_MAC",           "SRC_MAC",        "ETHERTYPE",
    "VLAN_ID",           "IP_PROTOCOL",       "DST_IP",         "SRC_IP",
    "L4_DST_PORT",       "L4_SRC_PORT",       "INNER_DST_MAC",  "INNER_SRC_MAC",
    "INNER_ETHERTYPE",   "INNER_IP_PROTOCOL", "INNER_DST_IP",   "INNER_SRC_IP",
    "INNER_L4_DST_PORT", "INNER_L4_SRC_PORT", "IPV6_FLOW_LABEL"};
const std::set<std::string> kHashAlgorithms = {"CRC",      "XOR",       "RANDOM", "CRC_32LO",
                                               "CRC_32HI", "CRC_CCITT", "CRC_XOR"};

using Rows = std::vector<std::pair<std::string, const json*>>;

// The rows of `table`, or an error when it is not an object of objects.
std::optional<ConfigError> rowsOf(const json& doc, const std::string& table, Rows& out) {
    auto t = doc.find(table);
    if (t == doc.end()) return std::nullopt;
    if (!t->is_object()) return ConfigError{table, "must be an object of keys"};
    for (auto it = t->begin(); it != t->end(); ++it) {
        if (!it->is_object())
            return ConfigError{table + "|" + it.key(), "must be an object of fields"};
        out.emplace_back(it.key(), &*it);
    }
    return std::nullopt;
}

// YANG's boolean: exactly true or false (FieldReader's also takes on/enabled).
void yangBoolean(FieldReader& r, const std::string& field, bool& out) {
    auto t = r.text(field);
    if (!t) return;
    if (*t == "true" || *t == "false") {
        out = *t == "true";
    } else {
        r.fail(field, "\"" + *t + "\" is not true or false");
    }
}

void oneOf(FieldReader& r, const std::string& field, const std::set<std::string>& allowed,
           std::string& out) {
    auto t = r.text(field);
    if (!t) return;
    if (allowed.count(*t) != 0) {
        out = *t;
        return;
    }
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    r.fail(field, "\"" + *t + "\" is not one of " + list);
}

// A profile's load range: both 0 is SONiC's "unset", the default range.
void loadRange(FieldReader& r, const std::string& name, LoadRange& out, uint32_t defaultMax) {
    LoadRange v;
    r.integer(name + "_min_value", v.min, 0, kU16);
    r.integer(name + "_max_value", v.max, 0, kU16);
    if (r.error) return;
    if (v.min == 0 && v.max == 0) {
        out = {0, defaultMax};
    } else if (v.max <= v.min) {
        r.fail(name + "_max_value", std::to_string(v.max) + " is not above " + name +
                                        "_min_value " + std::to_string(v.min));
    } else {
        out = v;
    }
}

struct Profile {
    std::string name;
    std::string defaultObject;
    uint32_t maxFlows = 0;  // 0: no profile-wide limit
};

std::optional<ConfigError> parseProfile(const std::string& key, const json& row, ArsConfig& cfg,
                                        Profile& p) {
    FieldReader r{row, "ARS_PROFILE|" + key, std::nullopt};
    r.rejectUnknown({"algorithm", "ars_nhg_path_selector_mode", "ars_lag_path_selector_mode",
                     "default_ars_object", "max_flows", "sampling_interval", "past_load_min_value",
                     "past_load_max_value", "past_load_weight", "future_load_min_value",
                     "future_load_max_value", "future_load_weight", "current_load_min_value",
                     "current_load_max_value", "ipv4_enable", "ipv6_enable", "NULL"});
    p.name = key;
    cfg.profile = key;
    std::string text;
    oneOf(r, "algorithm", {"ewma"}, text);
    std::string selector = "interface";
    oneOf(r, "ars_nhg_path_selector_mode", {"global", "interface", "nexthop"}, selector);
    cfg.selector = selector == "global"    ? NhgSelector::Global
                   : selector == "nexthop" ? NhgSelector::Nexthop
                                           : NhgSelector::Interface;
    oneOf(r, "ars_lag_path_selector_mode", {"global", "interface"}, text);
    p.defaultObject = r.text("default_ars_object").value_or("");
    r.integer("max_flows", p.maxFlows, 0, kU32);
    // 0 would never sample: SONiC's YANG lets it through, the data path cannot.
    r.integer("sampling_interval", cfg.samplingIntervalUs, 1, kU32);
    r.integer("past_load_weight", cfg.pastLoadWeight, 0, kU16);
    r.integer("future_load_weight", cfg.futureLoadWeight, 0, kU16);
    if (!r.error && cfg.pastLoadWeight == 0 && cfg.futureLoadWeight == 0)
        r.fail("future_load_weight", "0 with past_load_weight 0: no load to rank ports by");
    loadRange(r, "past_load", cfg.pastLoad, kDefaultPastLoadMax);
    loadRange(r, "future_load", cfg.futureLoad, kDefaultFutureLoadMax);
    LoadRange unused;  // SAI's current load: parsed for its errors, not used (SAI's example)
    loadRange(r, "current_load", unused, 0);
    yangBoolean(r, "ipv4_enable", cfg.ipv4);
    yangBoolean(r, "ipv6_enable", cfg.ipv6);
    if (!r.error && cfg.selector == NhgSelector::Global && p.defaultObject.empty())
        r.fail("default_ars_object", "missing: ars_nhg_path_selector_mode global needs it");
    return r.error;
}

uint32_t powerOfTwoAtLeast(uint32_t v) {
    uint32_t p = 1;
    while (p < v) p <<= 1;
    return p;
}

std::optional<ConfigError> parseObject(const std::string& key, const json& row, const Profile& p,
                                       ArsConfig& cfg) {
    FieldReader r{row, "ARS_OBJECT|" + key, std::nullopt};
    r.rejectUnknown({"assign_mode", "flowlet_idle_time", "max_flows", "primary_path_threshold",
                     "alternative_path_cost", "NULL"});
    cfg.object = key;
    std::string mode = "per_flowlet_quality";
    oneOf(r, "assign_mode",
          {"per_flowlet_quality", "per_packet_quality", "per_flowlet_random", "per_packet_random"},
          mode);
    cfg.datapath.mode = mode == "per_packet_quality"   ? AssignMode::PacketQuality
                        : mode == "per_flowlet_random" ? AssignMode::FlowletRandom
                        : mode == "per_packet_random"  ? AssignMode::PacketRandom
                                                       : AssignMode::FlowletQuality;
    cfg.datapath.idleTimeUs = 256;
    r.integer("flowlet_idle_time", cfg.datapath.idleTimeUs, 2, 2047);
    uint32_t flows = 512;
    // SONiC's YANG takes any uint32; a flow table needs one entry and has a size limit.
    r.integer("max_flows", flows, 1, kMaxFlowTable);
    if (!r.error && p.maxFlows != 0 && flows > p.maxFlows) {
        r.fail("max_flows", std::to_string(flows) + " is above ARS_PROFILE|" + p.name +
                                " max_flows " + std::to_string(p.maxFlows));
    }
    cfg.maxFlows = powerOfTwoAtLeast(flows);
    uint32_t threshold = 16, cost = 0;
    r.integer("primary_path_threshold", threshold, 0, kU32);
    r.integer("alternative_path_cost", cost, 0, kU32);
    return r.error;
}

// A leafref to the one ARS object: `value` must name it.
void objectRef(FieldReader& r, const std::string& field, const std::string& object) {
    auto t = r.text(field);
    if (!t || r.error || *t == object) return;
    r.fail(field, "\"" + *t + "\" is not an ARS_OBJECT" +
                      (object.empty() ? std::string() : " (there is " + object + ")"));
}

std::optional<ConfigError> parseInterface(const std::string& key, const json& row, const json& doc,
                                          const std::string& object, ArsConfig& cfg) {
    const std::string where = "ARS_INTERFACES|" + key;
    if (auto why = names::check(key, names::Kind::Interface))
        return ConfigError{where, "\"" + key + "\" is not a valid interface name: " + *why};
    // twinrail-ars.yang's if_name is a leafref to PORT: a document with ports must list it.
    if (auto ports = doc.find("PORT");
        ports != doc.end() && ports->is_object() && !ports->contains(key))
        return ConfigError{where, "not a PORT of this switch"};
    FieldReader r{row, where, std::nullopt};
    r.rejectUnknown({"scaling_factor", "ars_obj_name", "NULL"});
    ArsInterface i{key, 0};
    r.integer("scaling_factor", i.scalingFactor, 0, kU32);
    objectRef(r, "ars_obj_name", object);
    cfg.interfaces.push_back(i);
    return r.error;
}

std::optional<ConfigError> parseNexthop(const std::string& key, const json& row,
                                        const std::string& object, ArsConfig& cfg) {
    const std::string where = "ARS_NEXTHOPS|" + key;
    auto bar = key.find('|');
    if (bar == std::string::npos) return ConfigError{where, "key must be <vrf>|<nexthop ip>"};
    const std::string vrf = key.substr(0, bar);
    auto ip = IpAddr::parse(key.substr(bar + 1));
    if (!ip) return ConfigError{where, "\"" + key.substr(bar + 1) + "\" is not an IP address"};
    if (vrf != "default")
        return ConfigError{where, "VRF \"" + vrf + "\": twinrail's data path has the default only"};
    FieldReader r{row, where, std::nullopt};
    r.rejectUnknown({"ars_obj_name", "role", "NULL"});
    objectRef(r, "ars_obj_name", object);
    std::string role = "primary_path";
    oneOf(r, "role", {"primary_path", "alternative_path"}, role);
    if (!r.error && role == "alternative_path")
        r.fail("role", "alternative_path: twinrail's data path has no alternative path set");
    cfg.nexthops.push_back({*ip, ip->maxPrefixLen()});
    return r.error;
}

// A leaf-list: a JSON array (a file), or a comma list (CONFIG_DB's "field@").
void hashFields(FieldReader& r, const json& row, const std::string& field) {
    for (const std::string& name : {field, field + "@"}) {
        auto it = row.find(name);
        if (it == row.end()) continue;
        std::vector<std::string> items;
        if (it->is_array()) {
            for (const auto& v : *it) {
                if (!v.is_string()) return r.fail(name, "must be a list of hash field names");
                items.push_back(v.get<std::string>());
            }
        } else if (it->is_string()) {
            std::string s = it->get<std::string>();
            for (size_t from = 0; from <= s.size();) {
                auto comma = s.find(',', from);
                items.push_back(s.substr(from, comma - from));
                if (comma == std::string::npos) break;
                from = comma + 1;
            }
        } else {
            return r.fail(name, "must be a list of hash field names");
        }
        for (const auto& i : items)
            if (kHashFields.count(i) == 0) return r.fail(name, "\"" + i + "\" is not a hash field");
    }
}

// SWITCH_HASH|GLOBAL; true when ECMP hashes at random (spray).
std::variant<bool, ConfigError> parseSwitchHash(const json& doc) {
    Rows rows;
    if (auto err = rowsOf(doc, "SWITCH_HASH", rows)) return *err;
    bool spray = false;
    for (const auto& [key, row] : rows) {
        if (key != "GLOBAL")
            return ConfigError{"SWITCH_HASH|" + key, "unknown key (only \"GLOBAL\")"};
        FieldReader r{*row, "SWITCH_HASH|GLOBAL", std::nullopt};
        r.rejectUnknown({"ecmp_hash", "ecmp_hash@", "lag_hash", "lag_hash@", "ecmp_hash_algorithm",
                         "lag_hash_algorithm", "NULL"});
        hashFields(r, *row, "ecmp_hash");
        hashFields(r, *row, "lag_hash");
        std::string algorithm, unused;
        oneOf(r, "ecmp_hash_algorithm", kHashAlgorithms, algorithm);
        oneOf(r, "lag_hash_algorithm", kHashAlgorithms, unused);
        if (r.error) return *r.error;
        spray = algorithm == "RANDOM";
    }
    return spray;
}

std::optional<ConfigError> parseGlobalArs(const json& doc, ArsConfig& cfg) {
    Rows rows;
    if (auto err = rowsOf(doc, kGlobalArsTable, rows)) return *err;
    for (const auto& [key, row] : rows) {
        const std::string where = std::string(kGlobalArsTable) + "|" + key;
        if (key != cfg.object) {
            return ConfigError{where,
                               "\"" + key + "\" is not an ARS_OBJECT" +
                                   (cfg.object.empty() ? "" : " (there is " + cfg.object + ")")};
        }
        FieldReader r{*row, where, std::nullopt};
        r.rejectUnknown({"enabled", "NULL"});
        bool on = true;
        yangBoolean(r, "enabled", on);
        if (r.error) return r.error;
        const AssignMode m = cfg.datapath.mode;
        if (on && (m == AssignMode::FlowletRandom || m == AssignMode::PacketRandom)) {
            return ConfigError{where + " field enabled",
                               "true with a random assign_mode: global ARS refines the quality "
                               "choice; a random one already follows the route's weights"};
        }
        cfg.datapath.global = on;
    }
    return std::nullopt;
}

std::optional<ConfigError> parseArs(const json& doc, ArsConfig& cfg) {
    Rows profiles, objects, interfaces, nexthops;
    const std::pair<const char*, Rows*> tables[] = {{"ARS_PROFILE", &profiles},
                                                    {"ARS_OBJECT", &objects},
                                                    {"ARS_INTERFACES", &interfaces},
                                                    {"ARS_NEXTHOPS", &nexthops}};
    for (const auto& [table, rows] : tables)
        if (auto err = rowsOf(doc, table, *rows)) return err;
    if (profiles.size() > 1) {
        return ConfigError{
            "ARS_PROFILE|" + profiles[1].first,
            "a second profile: SONiC has one (ARS_PROFILE|" + profiles[0].first + ")"};
    }
    if (objects.size() > 1) {
        return ConfigError{"ARS_OBJECT|" + objects[1].first,
                           "a second ARS object: twinrail's data path runs one (ARS_OBJECT|" +
                               objects[0].first + ")"};
    }
    for (const auto* rows : {&profiles, &objects}) {
        for (const auto& [key, row] : *rows) {
            if (auto why = names::check(key, names::Kind::Node)) {
                return ConfigError{rows == &profiles ? "ARS_PROFILE|" + key : "ARS_OBJECT|" + key,
                                   "\"" + key + "\" is not a valid name: " + *why};
            }
        }
    }
    Profile p;
    if (!profiles.empty()) {
        if (auto err = parseProfile(profiles[0].first, *profiles[0].second, cfg, p)) return err;
    }
    if (!objects.empty()) {
        if (profiles.empty())
            return ConfigError{"ARS_OBJECT|" + objects[0].first, "no ARS_PROFILE to create it in"};
        if (auto err = parseObject(objects[0].first, *objects[0].second, p, cfg)) return err;
    }
    if (!p.defaultObject.empty() && p.defaultObject != cfg.object) {
        return ConfigError{"ARS_PROFILE|" + p.name + " field default_ars_object",
                           "\"" + p.defaultObject + "\" is not an ARS_OBJECT"};
    }
    const bool anyRows = !interfaces.empty() || !nexthops.empty();
    if (anyRows && cfg.object.empty()) {
        const auto& [table, key] = interfaces.empty()
                                       ? std::pair{"ARS_NEXTHOPS|", nexthops[0].first}
                                       : std::pair{"ARS_INTERFACES|", interfaces[0].first};
        return ConfigError{table + key, "no ARS_OBJECT to use"};
    }
    for (const auto& [key, row] : interfaces)
        if (auto err = parseInterface(key, *row, doc, cfg.object, cfg)) return err;
    for (const auto& [key, row] : nexthops)
        if (auto err = parseNexthop(key, *row, cfg.object, cfg)) return err;
    // SONiC reads ARS_NEXTHOPS in the nexthop selector mode only.
    if (cfg.selector != NhgSelector::Nexthop) cfg.nexthops.clear();
    cfg.enabled = !cfg.object.empty();
    return std::nullopt;
}

std::variant<ArsConfig, ConfigError> parseAll(const json& doc) {
    if (!doc.is_object()) return ConfigError{"config", "must be a JSON object of tables"};
    ArsConfig cfg;
    if (auto err = parseArs(doc, cfg)) return *err;
    auto spray = parseSwitchHash(doc);
    if (auto* err = std::get_if<ConfigError>(&spray)) return *err;
    if (std::get<bool>(spray)) {
        if (cfg.enabled) {
            return ConfigError{"SWITCH_HASH|GLOBAL field ecmp_hash_algorithm",
                               "RANDOM with ARS_OBJECT|" + cfg.object +
                                   ": twinrail's data path runs one mode; drop one of them"};
        }
        // Spray: every multipath route, each packet to a next hop at random by weight.
        cfg.enabled = true;
        cfg.selector = NhgSelector::Global;
        cfg.datapath.mode = AssignMode::PacketRandom;
    }
    if (auto err = parseGlobalArs(doc, cfg)) return *err;
    return cfg;
}

}  // namespace

const char* nhgSelectorName(NhgSelector s) {
    switch (s) {
        case NhgSelector::Global:
            return "global";
        case NhgSelector::Nexthop:
            return "nexthop";
        case NhgSelector::Interface:
            break;
    }
    return "interface";
}

std::vector<std::string> arsTables() {
    return {"ARS_PROFILE",  "ARS_OBJECT",  "ARS_INTERFACES",
            "ARS_NEXTHOPS", "SWITCH_HASH", kGlobalArsTable};
}

std::variant<ArsConfig, std::string> parseArsConfig(const nlohmann::json& configDb) {
    auto parsed = parseAll(configDb);
    if (auto* cfg = std::get_if<ArsConfig>(&parsed)) return std::move(*cfg);
    // Keys and values are quoted as read: escaped, so a key cannot forge a log line.
    const auto& err = std::get<ConfigError>(parsed);
    return names::printable(err.where, 256) + ": " + names::printable(err.what, 512);
}

}  // namespace twinrail::ars
