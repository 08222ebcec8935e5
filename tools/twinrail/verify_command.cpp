// `twinrail verify`: reads the plan and every switch's STATE_DB (through the planner's
// inventory, or a lab's sockets), then prints verifyFabric()'s verdicts.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "twinrail/common/sysexits.h"
#include "twinrail/common/tool_main.h"
#include "twinrail/plan/roce.h"
#include "twinrail/redis/sync_reader.h"
#include "verify.h"
#include "verify_command.h"

namespace twinrail::cli {
namespace {

using json = nlohmann::json;
constexpr int kStateDb = 6;  // SONiC's STATE_DB id; a switch's own Redis
constexpr int kConfigDb = 4;
constexpr int kCountersDb = 2;

std::optional<json> readJson(const std::string& path) {
    std::ifstream in(path);
    auto j = json::parse(in, nullptr, false);
    if (!in.is_open() || j.is_discarded()) return std::nullopt;
    return j;
}

std::map<std::string, Fields> table(redis::SyncReader& r, const std::string& name) {
    std::map<std::string, Fields> out;
    const std::string prefix = name + "|";
    for (const auto& key : r.keys(prefix + "*")) out[key.substr(prefix.size())] = r.hash(key);
    return out;
}

// CONFIG_DB's RoCE QoS tables, as JSON (what roceSwitchAgreement reads).
void readQos(const redis::Endpoint& at, SwitchState& s) {
    redis::SyncReader r;
    if (auto err = r.connect(at, kConfigDb)) {
        s.configError = *err;
        return;
    }
    for (const auto& name : plan::roceConfigTables()) {
        for (const auto& [key, fields] : table(r, name)) {
            json row = json::object();
            for (const auto& [f, v] : fields) row[f] = v;
            s.config[name][key] = row;
        }
        if (r.error()) {
            s.configError = *r.error();
            s.config = json::object();
            return;
        }
    }
}

// COUNTERS_DB: the PFC watchdog's status of each lossless queue (the queues of PORT_QOS_MAP
// pfc_enable), found through COUNTERS_QUEUE_NAME_MAP as queuestat finds them. One HGETALL
// per lossless queue: a switch's other queues are never read.
void readWatchdog(const redis::Endpoint& at, SwitchState& s) {
    const json& qos = s.config.value("PORT_QOS_MAP", json::object());
    if (qos.empty()) return;
    redis::SyncReader r;
    if (auto err = r.connect(at, kCountersDb)) {
        s.countersError = *err;
        return;
    }
    auto names = r.hash("COUNTERS_QUEUE_NAME_MAP");
    for (const auto& [port, row] : qos.items()) {
        if (!row.is_object() || !row.value("pfc_enable", json("")).is_string()) continue;
        std::string list = row.value("pfc_enable", "");
        for (size_t from = 0; from < list.size();) {
            size_t comma = std::min(list.find(',', from), list.size());
            std::string queue = port + ":" + list.substr(from, comma - from);
            from = comma + 1;
            auto oid = names.find(queue);
            if (oid == names.end()) continue;
            auto counters = r.hash("COUNTERS:" + oid->second);
            if (auto st = counters.find("PFC_WD_STATUS"); st != counters.end())
                s.watchdog[queue] = st->second;
        }
    }
    if (r.error()) s.countersError = *r.error();
}

SwitchState readSwitch(const redis::Endpoint& at, bool& authFailed) {
    SwitchState s;
    redis::SyncReader r;
    if (auto err = r.connect(at, kStateDb)) {
        s.error = *err;
        authFailed = authFailed || r.authFailed();
        return s;
    }
    // Stop at the first failed read: a half-read switch is an unreachable one.
    std::optional<std::string> err;
    for (auto [name, into] :
         {std::pair{"HOST_ROUTE_TABLE", &s.hosts}, std::pair{"HOST_FOREIGN_TABLE", &s.foreign},
          std::pair{"HOST_CLAIM_TABLE", &s.claims}, std::pair{"BGP_PEER_STATE_TABLE", &s.peers},
          std::pair{"PATH_QUALITY_TABLE", &s.quality}}) {
        if (!err) *into = table(r, name);
        if (!err && r.error()) err = r.error();
    }
    s.reachable = !err;
    if (err) {
        s.error = *err;
        authFailed = authFailed || r.authFailed();
        return s;
    }
    readQos(at, s);
    readWatchdog(at, s);
    return s;
}

// One switch's Redis from its inventory entry: where (socket, or host and port), TLS
// and the ACL user; the password and the CA come from the command line, never from
// the inventory (which is not a secret).
redis::Endpoint inventoryEndpoint(const json& r, const VerifyCredentials& creds) {
    redis::Endpoint at = creds.base;
    at.unixSocket = r.value("socket", "");
    at.host = r.value("host", at.host);
    at.port = r.value("port", at.port);
    if (!creds.tlsGiven) at.tls.enabled = r.value("tls", false);
    if (!creds.userGiven) at.user = r.value("user", "");
    if (!creds.sniGiven) at.tls.serverName = r.value("server_name", "");
    return at;
}

}  // namespace

int verifyCommand(const std::vector<std::string>& args, bool asJson,
                  const VerifyCredentials& creds) {
    std::string planPath, inventoryPath, lab;
    VerifyOptions options;
    for (size_t i = 0; i < args.size(); ++i) {
        auto value = [&args, &i] {
            if (i + 1 >= args.size()) throw UsageError{args[i] + " needs a value"};
            return args[++i];
        };
        if (args[i] == "--plan") {
            planPath = value();
        } else if (args[i] == "--inventory") {
            inventoryPath = value();
        } else if (args[i] == "--lab") {
            lab = value();
        } else if (args[i] == "--max-pause-pps") {
            std::string v = value();
            char* end = nullptr;
            options.maxPausePps = std::strtod(v.c_str(), &end);
            if (v.empty() || *end != '\0' || !(options.maxPausePps >= 0)) {
                throw UsageError{
                    "verify: --max-pause-pps needs a number of frames a second, "
                    "not \"" +
                    v + "\""};
            }
        } else {
            throw UsageError{"verify: unknown option " + args[i]};
        }
    }
    if (!lab.empty()) planPath = "/run/twinrail-lab/" + lab + "/plan.json";
    if (planPath.empty() || (lab.empty() && inventoryPath.empty()))
        throw UsageError{"verify needs --plan FILE --inventory FILE, or --lab NAME"};
    auto planJson = readJson(planPath);
    if (!planJson) {
        std::cerr << "twinrail: cannot read the plan " << planPath << "\n";
        return exitcode::kNoInput;
    }
    auto built = plan::planFromJson(*planJson);
    if (auto* e = std::get_if<plan::SizingError>(&built)) {
        std::cerr << "twinrail: " << planPath << ": " << e->message << "\n";
        return exitcode::kDataErr;
    }
    const auto& p = std::get<plan::Plan>(built);
    std::optional<json> inventory;
    if (lab.empty()) {
        inventory = readJson(inventoryPath);
        if (!inventory) {
            std::cerr << "twinrail: cannot read the inventory " << inventoryPath << "\n";
            return exitcode::kNoInput;
        }
    }
    std::map<std::string, SwitchState> state;
    bool authFailed = false;
    for (const auto& sw : p.switches) {
        redis::Endpoint at = creds.base;
        if (!lab.empty()) {
            at.tls = {};  // a lab's Redis is a unix socket
            at.unixSocket = "/run/twinrail-lab/" + lab + "/" + sw.name + "/redis.sock";
        } else {
            const json& r = (*inventory)["switches"][sw.name]["redis"];
            if (!r.is_object()) {
                state[sw.name].error = "not in the inventory";
                continue;
            }
            at = inventoryEndpoint(r, creds);
        }
        state[sw.name] = readSwitch(at, authFailed);
    }
    VerifyReport report = verifyFabric(p, state, options);
    if (asJson) {
        std::cout << report.json.dump(2) << "\n";
    } else {
        for (const auto& u : report.json["unreachable"]) {
            std::cout << "cannot read " << u["switch"].get<std::string>() << ": "
                      << u["error"].get<std::string>() << "\n";
        }
        std::cout << "NIC ports\n"
                  << renderTable(report.nicPorts) << "\nFabric links\n"
                  << renderTable(report.links) << "\n";
        const json& lossless = report.json["lossless"];
        if (!lossless.value("configured", false)) {
            std::cout << "Lossless: no switch has RoCE QoS (PORT_QOS_MAP), its configuration "
                         "not checked\n\n";
        }
        if (!report.lossless.rows.empty()) {
            std::cout << "Lossless (RoCE QoS against the plan, PFC storms, pause rates)\n"
                      << renderTable(report.lossless) << "\n";
        }
        if (!report.claims.rows.empty()) {
            std::cout << "Refused claims (someone else's address heard on a port)\n"
                      << renderTable(report.claims) << "\n";
        }
        std::cout << (report.healthy ? "healthy\n" : "DEGRADED\n");
    }
    if (authFailed) {
        std::cerr << "twinrail: Redis refused the credentials on at least one switch (see "
                     "above): check --redis-user, --redis-password-file and docs/redis-acl.md\n";
        return kAuthRefused;
    }
    return report.healthy ? exitcode::kOk : exitcode::kUnavailable;
}

}  // namespace twinrail::cli
