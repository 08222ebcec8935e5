// The lab's services on a switch (Redis, hostrouted, pathqd, arsd): started the way the
// systemd units run the daemons, stopped or killed by name for the fault tests.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "lab_notices.h"
#include "twinrail/ars/config.h"
#include "twinrail/lab/frr_container.h"
#include "twinrail/lab/notify_listener.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/shell.h"
#include "twinrail/plan/server_config.h"
#include "twinrail/redis/sonic_db.h"
#include "twinrail/redis/sync_reader.h"

namespace twinrail::lab {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The daemons run as their systemd units run them (systemd/*.service): an unprivileged
// user in group frrvty, no new privileges, and only the capabilities the unit grants.
Argv leastPrivilege(Service s) {
    std::string caps = s == Service::Hostrouted ? "-all,+net_admin,+net_raw" : "-all";
    // arsd loads its BPF program and maps (CAP_BPF, CAP_PERFMON for the verifier's
    // pointer rules) and attaches it to tc ingress (CAP_NET_ADMIN), as systemd/arsd.service.
    if (s == Service::Arsd) caps = "-all,+net_admin,+bpf,+perfmon";
    // frrvty opens FRR's vty sockets on the host; docker, the Docker socket that reaches a
    // SONiC-layout switch's FRR container (the SONiC package's container joins its group).
    return {"setpriv",
            "--reuid=nobody",
            "--regid=nogroup",
            "--groups=frrvty,docker",
            "--no-new-privs",
            "--inh-caps=" + caps,
            "--ambient-caps=" + caps,
            "--bounding-set=" + caps,
            "--"};
}

// A daemon started detached in the node's namespace, as its unit runs it: NOTIFY_SOCKET
// set, least privilege, output appended to `log`; its pid (kept through ip netns exec,
// env and setpriv, which all exec) written to `pidFile`. No shell anywhere.
void startDetached(const std::string& lab, const std::string& node, const std::string& notify,
                   Service privilege, const Argv& daemon, const std::string& log,
                   const std::string& pidFile) {
    Argv argv{"env", "NOTIFY_SOCKET=" + notify};
    for (auto& a : leastPrivilege(privilege)) argv.push_back(std::move(a));
    argv.insert(argv.end(), daemon.begin(), daemon.end());
    pid_t pid = spawnDetached(inNamespace(PlanLab::nsPrefix(lab) + node, argv), log);
    // Written whole, then renamed: a reader never sees a partial pid.
    std::ofstream(pidFile + ".tmp") << pid << "\n";
    fs::rename(pidFile + ".tmp", pidFile);
}

// Processes in the node whose name (comm) is one of `names`.
std::vector<pid_t> pidsNamed(const std::string& lab, const std::string& node,
                             const std::vector<std::string>& names) {
    std::vector<pid_t> out;
    std::istringstream in(run({"ip", "netns", "pids", PlanLab::nsPrefix(lab) + node}).out);
    for (pid_t p; in >> p;) {
        std::string comm = readFile("/proc/" + std::to_string(p) + "/comm");
        for (const auto& n : names)
            if (comm == n + "\n") out.push_back(p);
    }
    return out;
}

// A switch in SONiC's layout (sonic_lab.cpp) has database_config.json next to its socket.
std::string sonicDbConfig(const std::string& lab, const std::string& node) {
    std::string path = PlanLab::stateDir(lab) + "/" + node + "/database_config.json";
    return fs::exists(path) ? path : "";
}

// CONFIG_DB from the switch's config_db.json, as `config load` writes it: a row without
// fields is kept with SONiC's "NULL": "NULL" marker.
void loadConfigDb(const std::string& lab, const std::string& node, const std::string& dbConfig) {
    const std::string file = PlanLab::stateDir(lab) + "/" + node + "/config_db.json";
    auto db = nlohmann::json::parse(readFile(file), nullptr, false);
    if (!db.is_object()) throw std::runtime_error(file + ": not a config_db.json");
    auto at = redis::resolveDb("CONFIG_DB", {}, dbConfig);
    redis::SyncReader conn;
    if (auto err = conn.connect(at.endpoint, at.id))
        throw std::runtime_error("CONFIG_DB of " + node + ": " + *err);
    for (const auto& [table, rows] : db.items()) {
        for (const auto& [key, row] : rows.items()) {
            redis::Fields fields;
            for (const auto& [f, v] : row.items())
                fields.emplace_back(f, v.is_string() ? v.get<std::string>() : v.dump());
            if (fields.empty()) fields.emplace_back("NULL", "NULL");
            if (!conn.hset(table + at.separator + key, fields)) {
                throw std::runtime_error("CONFIG_DB of " + node + ": " +
                                         conn.error().value_or("?"));
            }
        }
    }
}

void startRedis(const std::string& lab, const std::string& node) {
    std::string d = PlanLab::stateDir(lab) + "/" + node;
    std::string sock = d + "/redis.sock";
    fs::remove(sock);
    auto r = inNodeRun(lab, node,
                       {"redis-server", "--port", "0", "--unixsocket", sock, "--unixsocketperm",
                        "777", "--save", "", "--appendonly", "no", "--daemonize", "yes", "--dir", d,
                        "--logfile", d + "/redis.log", "--pidfile", d + "/redis.pid"});
    auto up = [lab, node, sock] {
        return fs::exists(sock) &&
               inNodeRun(lab, node, {"redis-cli", "-s", sock, "ping"}).out == "PONG\n";
    };
    if (r.rc != 0 || !waitUntil(up, 10s)) {
        throw std::runtime_error("redis-server on " + node + " did not start; see " + d +
                                 "/redis.log");
    }
    // SONiC's switch comes up with its CONFIG_DB loaded; so does a SONiC-layout lab switch
    // (also when `twinrail-lab start NODE redis` brings an empty Redis back).
    if (auto dbConfig = sonicDbConfig(lab, node); !dbConfig.empty())
        loadConfigDb(lab, node, dbConfig);
}

void startDaemon(const std::string& lab, const LabBinaries& bins, const std::string& node,
                 Service s) {
    const std::string what = serviceName(s);
    const std::string& bin = s == Service::Hostrouted ? bins.hostrouted
                             : s == Service::Arsd     ? bins.arsd
                                                      : bins.pathqd;
    std::string d = PlanLab::stateDir(lab) + "/" + node;
    std::string log = d + "/" + what + ".log";
    NotifyListener ready(d + "/" + what + ".notify");
    std::string pidFile = d + "/" + what + ".pid";
    fs::remove(pidFile);
    // SONiC's layout: Redis found through database_config.json and the config read from
    // CONFIG_DB, as on a switch; the Linux layout: the config file and the socket.
    const std::string dbConfig = sonicDbConfig(lab, node);
    Argv argv = dbConfig.empty() ? Argv{bin, "--config", d + "/config_db.json", "--redis-socket",
                                        d + "/redis.sock"}
                                 : Argv{bin, "--db-config", dbConfig};
    const std::string ns = PlanLab::nsPrefix(lab) + node;
    // FRR where the layout has it: on the host (-N pathspace), or in the switch's bgp
    // container, reached through Docker as on SONiC.
    if (frrInContainer(ns)) {
        argv.insert(argv.end(), {"--frr", "docker", "--frr-container", frrContainerName(ns)});
    } else {
        argv.insert(argv.end(), {"--frr-pathspace", ns});
    }
    startDetached(lab, node, ready.path(), s, argv, log, pidFile);
    auto alive = [pidFile] {
        if (!fs::exists(pidFile)) return true;  // not written yet
        std::string pid = readFile(pidFile);
        if (pid.find('\n') == std::string::npos) return true;
        std::string stat = readFile("/proc/" + pid.substr(0, pid.find('\n')) + "/stat");
        auto close = stat.rfind(')');
        return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
    };
    if (!ready.waitReady(20s, alive))
        throw std::runtime_error(what + " on " + node + " did not start:\n" + readFile(log));
}

}  // namespace

namespace {

// The planner's config for the server, renamed to the lab NIC's own bond and ports.
std::string labPlaneSteerConfig(const std::string& lab, const plan::Plan& p,
                                const plan::Server& srv, const plan::Nic& nic) {
    auto j = nlohmann::json::parse(plan::planesteerConfig(p, srv));
    if (auto keys = labNoticeKeys(PlanLab::stateDir(lab)))
        plan::addPlanesteerNotices(j, p, srv, *keys);
    auto bond = j["PLANESTEER_BOND"][plan::bondName(nic)];
    bond["ports"] = "port1,port2";
    j["PLANESTEER_BOND"] = {{"bond0", bond}};
    return j.dump() + "\n";
}

void startPlaneSteer(const std::string& lab, const std::string& node, const std::string& bin,
                     const std::string& config) {
    std::string d = PlanLab::stateDir(lab) + "/" + node;
    fs::create_directories(d);
    std::ofstream(d + "/planesteer.json") << config;
    if (config.find("notice_keys") != std::string::npos) restrictToDaemons(d + "/planesteer.json");
    NotifyListener ready(d + "/planesteer.notify");
    std::string pidFile = d + "/planesteer.pid";
    std::string log = d + "/planesteer.log";
    // Packet sockets and tc: CAP_NET_RAW and CAP_NET_ADMIN, as hostrouted's unit grants.
    startDetached(lab, node, ready.path(), Service::Hostrouted,
                  {bin, "--config", d + "/planesteer.json"}, log, pidFile);
    if (!ready.waitReady(20s, [] { return true; }))
        throw std::runtime_error("planesteer on " + node + " did not start:\n" + readFile(log));
}

}  // namespace

void startPlaneSteers(const std::string& lab, const plan::Plan& p, const std::string& bin) {
    if (p.request.attach == plan::Attach::Routed) return;  // BGP steers routed NICs
    for (const auto& srv : p.servers) {
        for (const auto& nic : srv.nics) {
            startPlaneSteer(lab, PlanLab::nicNode(srv, nic), bin,
                            labPlaneSteerConfig(lab, p, srv, nic));
        }
    }
}

const char* serviceName(Service s) {
    switch (s) {
        case Service::Redis:
            return "redis-server";
        case Service::Hostrouted:
            return "hostrouted";
        case Service::Pathqd:
            return "pathqd";
        case Service::Arsd:
            return "arsd";
    }
    return "?";
}

std::vector<pid_t> servicePids(const std::string& lab, const std::string& node, Service s) {
    return pidsNamed(lab, node, {serviceName(s)});
}

void startService(const std::string& lab, const LabBinaries& bins, const std::string& node,
                  Service s) {
    if (s == Service::Redis) return startRedis(lab, node);
    startDaemon(lab, bins, node, s);
}

bool stopService(const std::string& lab, const std::string& node, Service s, int signal) {
    auto pids = servicePids(lab, node, s);
    for (pid_t p : pids) ::kill(p, signal);
    waitUntil([lab, node, s] { return servicePids(lab, node, s).empty(); }, 10s, 50ms);
    for (pid_t p : servicePids(lab, node, s)) ::kill(p, SIGKILL);
    return !pids.empty();
}

bool startArsdIfEnabled(const std::string& lab, const LabBinaries& bins, const std::string& node,
                        const nlohmann::json& configDb) {
    auto parsed = ars::parseArsConfig(configDb);
    if (const auto* cfg = std::get_if<ars::ArsConfig>(&parsed); cfg != nullptr && !cfg->enabled)
        return false;
    startDaemon(lab, bins, node, Service::Arsd);
    return true;
}

}  // namespace twinrail::lab
