// `twinrail sonic-apply`'s decisions (sonic_apply.h): DPB emulated on the running config,
// the preset's rows that conflict with the plan, the target, the steps.
#include "twinrail/plan/sonic_apply.h"

#include <regex>
#include <set>
#include <sstream>

#include "twinrail/common/names.h"

namespace twinrail::plan {
namespace {

using json = nlohmann::json;

std::vector<std::string> splitKey(const std::string& key) {
    std::vector<std::string> out;
    size_t from = 0;
    for (size_t bar; (bar = key.find('|', from)) != std::string::npos; from = bar + 1)
        out.push_back(key.substr(from, bar - from));
    out.push_back(key.substr(from));
    return out;
}

const json& tableOf(const json& db, const char* name) {
    static const json kEmpty = json::object();
    auto it = db.find(name);
    return it != db.end() && it->is_object() ? *it : kEmpty;
}

// What DPB -f drops with the old ports: every row a key component of which names one,
// their CABLE_LENGTH entries and their places in ACL tables' port lists.
void dropDependents(json& db, const std::set<std::string>& gone) {
    for (auto& [table, rows] : db.items()) {
        if (table == "PORT" || !rows.is_object()) continue;
        for (auto it = rows.begin(); it != rows.end();) {
            bool hit = false;
            for (const auto& part : splitKey(it.key())) hit = hit || gone.count(part) > 0;
            if (hit) {
                it = rows.erase(it);
                continue;
            }
            if (table == "CABLE_LENGTH" && it->is_object())
                for (const auto& p : gone) it->erase(p);
            if (table == "ACL_TABLE" && it->is_object() && it->contains("ports") &&
                (*it)["ports"].is_array()) {
                json kept = json::array();
                for (const auto& p : (*it)["ports"])
                    if (!p.is_string() || gone.count(p.get<std::string>()) == 0) kept.push_back(p);
                (*it)["ports"] = kept;
            }
            ++it;
        }
    }
}

// The running config as `config interface breakout -f` leaves it; the new ports' names.
std::variant<json, std::string> afterBreakouts(const json& running,
                                               const std::map<std::string, Breakout>& breakouts,
                                               std::vector<std::string>& newPorts,
                                               std::set<std::string>& already) {
    auto sku = skuOfRunningConfig(running);
    if (auto* why = std::get_if<std::string>(&sku)) return *why;
    json db = running;
    std::set<std::string> done;  // already in the plan's mode: DPB would do nothing
    for (const auto& cage : physicalPorts(std::get<Sku>(sku))) {
        auto b = breakouts.find(cage.base().name);
        if (b == breakouts.end()) continue;
        const json& cfg = tableOf(running, "BREAKOUT_CFG");
        if (cfg.contains(b->first) &&
            cfg[b->first].value("brkout_mode", "") == b->second.mode.text &&
            static_cast<int>(cage.rows.size()) == b->second.mode.count) {
            done.insert(b->first);
            continue;
        }
        auto ports = breakoutPorts(cage, b->second);
        if (auto* why = std::get_if<std::string>(&ports)) return *why;
        std::set<std::string> gone;
        for (const auto* r : cage.rows) {
            gone.insert(r->name);
            db["PORT"].erase(r->name);
        }
        dropDependents(db, gone);
        for (const auto& p : std::get<std::vector<SkuPort>>(ports)) {
            db["PORT"][p.name] = sonicPortRow(p);
            newPorts.push_back(p.name);
        }
        db["BREAKOUT_CFG"][cage.base().name] = {{"brkout_mode", b->second.mode.text}};
    }
    already = done;
    for (const auto& [base, b] : breakouts) {
        if (!db["BREAKOUT_CFG"].contains(base) ||
            db["BREAKOUT_CFG"][base].value("brkout_mode", "") != b.mode.text) {
            return "breakouts.json names " + names::printable(base) +
                   ", which is not the first port of a cage in the switch's PORT table";
        }
    }
    return db;
}

// Every EthernetN the overlay names must be a port of the switch after its breakouts.
std::optional<std::string> missingPort(const json& overlay, const json& db) {
    static const std::regex kPort("Ethernet[0-9]+");
    for (const auto& [table, rows] : overlay.items()) {
        if (!rows.is_object()) continue;
        for (const auto& [key, row] : rows.items()) {
            for (const auto& part : splitKey(key)) {
                if (std::regex_match(part, kPort) && !tableOf(db, "PORT").contains(part)) {
                    return table + "|" + key + ": the switch has no port " + part +
                           " (after the plan's breakouts)";
                }
            }
        }
    }
    return std::nullopt;
}

std::set<std::string> memberPorts(const json& overlay) {
    std::set<std::string> out;
    for (const char* t : {"VLAN_MEMBER", "PORTCHANNEL_MEMBER"}) {
        for (const auto& [key, row] : tableOf(overlay, t).items()) {
            auto parts = splitKey(key);
            if (parts.size() == 2) out.insert(parts[1]);
        }
    }
    return out;
}

using Deletions = std::vector<std::pair<std::string, std::string>>;

void interfaceDeletions(const json& db, const json& overlay, Deletions& out) {
    const auto members = memberPorts(overlay);
    const json& planned = tableOf(overlay, "INTERFACE");
    for (const auto& [key, row] : tableOf(db, "INTERFACE").items()) {
        auto parts = splitKey(key);
        const std::string& port = parts[0];
        if (members.count(port) > 0) {
            out.emplace_back("INTERFACE|" + key,
                             port +
                                 " becomes a VLAN or PortChannel member, and portsorch "
                                 "refuses a member that is a router interface");
        } else if (parts.size() == 2 && planned.contains(port) && !planned.contains(key)) {
            out.emplace_back("INTERFACE|" + key, "not the plan's address on " + port);
        } else if (!planned.contains(port) && !planned.contains(key)) {
            // The preset's t1 router interface on a port the plan leaves unused: a /31 to
            // a neighbour that is not there (its BGP_NEIGHBOR goes too).
            out.emplace_back("INTERFACE|" + key, port + " is not in the plan");
        }
    }
}

Deletions deletionsFor(const json& db, const json& overlay) {
    Deletions out;
    interfaceDeletions(db, overlay, out);
    const json& loopbacks = tableOf(overlay, "LOOPBACK_INTERFACE");
    for (const auto& [key, row] : tableOf(db, "LOOPBACK_INTERFACE").items()) {
        auto parts = splitKey(key);
        if (parts.size() == 2 && loopbacks.contains(parts[0]) && !loopbacks.contains(key))
            out.emplace_back("LOOPBACK_INTERFACE|" + key, "not the plan's " + parts[0]);
    }
    for (const auto& [key, row] : tableOf(db, "BGP_NEIGHBOR").items()) {
        out.emplace_back("BGP_NEIGHBOR|" + key,
                         "bgpcfgd renders BGP_NEIGHBOR into FRR even in split-unified mode; the "
                         "plan's sessions are in frr.conf");
    }
    return out;
}

void applyDeletions(json& db, const Deletions& deletions) {
    for (const auto& [full, why] : deletions) {
        const auto bar = full.find('|');
        const std::string table = full.substr(0, bar);
        if (db.contains(table)) db[table].erase(full.substr(bar + 1));
    }
}

// config load: table by table, row by row, field by field.
void loadOnto(json& db, const json& overlay) {
    for (const auto& [table, rows] : overlay.items()) {
        for (const auto& [key, row] : rows.items()) {
            json& into = db[table][key];
            if (!into.is_object()) into = json::object();
            for (const auto& [field, value] : row.items()) into[field] = value;
        }
    }
}

std::string csv(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
    return out;
}

void breakoutSteps(const std::map<std::string, Breakout>& breakouts, const json& db,
                   std::vector<SonicApplyStep>& steps) {
    for (const auto& [base, b] : breakouts) {
        steps.push_back({{"config", "interface", "breakout", base, b.mode.text, "-y", "-f"},
                         "dynamic port breakout of " + base + " (platform.json's mode)"});
        if (b.speedGbps == b.mode.speedGbps) continue;
        // The mode's alternative speed: each port of the cage, set after DPB made it.
        const std::string index = tableOf(db, "PORT")[base].value("index", "");
        for (const auto& [port, row] : tableOf(db, "PORT").items()) {
            if (row.value("index", "") == index) {
                steps.push_back(
                    {{"config", "interface", "speed", port, std::to_string(b.speedGbps * 1000L)},
                     port + " at the plan's speed"});
            }
        }
    }
}

// frr.conf's `interface X` / ` evpn mh es-id Y` against EVPN_ETHERNET_SEGMENT|X esi.
std::optional<std::string> esiMismatch(const json& overlay, const std::string& frrConf) {
    std::map<std::string, std::string> inFrr;
    std::istringstream in(frrConf);
    std::string interface;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("interface ", 0) == 0) interface = line.substr(10);
        constexpr std::string_view kEs = " evpn mh es-id ";
        if (line.rfind(kEs, 0) == 0 && !interface.empty())
            inFrr[interface] = line.substr(kEs.size());
    }
    const json& segments = tableOf(overlay, "EVPN_ETHERNET_SEGMENT");
    for (const auto& [lag, row] : segments.items()) {
        const std::string esi = row.value("esi", "");
        auto f = inFrr.find(lag);
        if (f == inFrr.end() || f->second != esi) {
            return "EVPN_ETHERNET_SEGMENT|" + lag + " esi " + esi + ", but frr.conf gives " + lag +
                   (f == inFrr.end() ? " no es-id" : " es-id " + f->second) +
                   ": the pair would see two segments (nothing in SONiC renders one from the "
                   "other; edit the plan, not the files)";
        }
    }
    for (const auto& [lag, esi] : inFrr) {
        if (!segments.contains(lag))
            return "frr.conf gives " + lag + " an es-id, CONFIG_DB no segment";
    }
    return std::nullopt;
}

}  // namespace

