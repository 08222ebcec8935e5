// The lab's SONiC layout, decided from the overlay's rows (see sonic_layout.h).
#include "twinrail/lab/sonic_layout.h"

#include <set>
#include <sstream>

#include "twinrail/common/ip.h"
#include "twinrail/common/names.h"

namespace twinrail::lab {
namespace {

using json = nlohmann::json;

[[noreturn]] void refuse(const std::string& table, const std::string& key, const std::string& why) {
    throw SonicLayoutError("config_db " + table + "|" + names::printable(key) + ": " + why);
}

// An interface name from a key, checked as the kernel takes it (never a path or option).
std::string ifname(const std::string& table, const std::string& key, const std::string& name) {
    if (auto why = names::check(name, names::Kind::Interface))
        refuse(table, key, "interface name \"" + names::printable(name) + "\" " + *why);
    return name;
}

std::string prefixOf(const std::string& table, const std::string& key, const std::string& text) {
    auto p = IpPrefix::parse(text);
    if (!p || text.find('/') == std::string::npos)
        refuse(table, key, "\"" + names::printable(text) + "\" is not an address/length");
    return p->addr.str() + "/" + std::to_string(p->length);
}

// "name|rest" -> {name, rest}; no bar -> {key, ""}.
std::pair<std::string, std::string> splitKey(const std::string& key) {
    auto bar = key.find('|');
    if (bar == std::string::npos) return {key, ""};
    return {key.substr(0, bar), key.substr(bar + 1)};
}

const json& table(const json& db, const char* name) {
    static const json kEmpty = json::object();
    auto it = db.find(name);
    return it != db.end() && it->is_object() ? *it : kEmpty;
}

std::string field(const json& row, const char* name) {
    auto it = row.find(name);
    return it != row.end() && it->is_string() ? it->get<std::string>() : "";
}

Argv sysctl(const std::string& dev, const std::string& key, const std::string& value,
            bool v6 = false) {
    return {"sysctl", "-qw",
            std::string(v6 ? "net.ipv6.conf." : "net.ipv4.conf.") + dev + "." + key + "=" + value};
}

Argv addressOn(const std::string& dev, const std::string& prefix) {
    Argv a{"ip", "addr", "add", prefix, "dev", dev};
    if (prefix.find(':') != std::string::npos) a.push_back("nodad");
    return a;
}

// intfmgrd's per-interface settings (VLAN_INTERFACE|VlanX, INTERFACE|EthernetN rows).
void interfaceSettings(const std::string& tableName, const std::string& dev, const json& row,
                       std::vector<Argv>& out) {
    if (auto mac = field(row, "mac_addr"); !mac.empty()) {
        if (!parseMac(mac)) refuse(tableName, dev, "mac_addr \"" + names::printable(mac) + "\"");
        out.push_back({"ip", "link", "set", "dev", dev, "address", mac});
    }
    if (auto proxy = field(row, "proxy_arp"); !proxy.empty()) {
        if (proxy != "enabled" && proxy != "disabled")
            refuse(tableName, dev, "proxy_arp \"" + names::printable(proxy) + "\"");
        const std::string v = proxy == "enabled" ? "1" : "0";
        out.push_back(sysctl(dev, "proxy_arp", v));
        out.push_back(sysctl(dev, "proxy_arp_pvlan", v));
    }
    if (auto grat = field(row, "grat_arp"); !grat.empty())
        out.push_back(sysctl(dev, "arp_accept", grat == "enabled" ? "1" : "0"));
    // IPv6 on (its link-local address is the router interface's only one).
    if (field(row, "ipv6_use_link_local_only") == "enable")
        out.push_back(sysctl(dev, "disable_ipv6", "0", true));
}

// intfmgrd's static anycast gateway (master): the SVI answers to SAG|GLOBAL gateway_mac,
// and setSagFdbEntry installs that MAC as the bridge's own. In this kernel's VLAN-unaware
// bridge per VLAN, the bridge's address is that entry.
void sagSettings(const json& db, const std::string& dev, const json& row, std::vector<Argv>& out) {
    const std::string sag = field(row, "static_anycast_gateway");
    if (sag.empty() || sag == "false") return;
    if (sag != "true")
        refuse("VLAN_INTERFACE", dev, "static_anycast_gateway \"" + names::printable(sag) + "\"");
    const json& global = table(db, "SAG");
    const std::string mac = global.contains("GLOBAL") ? field(global["GLOBAL"], "gateway_mac") : "";
    if (!parseMac(mac)) refuse("SAG", "GLOBAL", "gateway_mac \"" + names::printable(mac) + "\"");
    out.push_back({"ip", "link", "set", "dev", dev, "address", mac});
}

bool validVni(const std::string& text) {
    if (text.empty() || text.size() > 8 ||
        text.find_first_not_of("0123456789") != std::string::npos)
        return false;
    const unsigned long v = std::stoul(text);
    return v >= 1 && v <= 16777215;
}

std::set<std::string> vlanNames(const json& db) {
    std::set<std::string> out;
    for (const auto& [key, row] : table(db, "VLAN").items()) {
        ifname("VLAN", key, key);
        if (key.rfind("Vlan", 0) != 0) refuse("VLAN", key, "a VLAN is named VlanN");
        out.insert(key);
    }
    return out;
}

// (VLAN, member) of the untagged members: the PortChannels only, or all but them.
std::vector<std::pair<std::string, std::string>> vlanMembers(const json& db,
                                                             const std::set<std::string>& vlans,
                                                             bool portChannels) {
    std::vector<std::pair<std::string, std::string>> out;
    const json& lags = table(db, "PORTCHANNEL");
    for (const auto& [key, row] : table(db, "VLAN_MEMBER").items()) {
        auto [vlan, port] = splitKey(key);
        if (vlans.count(vlan) == 0) refuse("VLAN_MEMBER", key, "no VLAN|" + vlan + " row");
        ifname("VLAN_MEMBER", key, port);
        if (field(row, "tagging_mode") != "untagged")
            refuse("VLAN_MEMBER", key, "only untagged members (this kernel has no 802.1Q)");
        if (lags.contains(port) == portChannels) out.emplace_back(vlan, port);
    }
    return out;
}

}  // namespace

std::vector<Argv> sonicSegmentCommands(const json& db) {
    const std::set<std::string> vlans = vlanNames(db);
    std::vector<Argv> out;
    for (const auto& [vlan, lag] : vlanMembers(db, vlans, true))
        out.push_back({"ip", "link", "set", "dev", lag, "master", vlan});
    for (const auto& [key, row] : table(db, "VXLAN_TUNNEL_MAP").items()) {
        auto [tunnel, map] = splitKey(key);
        const std::string vlan = field(row, "vlan");
        if (vlans.count(vlan) == 0) refuse("VXLAN_TUNNEL_MAP", key, "no VLAN|" + vlan + " row");
        const json& t = table(db, "VXLAN_TUNNEL");
        auto src = IpAddr::parse(t.contains(tunnel) ? field(t[tunnel], "src_ip") : "");
        if (!src || !src->isV4()) {
            refuse("VXLAN_TUNNEL_MAP", key,
                   "no VXLAN_TUNNEL|" + names::printable(tunnel) + " with an IPv4 src_ip");
        }
        const std::string vni = field(row, "vni");
        if (!validVni(vni))
            refuse("VXLAN_TUNNEL_MAP", key, "vni \"" + names::printable(vni) + "\" (1..16777215)");
        const std::string dev = ifname("VXLAN_TUNNEL_MAP", key, tunnel + "-" + vlan.substr(4));
        out.push_back({"ip", "link", "add", dev, "type", "vxlan", "id", vni, "local", src->str(),
                       "dstport", "4789", "nolearning", "ttl", "64"});
        out.push_back({"ip", "link", "set", "dev", dev, "master", vlan});
        out.push_back({"bridge", "link", "set", "dev", dev, "learning", "off", "neigh_suppress",
                       "on", "flood", "off"});
        out.push_back({"ip", "link", "set", "dev", dev, "up"});
    }
    return out;
}

std::vector<Argv> sonicKernelCommands(const json& db) {
    const std::set<std::string> vlans = vlanNames(db);
    std::vector<Argv> out;
    out.reserve(vlans.size());
    for (const std::string& dev : vlans)
        out.push_back({"ip", "link", "add", dev, "type", "bridge"});
    // The SVI's MAC before any member joins: a bridge given its address keeps it.
    for (const auto& [key, row] : table(db, "VLAN_INTERFACE").items()) {
        auto [dev, prefix] = splitKey(key);
        if (!prefix.empty()) continue;
        if (vlans.count(dev) == 0) refuse("VLAN_INTERFACE", key, "no VLAN|" + dev + " row");
        interfaceSettings("VLAN_INTERFACE", dev, row, out);
        sagSettings(db, dev, row, out);
    }
    for (const auto& [vlan, port] : vlanMembers(db, vlans, false))
        out.push_back({"ip", "link", "set", "dev", port, "master", vlan});
    for (const std::string& vlan : vlans) out.push_back({"ip", "link", "set", "dev", vlan, "up"});
    for (const auto& [key, row] : table(db, "VLAN_INTERFACE").items()) {
        auto [dev, prefix] = splitKey(key);
        if (prefix.empty()) continue;
        if (vlans.count(dev) == 0) refuse("VLAN_INTERFACE", key, "no VLAN|" + dev + " row");
        out.push_back(addressOn(dev, prefixOf("VLAN_INTERFACE", key, prefix)));
    }
    for (const auto& [key, row] : table(db, "INTERFACE").items()) {
        auto [dev, prefix] = splitKey(key);
        ifname("INTERFACE", key, dev);
        if (prefix.empty()) {
            interfaceSettings("INTERFACE", dev, row, out);
        } else {
            out.push_back(addressOn(dev, prefixOf("INTERFACE", key, prefix)));
        }
    }
    for (const auto& [key, row] : table(db, "LOOPBACK_INTERFACE").items()) {
        auto [dev, prefix] = splitKey(key);
        ifname("LOOPBACK_INTERFACE", key, dev);
        if (!prefix.empty())
            out.push_back(addressOn("lo", prefixOf("LOOPBACK_INTERFACE", key, prefix)));
    }
    return out;
}

json labDatabaseConfig(const std::string& unixSocket) {
    json dbs = json::object();
    const std::vector<std::tuple<const char*, int, const char*>> k{{"APPL_DB", 0, ":"},
                                                                   {"ASIC_DB", 1, ":"},
                                                                   {"COUNTERS_DB", 2, ":"},
                                                                   {"LOGLEVEL_DB", 3, ":"},
                                                                   {"CONFIG_DB", 4, "|"},
                                                                   {"PFC_WD_DB", 5, ":"},
                                                                   {"FLEX_COUNTER_DB", 5, ":"},
                                                                   {"STATE_DB", 6, "|"},
                                                                   {"SNMP_OVERLAY_DB", 7, "|"},
                                                                   {"RESTAPI_DB", 8, "|"},
                                                                   {"GB_ASIC_DB", 9, ":"},
                                                                   {"GB_COUNTERS_DB", 10, ":"},
                                                                   {"GB_FLEX_COUNTER_DB", 11, ":"},
                                                                   {"APPL_STATE_DB", 14, ":"}};
    for (const auto& [name, id, sep] : k)
        dbs[name] = {{"id", id}, {"separator", sep}, {"instance", "redis"}};
    // No hostname/port: the lab's Redis listens on its unix socket only (--port 0).
    return {{"INSTANCES",
             {{"redis", {{"unix_socket_path", unixSocket}, {"persistence_for_warm_boot", "yes"}}}}},
            {"DATABASES", dbs},
            {"VERSION", "1.0"}};
}

void applyLabOverrides(json& db) {
    if (db.contains("PATHQD")) {
        json& g = db["PATHQD"]["global"];
        // No syncd, no fpmsyncd: counters and forwarding weights come from the kernel.
        g["source"] = "linux";
        g["weight_audit_source"] = "kernel";
        // veth ports report 10 Gbit/s; namespaces jitter by hundreds of microseconds.
        g["reference_mbps"] = "10000";
        g["latency_ref_us"] = "5000";
    }
    if (db.contains("PATHQD_PORT")) {
        for (auto& [port, row] : db["PATHQD_PORT"].items()) row["capacity_mbps"] = "10000";
    }
    // The Linux layout's liveness: a lost host leaves in 3 s.
    if (db.contains("HOSTROUTED")) {
        json& g = db["HOSTROUTED"]["global"];
        g["keepalive"] = "1";
        g["holdtime"] = "3";
        // This machine's FRR 8.4 has no table-direct: the lab's FRR takes the table the
        // older way (labFrrConf), and hostrouted checks for those lines.
        if (g.value("advertise", "") == "table-direct") g["advertise"] = "import-table";
    }
}

json mergeConfigDb(const json& base, const json& overlay) {
    json out = base.is_object() ? base : json::object();
    for (const auto& [t, rows] : overlay.items()) {
        if (!rows.is_object()) continue;
        for (const auto& [key, fields] : rows.items()) {
            json& row = out[t][key];
            if (!row.is_object()) row = json::object();
            if (fields.is_object())
                for (const auto& [f, v] : fields.items()) row[f] = v;
        }
    }
    return out;
}

plan::Plan withSkuPortNames(const plan::Plan& p,
                            const std::map<std::string, plan::PortMap>& portMaps) {
    auto rename = [&portMaps](const std::string& sw, const std::string& port) {
        auto m = portMaps.find(sw);
        if (m == portMaps.end()) throw SonicLayoutError("switch " + sw + ": no HWSKU port map");
        auto it = m->second.names.find(port);
        if (it == m->second.names.end())
            throw SonicLayoutError("switch " + sw + " port " + port + ": not in its HWSKU");
        return it->second;
    };
    plan::Plan out = p;
    for (auto& sw : out.switches) {
        for (auto& port : sw.ports) {
            port.name = rename(sw.name, port.name);
            if (!port.pinnedUplink.empty()) port.pinnedUplink = rename(sw.name, port.pinnedUplink);
            if (port.role != plan::PortRole::Host) port.peerPort = rename(port.peer, port.peerPort);
        }
    }
    for (auto& srv : out.servers) {
        for (auto& nic : srv.nics)
            for (auto& np : nic.ports) np.leafPort = rename(np.leaf, np.leafPort);
    }
    return out;
}

json sonicRecord(plan::SonicRelease release, const std::map<std::string, plan::PortMap>& portMaps) {
    json ports = json::object();
    for (const auto& [sw, m] : portMaps)
        for (const auto& [planPort, eth] : m.names) ports[sw][planPort] = eth;
    return {{"nos", "sonic"}, {"release", plan::sonicReleaseName(release)}, {"ports", ports}};
}

std::string labPortName(const json& record, const std::string& node, const std::string& port) {
    if (!record.is_object() || !record.contains("ports")) return port;
    const json& ports = record["ports"];
    auto sw = ports.find(node);
    if (sw == ports.end() || !sw->is_object()) return port;
    auto it = sw->find(port);
    return it != sw->end() && it->is_string() ? it->get<std::string>() : port;
}

std::string labFrrConf(const std::string& conf) {
    std::istringstream in(conf);
    std::string out;
    std::string imports;
    constexpr std::string_view kTableDirect = "  redistribute table-direct ";
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("fpm ", 0) == 0 || line.rfind("no fpm ", 0) == 0) continue;
        if (line.rfind(kTableDirect, 0) == 0) {
            const std::string id = line.substr(kTableDirect.size());
            if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
                throw SonicLayoutError("frr.conf: \"" + names::printable(line) + "\"");
            imports += "ip import-table " + id + "\n";
            line = "  redistribute table " + id;
        }
        out += line + "\n";
    }
    // Zebra's lines before `router bgp`, after the header (`frr defaults` first).
    const auto at = out.find("\nrouter bgp ");
    if (!imports.empty() && at != std::string::npos) out.insert(at + 1, imports + "!\n");
    return out;
}

}  // namespace twinrail::lab
