// `twinrail verify`: reads the plan and every switch's STATE_DB (through the planner's
// inventory, or a lab's sockets), then prints verifyFabric()'s verdicts.
#include <fstream>
#include <iostream>

#include "twinrail/common/sysexits.h"
#include "twinrail/common/tool_main.h"
#include "twinrail/redis/sync_reader.h"
#include "verify.h"
#include "verify_command.h"

namespace twinrail::cli {
namespace {

using json = nlohmann::json;
constexpr int kStateDb = 6;  // SONiC's STATE_DB id; a switch's own Redis

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

SwitchState readSwitch(const redis::Endpoint& at) {
    SwitchState s;
    redis::SyncReader r;
    if (auto err = r.connect(at, kStateDb)) {
        s.error = *err;
        return s;
    }
    s.hosts = table(r, "HOST_ROUTE_TABLE");
    s.foreign = table(r, "HOST_FOREIGN_TABLE");
    s.peers = table(r, "BGP_PEER_STATE_TABLE");
    s.reachable = !r.error();
    if (r.error()) s.error = *r.error();
    return s;
}

}  // namespace

int verifyCommand(const std::vector<std::string>& args, bool asJson) {
    std::string planPath, inventoryPath, lab;
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
    for (const auto& sw : p.switches) {
        redis::Endpoint at;
        if (!lab.empty()) {
            at.unixSocket = "/run/twinrail-lab/" + lab + "/" + sw.name + "/redis.sock";
        } else {
            const json& r = (*inventory)["switches"][sw.name]["redis"];
            if (!r.is_object()) {
                state[sw.name].error = "not in the inventory";
                continue;
            }
            at.unixSocket = r.value("socket", "");
            at.host = r.value("host", at.host);
            at.port = r.value("port", at.port);
        }
        state[sw.name] = readSwitch(at);
    }
    VerifyReport report = verifyFabric(p, state);
    if (asJson) {
        std::cout << report.json.dump(2) << "\n";
    } else {
        for (const auto& u : report.json["unreachable"])
            std::cout << "cannot read " << u["switch"].get<std::string>() << ": "
                      << u["error"].get<std::string>() << "\n";
        std::cout << "NIC ports\n"
                  << renderTable(report.nicPorts) << "\nFabric links\n"
                  << renderTable(report.links) << "\n"
                  << (report.healthy ? "healthy\n" : "DEGRADED\n");
    }
    return report.healthy ? exitcode::kOk : exitcode::kUnavailable;
}

}  // namespace twinrail::cli
