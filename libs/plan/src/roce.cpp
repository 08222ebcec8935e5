// RoCE QoS: the choices' checks, the server side (DCB unit, NCCL), and the agreement check
// that reads a switch's CONFIG_DB and a server's files back (roce.h).
#include "twinrail/plan/roce.h"

#include <charconv>
#include <map>
#include <set>
#include <sstream>

namespace twinrail::plan {
namespace {

using json = nlohmann::json;

constexpr const char* kDcb = "/usr/sbin/dcb";

std::string n(int v) {
    return std::to_string(v);
}

// A CONFIG_DB field as a string, "" when absent or not a string.
std::string field(const json& db, const std::string& table, const std::string& key,
                  const std::string& name) {
    auto t = db.find(table);
    if (t == db.end() || !t->is_object()) return "";
    auto row = t->find(key);
    if (row == t->end() || !row->is_object()) return "";
    auto f = row->find(name);
    return f != row->end() && f->is_string() ? f->get<std::string>() : "";
}

// "0".."63" and the like; -1 for anything else (a hand-edited file is input too).
int small(const std::string& text) {
    int v = -1;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    return ec == std::errc() && end == text.data() + text.size() && v >= 0 && v <= 63 ? v : -1;
}

void expect(std::vector<std::string>& out, const std::string& what, const std::string& found,
            const std::string& wanted) {
    if (found != wanted) {
        out.push_back(what + ": " + (found.empty() ? "(none)" : "\"" + found + "\"") +
                      ", the plan says \"" + wanted + "\"");
    }
}

// The ports of a switch's overlay that carry RoCE: its fabric ports (PATHQD_PORT), its
// VLAN members that are ports, and its PortChannels' members.
std::vector<RocePort> roceCarryingPorts(const json& db) {
    std::set<std::string> out;
    auto keys = [&db](const char* table) {
        std::vector<std::string> k;
        if (auto t = db.find(table); t != db.end() && t->is_object())
            for (const auto& [key, v] : t->items()) k.push_back(key);
        return k;
    };
    for (const auto& k : keys("PATHQD_PORT")) out.insert(k);
    std::set<std::string> lags;
    for (const auto& k : keys("PORTCHANNEL")) lags.insert(k);
    for (const auto& k : keys("VLAN_MEMBER")) {
        const std::string member = k.substr(k.find('|') + 1);
        if (lags.count(member) == 0) out.insert(member);
    }
    for (const auto& k : keys("PORTCHANNEL_MEMBER")) out.insert(k.substr(k.find('|') + 1));
    std::vector<RocePort> ports;
    for (const auto& name : out) {
        const bool fabric = db.contains("PATHQD_PORT") && db["PATHQD_PORT"].contains(name);
        ports.push_back({name, fabric});
    }
    return ports;
}

void switchAgreement(const RoceQos& q, const json& db, const std::vector<RocePort>& ports,
                     std::vector<std::string>& out) {
    const std::string prio = n(q.priority);
    for (const auto& [port, fabric] : ports) {
        const std::string at = "PORT_QOS_MAP|" + port;
        expect(out, at + " pfc_enable", field(db, "PORT_QOS_MAP", port, "pfc_enable"), prio);
        const std::string dscpMap = field(db, "PORT_QOS_MAP", port, "dscp_to_tc_map");
        expect(out, "DSCP_TO_TC_MAP|" + dscpMap + " (" + port + ") DSCP " + n(q.dscp),
               field(db, "DSCP_TO_TC_MAP", dscpMap, n(q.dscp)), prio);
        expect(out, "DSCP_TO_TC_MAP|" + dscpMap + " (" + port + ") DSCP " + n(q.cnpDscp),
               field(db, "DSCP_TO_TC_MAP", dscpMap, n(q.cnpDscp)), n(q.cnpPriority));
        for (const auto& [fieldName, table] : std::vector<std::pair<std::string, std::string>>{
                 {"tc_to_queue_map", "TC_TO_QUEUE_MAP"},
                 {"tc_to_pg_map", "TC_TO_PRIORITY_GROUP_MAP"},
                 {"pfc_to_queue_map", "MAP_PFC_PRIORITY_TO_QUEUE"}}) {
            const std::string map = field(db, "PORT_QOS_MAP", port, fieldName);
            expect(out, table + "|" + map + " (" + port + ") " + prio, field(db, table, map, prio),
                   prio);
        }
        const std::string queue = port + "|" + prio;
        const std::string wred = field(db, "QUEUE", queue, "wred_profile");
        const std::string ecn = field(db, "WRED_PROFILE", wred, "ecn");
        if (wred.empty() || ecn.empty() || ecn == "ecn_none")
            out.push_back("QUEUE|" + queue + ": no ECN marking (WRED profile \"" + wred + "\")");
        const std::string cnpQueue = port + "|" + n(q.cnpPriority);
        const std::string sched = field(db, "QUEUE", cnpQueue, "scheduler");
        expect(out, "QUEUE|" + cnpQueue + " scheduler type", field(db, "SCHEDULER", sched, "type"),
               "STRICT");
        std::string length;
        if (auto t = db.find("CABLE_LENGTH"); t != db.end() && t->is_object()) {
            for (const auto& [name, row] : t->items()) {
                if (row.is_object() && row.contains(port) && row[port].is_string())
                    length = row[port].get<std::string>();
            }
        }
        // At least the plan's length: a SONiC switch rounds it up to the next length its
        // pg_profile_lookup.ini has a lossless profile for (sonic_qos.cpp).
        const int planned = fabric ? q.fabricCableM : q.hostCableM;
        int metres = 0;
        const bool parsed =
            length.size() > 1 && length.back() == 'm' &&
            std::from_chars(length.data(), length.data() + length.size() - 1, metres).ptr ==
                length.data() + length.size() - 1;
        if (!parsed || metres < planned) {
            out.push_back("CABLE_LENGTH " + port + " (PFC headroom): \"" + length +
                          "\", the plan says at least \"" + n(planned) + "m\"");
        }
    }
}

void dcbAgreement(const RoceQos& q, const std::string& unit, std::vector<std::string>& out) {
    std::map<std::string, std::set<int>> pfcOn;
    std::map<std::string, std::map<int, int>> dscpPrio;
    std::istringstream in(unit);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("ExecStart=", 0) != 0) continue;
        std::istringstream w(line.substr(10));
        std::vector<std::string> a;
        for (std::string t; w >> t;) a.push_back(t);
        if (a.size() < 6 || a[0] != kDcb || a[3] != "dev") continue;
        const std::string& dev = a[4];
        for (size_t i = 6; i < a.size(); ++i) {
            auto colon = a[i].find(':');
            if (colon == std::string::npos) continue;
            const std::string k = a[i].substr(0, colon), v = a[i].substr(colon + 1);
            if (a[1] == "pfc" && a[5] == "prio-pfc") {
                if (v == "on") pfcOn[dev].insert(small(k));
                if (v == "off") pfcOn[dev];
            } else if (a[1] == "app" && a[5] == "dscp-prio") {
                dscpPrio[dev][small(k)] = small(v);
            }
        }
    }
    if (pfcOn.empty()) out.push_back("DCB unit: no `dcb pfc` line");
    for (const auto& [dev, on] : pfcOn) {
        if (on != std::set<int>{q.priority}) {
            out.push_back("DCB unit " + dev + ": PFC is not on priority " + n(q.priority) +
                          " alone");
        }
        const auto& m = dscpPrio[dev];
        auto at = [&m](int d) { return m.count(d) != 0U ? n(m.at(d)) : ""; };
        expect(out, "DCB unit " + dev + " DSCP " + n(q.dscp), at(q.dscp), n(q.priority));
        expect(out, "DCB unit " + dev + " DSCP " + n(q.cnpDscp), at(q.cnpDscp), n(q.cnpPriority));
    }
}