std::variant<SonicApply, std::string> sonicApply(const SonicApplyInput& in) {
    if (auto why = esiMismatch(in.overlay, in.frrConf)) return *why;
    const json& md = tableOf(in.running, "DEVICE_METADATA").value("localhost", json::object());
    const std::string model = md.value("buffer_model", "traditional");
    const std::string want =
        in.options.bufferModel == SonicBufferModel::Dynamic ? "dynamic" : "traditional";
    if (model != want) {
        return "DEVICE_METADATA|localhost buffer_model: the switch runs the " + model +
               " buffer model, the plan was made for " + want +
               " (twinrail-plan --sonic-buffer-model " + model + ")";
    }
    SonicApply out;
    std::vector<std::string> newPorts;
    std::set<std::string> already;
    auto after = afterBreakouts(in.running, in.breakouts, newPorts, already);
    if (auto* why = std::get_if<std::string>(&after)) return *why;
    out.afterBreakout = std::move(std::get<json>(after));
    if (auto why = missingPort(in.overlay, out.afterBreakout)) return *why;
    out.deletions = deletionsFor(out.afterBreakout, in.overlay);
    out.target = out.afterBreakout;
    applyDeletions(out.target, out.deletions);
    loadOnto(out.target, in.overlay);

    std::map<std::string, Breakout> todo;
    for (const auto& [base, b] : in.breakouts)
        if (already.count(base) == 0) todo.emplace(base, b);
    breakoutSteps(todo, out.afterBreakout, out.steps);
    const bool pool = tableOf(in.running, "BUFFER_POOL").contains("ingress_lossless_pool");
    const bool qos = !pool || !newPorts.empty();
    if (qos) {
        const json& planned =
            tableOf(in.overlay, "DEVICE_METADATA").value("localhost", json::object());
        std::vector<std::string> hset{"sonic-db-cli", "CONFIG_DB", "HSET",
                                      "DEVICE_METADATA|localhost"};
        for (const char* f : {"type", "resource_type"})
            if (planned.contains(f)) hset.insert(hset.end(), {f, planned[f].get<std::string>()});
        if (hset.size() > 4)
            out.steps.push_back({hset, "the device type the QoS and buffer templates read"});
        out.steps.push_back(
            pool ? SonicApplyStep{{"config", "qos", "reload", "--ports", csv(newPorts)},
                                  "buffer and QoS rows of the ports DPB made"}
                 : SonicApplyStep{{"config", "qos", "reload"},
                                  "no BUFFER_POOL|ingress_lossless_pool yet: the switch's "
                                  "buffers and QoS from its templates"});
    }
    for (const auto& [key, why] : out.deletions)
        out.steps.push_back({{"sonic-db-cli", "CONFIG_DB", "DEL", key}, why});
    out.steps.push_back({{"config", "load", "-y", "config_db.overlay.json"},
                         "the plan's rows, merged field by field"});
    out.steps.push_back({{"cp", "frr.conf", "/etc/sonic/frr/frr.conf"},
                         "split-unified: the bgp container's one frr.conf"});
    out.steps.push_back({{"config", "save", "-y"}, "keep it across a reboot"});
    out.steps.push_back({{"systemctl", "restart", "bgp"},
                         "bgp reads docker_routing_config_mode and frr.conf when it starts"});
    out.patchApplies = !qos && todo.empty();
    if (out.patchApplies) out.patch = configDbPatch(out.afterBreakout, out.target);
    return out;
}

}  // namespace twinrail::plan
