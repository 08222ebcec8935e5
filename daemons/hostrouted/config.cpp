#include "config.h"

#include <fnmatch.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "twinrail/common/ip.h"
#include "twinrail/common/names.h"
#include "twinrail/service/config_fields.h"

namespace twinrail::hostrouted {
namespace {

using nlohmann::json;
using service::FieldReader;

// A table key, as it may appear in an error: "TABLE|<key>", the key shown printable so a
// hostile key cannot break or forge the log line that reports it.
std::string keyWhere(const std::string& table, const std::string& key) {
    return table + "|" + names::printable(key);
}

// Why `value` is not a name of `kind`, as the error for it says it: nullopt when it is.
std::optional<std::string> badName(const std::string& value, names::Kind kind) {
    auto why = names::check(value, kind);
    if (!why) return std::nullopt;
    return std::string(names::kindName(kind)) + " \"" + names::printable(value) + "\" " + *why;
}

// evpn_vty is a socket path that hostrouted connects to: absolute, and nothing in it that
// a log line or a path component should not carry.
std::optional<std::string> badSocketPath(const std::string& path) {
    if (path.empty() || path[0] != '/') return "must be an absolute path";
    if (path.size() > 107) return "is longer than a unix socket path (107 bytes)";
    for (char c : path) {
        auto byte = static_cast<unsigned char>(c);
        if (byte <= 0x20 || byte >= 0x7f)
            return "\"" + names::printable(path) + "\" contains a control, space or non-ASCII byte";
    }
    if (path.find("/../") != std::string::npos || path.ends_with("/.."))
        return "\"" + names::printable(path) + "\" contains \"..\"";
    return std::nullopt;
}

// A prefix is written as its network (10.1.2.0/24): the kernel's route for it has that
// destination, so 10.1.2.5/24 would never be found.
bool isNetwork(const IpPrefix& p) {
    const uint8_t* b = p.addr.data();
    for (int bit = p.length; bit < p.addr.maxPrefixLen(); ++bit)
        if ((b[bit / 8] & (0x80 >> (bit % 8))) != 0) return false;
    return true;
}

// fabric_prefixes: "10.1.2.0/24,10.1.3.0/24" (spaces around the commas allowed).
void parseFabricPrefixes(FieldReader& r, std::vector<IpPrefix>& out) {
    constexpr size_t kMaxPrefixes = 4096;
    auto text = r.text("fabric_prefixes");
    if (!text) return;
    std::vector<IpPrefix> found;
    size_t start = 0;
    while (start <= text->size()) {
        size_t comma = text->find(',', start);
        if (comma == std::string::npos) comma = text->size();
        std::string item = text->substr(start, comma - start);
        start = comma + 1;
        auto b = item.find_first_not_of(' ');
        auto e = item.find_last_not_of(' ');
        item = b == std::string::npos ? "" : item.substr(b, e - b + 1);
        if (item.empty()) {
            if (text->find_first_not_of(' ') == std::string::npos) break;  // "": none
            return r.fail("fabric_prefixes", "has an empty item (a stray comma)");
        }
        auto p = IpPrefix::parse(item);
        if (!p || item.find('/') == std::string::npos) {
            return r.fail("fabric_prefixes",
                          "\"" + names::printable(item) + "\" is not a prefix (a.b.c.d/len)");
        }
        if (!isNetwork(*p)) {
            return r.fail("fabric_prefixes", "\"" + names::printable(item) +
                                                 "\" has host bits set; write its network");
        }
        if (std::find(found.begin(), found.end(), *p) != found.end())
            return r.fail("fabric_prefixes", p->str() + " is listed twice");
        if (found.size() == kMaxPrefixes)
            return r.fail("fabric_prefixes", "lists more than 4096 prefixes");
        found.push_back(*p);
    }
    out = std::move(found);
}

std::optional<ConfigError> parseGlobal(const json& row, Config& cfg) {
    const std::string where = "HOSTROUTED|global";
    if (!row.is_object()) return ConfigError{where, "must be an object of fields"};
    FieldReader r{row, where, std::nullopt};
    r.rejectUnknown({"route_table",
                     "route_protocol",
                     "ipv4",
                     "ipv6",
                     "accept_evpn",
                     "manage_frr",
                     "proxy_arp",
                     "proxy_nd",
                     "keepalive",
                     "holdtime",
                     "max_routes",
                     "max_routes_per_port",
                     "route_rate",
                     "route_burst",
                     "audit_interval",
                     "frr_audit_interval",
                     "pin_table_base",
                     "pin_rule_priority",
                     "pin_min_weight_ratio",
                     "evpn_mh",
                     "evpn_poll_interval",
                     "evpn_vty",
                     "evpn_peer",
                     "evpn_peer_interface",
                     "evpn_detour_table",
                     "evpn_detour_priority",
                     "move_limit",
                     "move_window",
                     "platform",
                     "advertise",
                     "fabric_prefixes",
                     "hold_max_s"});
    // zebra's `ip import-table` accepts 1-252; 253-255 are the kernel's own tables.
    r.integer("route_table", cfg.routeTable, 1, 252);
    // 186-198 are routing daemons' protocol numbers that zebra treats as its own.
    r.integer("route_protocol", cfg.routeProtocol, 199, 254);
    r.boolean("ipv4", cfg.ipv4);
    r.boolean("ipv6", cfg.ipv6);
    r.boolean("accept_evpn", cfg.acceptEvpn);
    r.boolean("evpn_mh", cfg.evpnMh);
    long long pollMs = cfg.evpnPollInterval.count();
    r.integer("evpn_poll_interval", pollMs, 20, 10000);
    cfg.evpnPollInterval = std::chrono::milliseconds(pollMs);
    if (auto vty = r.text("evpn_vty")) {
        if (auto why = badSocketPath(*vty)) r.fail("evpn_vty", *why);
        cfg.evpnVty = *vty;
    }
    if (auto peer = r.text("evpn_peer")) {
        auto ip = IpAddr::parse(*peer);
        if (!ip || !ip->isV4())
            r.fail("evpn_peer", "must be the ES peer's IPv4 address on the AUX link");
        cfg.evpnPeer = *peer;
    }
    if (auto dev = r.text("evpn_peer_interface")) {
        if (auto why = badName(*dev, names::Kind::Interface)) r.fail("evpn_peer_interface", *why);
        cfg.evpnPeerInterface = *dev;
    }
    if (!r.error && cfg.evpnPeer.empty() != cfg.evpnPeerInterface.empty())
        r.fail("evpn_peer", "evpn_peer and evpn_peer_interface go together");
    r.integer("evpn_detour_table", cfg.evpnDetourTable, 256, 1'000'000'000);
    r.integer("evpn_detour_priority", cfg.evpnDetourPriority, 1, 32764);
    r.boolean("manage_frr", cfg.manageFrr);
    r.boolean("proxy_arp", cfg.proxyArp);
    r.boolean("proxy_nd", cfg.proxyNd);
    r.seconds("keepalive", cfg.keepalive, 0, 3600);
    r.seconds("holdtime", cfg.holdtime, 0.1, 86400);
    r.integer("max_routes", cfg.maxRoutes, 1, 10'000'000);
    r.integer("max_routes_per_port", cfg.maxRoutesPerPort, 1, 10'000'000);
    long long rate = static_cast<long long>(cfg.routeRate);
    r.integer("route_rate", rate, 1, 10'000'000);
    cfg.routeRate = static_cast<double>(rate);
    r.integer("route_burst", cfg.routeBurst, 1, 10'000'000);
    long long audit = cfg.auditInterval.count();
    r.integer("audit_interval", audit, 0, 86400);
    cfg.auditInterval = std::chrono::seconds(audit);
    long long frrAudit = cfg.frrAuditInterval.count();
    r.integer("frr_audit_interval", frrAudit, 0, 86400);
    cfg.frrAuditInterval = std::chrono::seconds(frrAudit);
    // Above the kernel's own tables and zebra's import range (1-252).
    r.integer("pin_table_base", cfg.pinTableBase, 256, 1'000'000'000);
    // Ahead of main (32766); 0 is the local table's.
    r.integer("pin_rule_priority", cfg.pinRulePriority, 1, 32765);
    r.number("pin_min_weight_ratio", cfg.pinMinWeightRatio, 0, 1);
    r.integer("move_limit", cfg.moveLimit, 0, 1000);
    long long moveWindow = cfg.moveWindow.count();
    r.integer("move_window", moveWindow, 1, 86400);
    cfg.moveWindow = std::chrono::seconds(moveWindow);
    if (auto platform = r.text("platform")) {
        if (*platform == "linux") {
            cfg.platform = Platform::Linux;
        } else if (*platform == "sonic") {
            cfg.platform = Platform::Sonic;
        } else {
            r.fail("platform",
                   "must be linux or sonic, not \"" + names::printable(*platform) + "\"");
        }
    }
    if (auto advertise = r.text("advertise")) {
        if (*advertise == "import-table") {
            cfg.advertise = Advertise::ImportTable;
        } else if (*advertise == "table-direct") {
            cfg.advertise = Advertise::TableDirect;
        } else if (*advertise == "network-table") {
            cfg.advertise = Advertise::NetworkTable;
        } else {
            r.fail("advertise", "must be import-table, table-direct or network-table, not \"" +
                                    names::printable(*advertise) + "\"");
        }
    }
    parseFabricPrefixes(r, cfg.fabricPrefixes);
    long long holdMax = cfg.holdMax.count();
    r.integer("hold_max_s", holdMax, 1, 3600);
    cfg.holdMax = std::chrono::seconds(holdMax);
    if (!r.error && !cfg.fabricPrefixes.empty() && cfg.platform == Platform::Sonic) {
        r.fail("fabric_prefixes",
               "the host-port hold is Linux only: on SONiC it would be CONFIG_DB "
               "PORT|<port> admin_status, which hostrouted does not write");
    }
    if (!r.error && cfg.keepalive.count() > 0 && cfg.holdtime < 2 * cfg.keepalive) {
        r.fail("holdtime",
               "must be at least twice keepalive, so one lost probe is not a "
               "withdrawal");
    }
    return r.error;
}

std::optional<ConfigError> parsePins(const json& table, Config& cfg) {
    if (!table.is_object()) return ConfigError{"UPLINK_PIN", "must be an object of keys"};
    for (auto row = table.begin(); row != table.end(); ++row) {
        std::string where = keyWhere("UPLINK_PIN", row.key());
        if (auto why = badName(row.key(), names::Kind::Interface)) return ConfigError{where, *why};
        if (!row.value().is_object()) return ConfigError{where, "must be an object"};
        FieldReader r{row.value(), where, std::nullopt};
        r.rejectUnknown({"uplink"});
        std::string uplink = r.text("uplink").value_or("");
        if (r.error) return *r.error;
        if (uplink.empty()) return ConfigError{where + " field uplink", "missing"};
        if (auto why = badName(uplink, names::Kind::Interface))
            return ConfigError{where + " field uplink", *why};
        if (uplink == row.key())
            return ConfigError{where + " field uplink", "a port cannot be pinned to itself"};
        cfg.uplinkPins[row.key()] = uplink;
    }
    for (const auto& [down, up] : cfg.uplinkPins) {
        if (cfg.uplinkPins.count(up) != 0) {
            return ConfigError{"UPLINK_PIN|" + up,
                               "is pinned itself, and is the uplink of " + down};
        }
    }
    return std::nullopt;
}

}  // namespace

std::string_view platformName(Platform p) {
    return p == Platform::Sonic ? "sonic" : "linux";
}

std::string_view advertiseName(Advertise a) {
    switch (a) {
        case Advertise::ImportTable:
            return "import-table";
        case Advertise::TableDirect:
            return "table-direct";
        case Advertise::NetworkTable:
            return "network-table";
    }
    return "import-table";
}

bool Config::managesInterface(const std::string& ifname) const {
    for (const auto& pattern : interfaces)
        if (fnmatch(pattern.c_str(), ifname.c_str(), 0) == 0) return true;
    return false;
}

std::variant<Config, ConfigError> parseConfig(const json& configDb) {
    Config cfg;
    if (!configDb.is_object()) return ConfigError{"config", "top level must be a JSON object"};
    if (auto it = configDb.find("HOSTROUTED"); it != configDb.end()) {
        if (!it->is_object()) return ConfigError{"HOSTROUTED", "must be an object of keys"};
        for (auto row = it->begin(); row != it->end(); ++row) {
            if (row.key() != "global")
                return ConfigError{keyWhere("HOSTROUTED", row.key()), "unknown key; only 'global'"};
            if (auto err = parseGlobal(row.value(), cfg)) return *err;
        }
    }
    if (auto it = configDb.find("HOSTROUTED_INTERFACE"); it != configDb.end()) {
        if (!it->is_object())
            return ConfigError{"HOSTROUTED_INTERFACE", "must be an object of keys"};
        for (auto row = it->begin(); row != it->end(); ++row) {
            std::string where = keyWhere("HOSTROUTED_INTERFACE", row.key());
            // The key is a kernel name or a glob over them; it reaches fnmatch(), logs and
            // FRR's configuration, so it must pass the one name grammar.
            if (auto why = badName(row.key(), names::Kind::InterfacePattern))
                return ConfigError{where, *why};
            if (!row.value().is_object()) return ConfigError{where, "must be an object"};
            FieldReader r{row.value(), where, std::nullopt};
            r.rejectUnknown({"enabled", "NULL"});  // "NULL": SONiC's empty-row marker
            bool enabled = true;
            r.boolean("enabled", enabled);
            if (r.error) return *r.error;
            if (enabled) cfg.interfaces.push_back(row.key());
        }
    }
    if (auto it = configDb.find("UPLINK_PIN"); it != configDb.end()) {
        if (auto err = parsePins(*it, cfg)) return *err;
    }
    if (auto it = configDb.find("HOSTROUTED_BINDING"); it != configDb.end()) {
        if (auto err = parseBindings(*it, cfg.bindings)) return *err;
    }
    if (auto it = configDb.find("HOSTROUTED_UNFREEZE"); it != configDb.end()) {
        if (auto err = parseUnfreeze(*it, cfg.unfreeze)) return *err;
    }
    if (auto it = configDb.find("HOSTROUTED_NOTICE"); it != configDb.end()) {
        if (auto err = parseNoticeConfig(*it, cfg.notices)) return *err;
    }
    return cfg;
}

std::variant<std::monostate, ConfigError> checkRuntimeChange(const Config& running,
                                                             const Config& next) {
    if (running.routeTable != next.routeTable) {
        return ConfigError{"HOSTROUTED|global field route_table",
                           "cannot change while running (every route would move); restart "
                           "hostrouted"};
    }
    if (running.evpnMh != next.evpnMh || running.evpnVty != next.evpnVty ||
        running.evpnPollInterval != next.evpnPollInterval || running.evpnPeer != next.evpnPeer ||
        running.evpnPeerInterface != next.evpnPeerInterface ||
        running.evpnDetourTable != next.evpnDetourTable ||
        running.evpnDetourPriority != next.evpnDetourPriority) {
        return ConfigError{"HOSTROUTED|global field evpn_mh",
                           "EVPN-MH settings cannot change while running; restart hostrouted"};
    }
    if (running.notices != next.notices) {
        return ConfigError{"HOSTROUTED_NOTICE|global",
                           "fast notice settings cannot change while running; restart hostrouted"};
    }
    if (running.platform != next.platform) {
        return ConfigError{"HOSTROUTED|global field platform",
                           "cannot change while running; restart hostrouted"};
    }
    if (running.advertise != next.advertise) {
        return ConfigError{"HOSTROUTED|global field advertise",
                           "cannot change while running (every advertisement would move); "
                           "restart hostrouted"};
    }
    if (running.routeProtocol != next.routeProtocol) {
        return ConfigError{"HOSTROUTED|global field route_protocol",
                           "cannot change while running; restart hostrouted"};
    }
    return std::monostate{};
}

}  // namespace twinrail::hostrouted