void ncclAgreement(const RoceQos& q, const std::string& conf, std::vector<std::string>& out) {
    std::string tc;
    std::istringstream in(conf);
    for (std::string line; std::getline(in, line);)
        if (line.rfind("NCCL_IB_TC=", 0) == 0) tc = line.substr(11);
    expect(out, "nccl.conf NCCL_IB_TC", tc, n(roceTrafficClass(q)));
}

}  // namespace

std::optional<std::string> roceQosProblem(const RoceQos& q) {
    auto prio = [](int p) { return p >= 0 && p <= 7; };
    auto dscp = [](int d) { return d >= 0 && d <= 63; };
    if (!prio(q.priority) || !prio(q.cnpPriority)) return "RoCE priorities are 0..7";
    if (!dscp(q.dscp) || !dscp(q.cnpDscp)) return "RoCE DSCPs are 0..63";
    if (q.priority == 0)
        return "the lossless priority cannot be 0: every unmapped DSCP is best effort there";
    if (q.cnpPriority == q.priority)
        return "CNPs need their own priority: behind the data they would come too late";
    if (q.cnpDscp == q.dscp) return "CNPs need their own DSCP";
    if (q.hostCableM < 1 || q.hostCableM > 10000 || q.fabricCableM < 1 || q.fabricCableM > 10000)
        return "cable lengths are 1..10000 m";
    return std::nullopt;
}

