// A whole switch failed and restored as a dead switch is: `fail p1-leaf1` cuts its links
// and kills everything running on it (its Redis, FRR, the twinrail daemons), as a power
// loss does; `restore p1-leaf1` boots it: Redis, the fabric links and FRR, the daemons,
// then the host ports, as a NOS brings its ports up after the services that guard them.
// Nothing on the switch gets to react to its own death: the links go first, then every
// process by SIGKILL, so no BGP session is closed politely (a dead switch sends no FIN).
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <nlohmann/json.hpp>

#include "node_power.h"
#include "twinrail/lab/fabric.h"
#include "twinrail/lab/frr_container.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/shell.h"
#include "twinrail/lab/sonic_layout.h"

namespace twinrail::lab {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr const char* kFrrLine = "frr";
constexpr const char* kFrrContainerLine = "frr-container";
constexpr const char* kAdvertiserLine = "advertise-networks";
// As long as a port may take to train its link: hostrouted's hold lowers a host port
// within milliseconds of seeing it up, long before a real link would have trained.
constexpr auto kLinkTraining = 3s;

std::string powerFile(const std::string& lab, const std::string& node) {
    return PlanLab::stateDir(lab) + "/" + node + "/powered-off";
}

// The lab's stand-in for bgpcfgd (sonic_lab.cpp), found by its command line.
std::vector<pid_t> advertiserPids(const std::string& ns) {
    std::vector<pid_t> out;
    std::istringstream in(run({"ip", "netns", "pids", ns}).out);
    for (pid_t p; in >> p;) {
        std::ifstream f("/proc/" + std::to_string(p) + "/cmdline");
        std::string cmdline((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        if (cmdline.find(std::string(kAdvertiserLine) + '\0') != std::string::npos)
            out.push_back(p);
    }
    return out;
}

// Kills FRR as a power loss does, watchfrr first so that it restarts nothing.
std::string killFrr(const std::string& ns) {
    if (frrInContainer(ns)) {
        run({"docker", "kill", frrContainerName(ns)});
        return kFrrContainerLine;
    }
    if (!fs::exists("/var/run/frr/" + ns + "/frr.conf")) return "";
    stopFrrDaemons({ns}, {"watchfrr"}, SIGKILL);
    stopFrrDaemons({ns}, {"staticd", "bgpd", "zebra"}, SIGKILL);
    return kFrrLine;
}

// (leaf port, NIC node, NIC port) of every NIC cabled to `node`.
std::vector<std::tuple<std::string, std::string, std::string>> nicLinks(const std::string& lab,
                                                                        const std::string& node) {
    const plan::Plan p = PlanLab::loadPlan(lab);
    const nlohmann::json sonic = labSonicRecord(lab);
    std::vector<std::tuple<std::string, std::string, std::string>> out;
    for (const auto& srv : p.servers) {
        for (const auto& nic : srv.nics) {
            for (const auto& np : nic.ports) {
                if (np.leaf != node) continue;
                out.emplace_back(labPortName(sonic, node, np.leafPort), PlanLab::nicNode(srv, nic),
                                 np.name);
            }
        }
    }
    return out;
}

bool holdConfigured(const std::string& lab, const std::string& node) {
    std::ifstream in(PlanLab::stateDir(lab) + "/" + node + "/config_db.json");
    auto db = nlohmann::json::parse(in, nullptr, false);
    if (!db.is_object()) return false;
    auto g = db.value("HOSTROUTED", nlohmann::json::object()).value("global", nlohmann::json());
    return g.is_object() && !g.value("fabric_prefixes", "").empty();
}

bool adminUp(const std::string& lab, const std::string& node, const std::string& port) {
    std::string out = inNodeRun(lab, node, {"ip", "-o", "link", "show", port}).out;
    auto open = out.find('<');
    auto close = out.find('>');
    if (open == std::string::npos || close == std::string::npos) return false;
    std::string flags = "," + out.substr(open + 1, close - open - 1) + ",";
    return flags.find(",UP,") != std::string::npos;
}

void startFrrAgain(const std::string& ns, const std::string& how) {
    if (how == kFrrContainerLine) {
        restartFrrContainer(ns);  // docker restart starts a killed container
    } else if (how == kFrrLine) {
        startFrrDaemons(ns, {"zebra", "bgpd", "staticd"});
    }
}

// The host ports come up as a booted NOS raises them, with a real link's training time:
// the NIC's end stays down until hostrouted's hold (if the switch has one) has taken the
// switch's end down again, so that no NIC sees carrier from a leaf that cannot route.
void raiseHostPorts(const std::string& lab, const std::string& node) {
    auto links = nicLinks(lab, node);
    // A NIC port its server took down stays down.
    std::erase_if(links, [&lab](const auto& link) {
        return !adminUp(lab, std::get<1>(link), std::get<2>(link));
    });
    for (const auto& [leafPort, nicNode, nicPort] : links)
        inNodeRun(lab, nicNode, {"ip", "link", "set", nicPort, "down"});
    std::vector<Argv> up;
    up.reserve(links.size());
    for (const auto& [leafPort, nicNode, nicPort] : links)
        up.push_back({"ip", "link", "set", leafPort, "up"});
    auto r = inNodeAll(lab, node, up);
    if (r.rc != 0)
        throw std::runtime_error("cannot raise the host ports of " + node + ": " + r.out);
    if (holdConfigured(lab, node)) {
        waitUntil(
            [&lab, &node, &links] {
                for (const auto& [leafPort, nicNode, nicPort] : links)
                    if (adminUp(lab, node, leafPort)) return false;
                return true;
            },
            kLinkTraining, 20ms);
    }
    for (const auto& [leafPort, nicNode, nicPort] : links)
        inNodeRun(lab, nicNode, {"ip", "link", "set", nicPort, "up"});
}

}  // namespace

bool isPoweredOff(const std::string& lab, const std::string& node) {
    return fs::exists(powerFile(lab, node));
}

bool isLabSwitch(const std::string& lab, const std::string& node) {
    return fs::exists(PlanLab::stateDir(lab) + "/" + node + "/redis.sock") ||
           isPoweredOff(lab, node);
}

void powerOff(const std::string& lab, const std::string& node,
              const std::vector<std::string>& ports) {
    std::vector<Argv> cmds;
    cmds.reserve(ports.size());
    for (const auto& p : ports) cmds.push_back({"ip", "link", "set", p, "down"});
    auto r = inNodeAll(lab, node, cmds);
    if (r.rc != 0) throw std::runtime_error("cannot fail " + node + ": " + r.out);
    const std::string ns = PlanLab::nsPrefix(lab) + node;
    std::vector<std::string> ran;
    for (Service s : {Service::Hostrouted, Service::Pathqd, Service::Arsd, Service::Redis}) {
        if (stopService(lab, node, s, SIGKILL)) ran.emplace_back(serviceName(s));
    }
    const auto advertisers = advertiserPids(ns);
    for (pid_t p : advertisers) ::kill(p, SIGKILL);
    if (!advertisers.empty()) ran.emplace_back(kAdvertiserLine);
    if (auto frr = killFrr(ns); !frr.empty()) ran.push_back(frr);
    std::ofstream out(powerFile(lab, node));
    for (const auto& line : ran) out << line << "\n";
}

void powerOn(const std::string& lab, const LabBinaries& bins, const std::string& node,
             const std::vector<std::string>& ports) {
    std::set<std::string> ran;
    {
        std::ifstream in(powerFile(lab, node));
        for (std::string line; std::getline(in, line);) ran.insert(line);
    }
    const std::string ns = PlanLab::nsPrefix(lab) + node;
    if (ran.count(serviceName(Service::Redis)) != 0) startService(lab, bins, node, Service::Redis);
    std::set<std::string> hostPorts;
    for (const auto& link : nicLinks(lab, node)) hostPorts.insert(std::get<0>(link));
    std::vector<Argv> fabricUp;
    for (const auto& p : ports)
        if (hostPorts.count(p) == 0) fabricUp.push_back({"ip", "link", "set", p, "up"});
    auto r = inNodeAll(lab, node, fabricUp);
    if (r.rc != 0) throw std::runtime_error("cannot restore " + node + ": " + r.out);
    for (const char* how : {kFrrLine, kFrrContainerLine})
        if (ran.count(how) != 0) startFrrAgain(ns, how);
    for (Service s : {Service::Hostrouted, Service::Pathqd, Service::Arsd})
        if (ran.count(serviceName(s)) != 0) startService(lab, bins, node, s);
    if (ran.count(kAdvertiserLine) != 0) {
        const std::string d = PlanLab::stateDir(lab) + "/" + node;
        spawnDetached(
            inNamespace(ns, {bins.self, kAdvertiserLine, d + "/database_config.json", ns}),
            d + "/advertise-networks.log");
    }
    fs::remove(powerFile(lab, node));
    raiseHostPorts(lab, node);
}

}  // namespace twinrail::lab