int roceTrafficClass(const RoceQos& q) {
    return (q.dscp << 2) | 2;  // ECT(0)
}

std::string roceDcbUnit(const RoceQos& q, const std::string& server,
                        const std::vector<std::string>& ports) {
    std::string pfc;
    for (int p = 0; p <= 7; ++p) pfc += " " + n(p) + (p == q.priority ? ":on" : ":off");
    std::string c = "# generated by twinrail-plan for " + server +
                    ": RoCE QoS on its NIC ports (docs/roce.md); edit the plan, not this file\n"
                    "[Unit]\nDescription=twinrail RoCE DCB: PFC on priority " +
                    n(q.priority) + ", DSCP " + n(q.dscp) + " -> " + n(q.priority) + ", CNP DSCP " +
                    n(q.cnpDscp) + " -> " + n(q.cnpPriority) + "\n";
    for (const auto& port : ports) {
        c += "After=sys-subsystem-net-devices-" + port + ".device\n";
        c += "BindsTo=sys-subsystem-net-devices-" + port + ".device\n";
    }
    c += "Before=network-online.target\n\n[Service]\nType=oneshot\nRemainAfterExit=yes\n";
    for (const auto& port : ports) {
        c += "ExecStart=" + std::string(kDcb) + " pfc set dev " + port + " prio-pfc" + pfc + "\n";
        c += "ExecStart=" + std::string(kDcb) + " app replace dev " + port + " dscp-prio " +
             n(q.dscp) + ":" + n(q.priority) + " " + n(q.cnpDscp) + ":" + n(q.cnpPriority) + "\n";
    }
    c += "\n[Install]\nWantedBy=multi-user.target\n";
    return c;
}

std::string ncclConfig(const RoceQos& q) {
    return "# generated by twinrail-plan: RoCE data in DSCP " + n(q.dscp) +
           " with ECT(0), as the switches map it to lossless priority " + n(q.priority) +
           "\nNCCL_IB_TC=" + n(roceTrafficClass(q)) + "\nNCCL_IB_GID_INDEX=3\n";
}

std::vector<std::string> roceSwitchAgreement(const RoceQos& q, const json& configDb,
                                             const std::vector<RocePort>& ports) {
    std::vector<std::string> out;
    switchAgreement(q, configDb.is_object() ? configDb : json::object(), ports, out);
    return out;
}

const std::vector<std::string>& roceConfigTables() {
    static const std::vector<std::string> kTables{"PORT_QOS_MAP",
                                                  "DSCP_TO_TC_MAP",
                                                  "TC_TO_QUEUE_MAP",
                                                  "TC_TO_PRIORITY_GROUP_MAP",
                                                  "MAP_PFC_PRIORITY_TO_QUEUE",
                                                  "QUEUE",
                                                  "WRED_PROFILE",
                                                  "SCHEDULER",
                                                  "CABLE_LENGTH"};
    return kTables;
}

std::vector<std::string> roceAgreement(const RoceQos& q, const json& configDb,
                                       const std::string& dcbUnit, const std::string& ncclConf) {
    std::vector<std::string> out;
    if (configDb.is_object() && !configDb.empty())
        switchAgreement(q, configDb, roceCarryingPorts(configDb), out);
    if (!dcbUnit.empty()) dcbAgreement(q, dcbUnit, out);
    if (!ncclConf.empty()) ncclAgreement(q, ncclConf, out);
    return out;
}

}  // namespace twinrail::plan
