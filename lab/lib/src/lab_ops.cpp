// What a lab's life needs after `up`: failing and restoring a switch or port, and `down`,
// which finds everything of a lab from its name alone.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "node_power.h"
#include "twinrail/lab/bond_nic.h"
#include "twinrail/lab/fabric.h"
#include "twinrail/lab/frr_container.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/shell.h"
#include "twinrail/lab/sonic_container.h"
#include "twinrail/plan/sonic_target.h"
#include "twinrail/redis/sonic_db.h"
#include "twinrail/redis/sync_reader.h"

namespace twinrail::lab {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> labNamespaces(const std::string& name) {
    std::vector<std::string> out;
    std::istringstream in(run({"ip", "netns", "list"}).out);
    std::string line;
    const std::string prefix = PlanLab::nsPrefix(name);
    while (std::getline(in, line)) {
        std::string ns = line.substr(0, line.find(' '));
        if (ns.rfind(prefix, 0) == 0) out.push_back(ns);
    }
    return out;
}

std::vector<pid_t> pidsIn(const std::string& ns) {
    std::vector<pid_t> out;
    std::istringstream in(run({"ip", "netns", "pids", ns}).out);
    for (pid_t p; in >> p;) out.push_back(p);
    return out;
}

bool alive(pid_t pid) {
    return kill(pid, 0) == 0;
}

std::pair<std::string, std::string> splitTarget(const std::string& target) {
    auto colon = target.find(':');
    if (colon == std::string::npos) return {target, ""};
    return {target.substr(0, colon), target.substr(colon + 1)};
}

// Lowercase for nodes and the Linux layout's ports; SONiC's ports are EthernetN.
bool isPortName(const std::string& s) {
    return !s.empty() && s.size() <= 15 &&
           s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") ==
               std::string::npos;
}

// NODE[:PORT] of a fail or restore: a switch port of a SONiC-layout lab may be given by its
// plan name (swp3) or its EthernetN name; the kernel has the EthernetN one.
std::pair<std::string, std::string> labTarget(const std::string& lab, const std::string& target) {
    auto [node, port] = splitTarget(target);
    if (!isPortName(node) || (!port.empty() && !isPortName(port)))
        throw std::invalid_argument("\"" + target + "\" is not <node> or <node>:<port>");
    if (!port.empty()) port = labPortName(labSonicRecord(lab), node, port);
    return {node, port};
}

// Every interface of a node but lo.
std::vector<std::string> portsOf(const std::string& lab, const std::string& node) {
    std::vector<std::string> out;
    std::istringstream in(inNodeRun(lab, node, {"ls", "/sys/class/net"}).out);
    for (std::string n; in >> n;)
        if (n != "lo") out.push_back(n);
    return out;
}

// The ports a switch's hostrouted holds down (STATE_DB HOST_PORT_HOLD_TABLE, state held):
// a restored NOS whose configuration holds them leaves them down, and hostrouted raises
// them when the leaf has its routes back. None when the node has no Redis (a NIC) or it
// cannot be read: the ports come up as before.
std::set<std::string> heldPorts(const std::string& lab, const std::string& node) {
    const std::string dir = PlanLab::stateDir(lab) + "/" + node;
    redis::Endpoint endpoint;
    endpoint.unixSocket = dir + "/redis.sock";
    if (!fs::exists(endpoint.unixSocket)) return {};
    redis::DbLocation at{6, '|', endpoint};  // the Linux layout: hostrouted's defaults
    if (fs::exists(dir + "/database_config.json"))
        at = redis::resolveDb("STATE_DB", endpoint, dir + "/database_config.json");
    redis::SyncReader conn;
    if (conn.connect(at.endpoint, at.id)) return {};
    const std::string table = std::string("HOST_PORT_HOLD_TABLE") + at.separator;
    std::set<std::string> out;
    for (const auto& key : conn.keys(table + "*")) {
        auto row = conn.hash(key);
        if (row["state"] == "held") out.insert(key.substr(table.size()));
    }
    return out;
}

}  // namespace

std::vector<std::string> PlanLab::down(const std::string& name) {
    std::vector<std::string> done;
    auto namespaces = labNamespaces(name);
    std::vector<pid_t> pids;
    for (const auto& ns : namespaces)
        for (pid_t p : pidsIn(ns)) pids.push_back(p);
    // SIGTERM first: FRR and the daemons end cleanly; whatever is left gets SIGKILL.
    for (pid_t p : pids) kill(p, SIGTERM);
    waitUntil(
        [&pids] {
            for (pid_t p : pids)
                if (alive(p)) return false;
            return true;
        },
        5s, 100ms);
    for (pid_t p : pids)
        if (alive(p)) kill(p, SIGKILL);
    if (!pids.empty()) done.push_back("stopped " + std::to_string(pids.size()) + " processes");
    const auto containers = labContainers(nsPrefix(name));
    if (!containers.empty()) {
        Argv rm{"docker", "rm", "--force"};
        rm.insert(rm.end(), containers.begin(), containers.end());
        run(rm);
        done.push_back("removed " + std::to_string(containers.size()) + " containers");
    }
    for (const auto& ns : namespaces) run({"ip", "netns", "del", ns});
    if (!namespaces.empty())
        done.push_back("removed " + std::to_string(namespaces.size()) + " namespaces");
    size_t dirs = 0;
    for (const char* root : {"/var/run/frr", "/etc/frr"}) {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(root, ec)) {
            if (e.path().filename().string().rfind(nsPrefix(name), 0) == 0)
                dirs += fs::remove_all(e.path(), ec) > 0;
        }
    }
    if (dirs > 0) done.push_back("removed " + std::to_string(dirs) + " FRR directories");
    std::error_code ec;
    if (fs::remove_all(stateDir(name), ec) > 0) done.push_back("removed " + stateDir(name));
    fs::remove(fs::path(stateDir(name)).parent_path(), ec);  // only if no other lab is there
    return done;
}

std::vector<std::string> PlanLab::leftovers(const std::string& name) {
    std::vector<std::string> out;
    const std::string pre = nsPrefix(name);
    if (!labNamespaces(name).empty()) out.emplace_back("namespaces");
    std::error_code ec;
    if (fs::exists(stateDir(name), ec)) out.push_back(stateDir(name));
    for (const char* root : {"/var/run/frr", "/etc/frr"}) {
        for (const auto& e : fs::directory_iterator(root, ec))
            if (e.path().filename().string().rfind(pre, 0) == 0) out.push_back(e.path().string());
    }
    if (run({"pgrep", "-f", "--", "--frr-pathspace " + pre}).rc == 0) out.emplace_back("daemons");
    if (!labContainers(pre).empty()) out.emplace_back("containers");
    return out;
}

void failNode(const std::string& lab, const std::string& target) {
    auto [node, port] = labTarget(lab, target);
    std::vector<std::string> ports =
        port.empty() ? portsOf(lab, node) : std::vector<std::string>{port};
    if (ports.empty()) throw std::runtime_error("no node " + node + " in lab " + lab);
    if (port.empty() && isLabSwitch(lab, node)) return powerOff(lab, node, ports);
    std::vector<Argv> cmds;
    cmds.reserve(ports.size());
    for (const auto& p : ports) cmds.push_back({"ip", "link", "set", p, "down"});
    auto r = inNodeAll(lab, node, cmds);
    if (r.rc != 0) throw std::runtime_error("cannot fail " + target + ": " + r.out);
}

void restoreNode(const std::string& lab, const LabBinaries& bins, const std::string& target) {
    auto [node, port] = labTarget(lab, target);
    std::vector<std::string> ports =
        port.empty() ? portsOf(lab, node) : std::vector<std::string>{port};
    if (port.empty() && isPoweredOff(lab, node)) {
        powerOn(lab, bins, node, ports);
        announceOn(lab, bins, PlanLab::loadPlan(lab), node, ports);
        return;
    }
    auto held = heldPorts(lab, node);
    std::vector<Argv> cmds;
    cmds.reserve(ports.size());
    for (const auto& p : ports)
        if (held.count(p) == 0) cmds.push_back({"ip", "link", "set", p, "up"});
    auto r = inNodeAll(lab, node, cmds);
    if (r.rc != 0) throw std::runtime_error("cannot restore " + target + ": " + r.out);
    // Each NIC on a restored link announces itself on it, as a NIC does on link up.
    announceOn(lab, bins, PlanLab::loadPlan(lab), node, ports);
}

namespace {

bool watchfrrRuns(const std::string& n) {
    std::ifstream in("/var/run/frr/" + n + "/watchfrr.pid");
    pid_t pid = 0;
    return in >> pid && pid > 0 && ::kill(pid, 0) == 0;
}

// FRR's init script reads the instance's daemons file and integrated config from
// /etc/frr/<instance>/, as /etc/frr/ on a switch.
void writeInstanceFiles(const std::string& n) {
    const std::string etc = "/etc/frr/" + n;
    std::ofstream(etc + "/daemons") << "zebra=yes\nbgpd=yes\nstaticd=yes\nvtysh_enable=yes\n"
                                       "zebra_options=\"-A 127.0.0.1 -s 90000000\"\n"
                                       "bgpd_options=\"-A 127.0.0.1\"\n"
                                       "staticd_options=\"-A 127.0.0.1\"\n"
                                       "frr_profile=\"datacenter\"\n";
    fs::copy_file("/var/run/frr/" + n + "/frr.conf", etc + "/frr.conf",
                  fs::copy_options::overwrite_existing);
    runOk({"chown", "-R", "frr:frr", etc});
}

}  // namespace

void restartFrr(const std::string& lab, const std::string& node, FrrRestart how) {
    if (!isPortName(node)) throw std::invalid_argument("\"" + node + "\" is not a node name");
    const std::string n = PlanLab::nsPrefix(lab) + node;
    if (frrInContainer(n)) {
        // SONiC: FRR's daemons are critical processes of the bgp container; any of them
        // dying (or a clean restart) restarts the container.
        restartFrrContainer(n);
        return;
    }
    if (!fs::exists("/var/run/frr/" + n + "/frr.conf"))
        throw std::runtime_error("no FRR of node " + node + " in lab " + lab);
    bool supervised = watchfrrRuns(n);
    switch (how) {
        case FrrRestart::Kill:
            stopFrrDaemons({n}, {"bgpd", "zebra"}, SIGKILL);
            if (supervised) return;  // watchfrr brings them back, as on a switch
            startFrrDaemons(n, {"zebra", "bgpd"});
            return;
        case FrrRestart::Clean:
            if (supervised) {
                runOk(inNamespace(n, {"/usr/lib/frr/frrinit.sh", "restart", n}));
                return;
            }
            stopFrrDaemons({n}, {"staticd", "bgpd", "zebra"}, SIGTERM);
            startFrrDaemons(n, {"zebra", "bgpd", "staticd"});
            return;
        case FrrRestart::Service:
            writeInstanceFiles(n);
            runOk(inNamespace(n, {"/usr/lib/frr/frrinit.sh", "restart", n}));
            return;
    }
}

void swapNicCables(const std::string& lab, const LabBinaries& bins, const std::string& a,
                   const std::string& b) {
    auto [nodeA, portA] = splitTarget(a);
    auto [nodeB, portB] = splitTarget(b);
    if (!isPortName(nodeA) || !isPortName(portA) || !isPortName(nodeB) || !isPortName(portB) ||
        nodeA == nodeB)
        throw std::invalid_argument("swap-cables needs NIC:PORT NIC:PORT of two NICs");
    plan::Plan p = PlanLab::loadPlan(lab);
    const plan::Server* srvA = nullptr;
    const plan::Server* srvB = nullptr;
    const plan::Nic* nicA = nullptr;
    const plan::Nic* nicB = nullptr;
    for (const auto& srv : p.servers) {
        for (const auto& nic : srv.nics) {
            if (PlanLab::nicNode(srv, nic) == nodeA) srvA = &srv, nicA = &nic;
            if (PlanLab::nicNode(srv, nic) == nodeB) srvB = &srv, nicB = &nic;
        }
    }
    if (nicA == nullptr || nicB == nullptr) throw std::runtime_error("no such NIC in lab " + lab);
    const std::string nsA = PlanLab::nsPrefix(lab) + nodeA;
    const std::string nsB = PlanLab::nsPrefix(lab) + nodeB;
    // Temporary names first: both ports may well be called port1.
    runOk({"ip", "-n", nsA, "link", "set", portA, "down"});
    runOk({"ip", "-n", nsA, "link", "set", portA, "name", "xswpa"});
    runOk({"ip", "-n", nsA, "link", "set", "xswpa", "netns", nsB});
    runOk({"ip", "-n", nsB, "link", "set", portB, "down"});
    runOk({"ip", "-n", nsB, "link", "set", portB, "name", "xswpb"});
    runOk({"ip", "-n", nsB, "link", "set", "xswpb", "netns", nsA});
    runOk({"ip", "-n", nsA, "link", "set", "xswpb", "name", portA});
    runOk({"ip", "-n", nsB, "link", "set", "xswpa", "name", portB});
    bool bonded = p.request.attach != plan::Attach::Routed;
    for (const auto& [node, srv, nic, port] :
         {std::tuple{nodeA, srvA, nicA, portA}, std::tuple{nodeB, srvB, nicB, portB}}) {
        // As before with "; ": the rewiring is best effort, the port must come up.
        std::vector<Argv> cmds;
        if (bonded) cmds = bondRewireCommands(bondNicFor(lab, p, *srv, *nic));
        cmds.push_back({"ip", "link", "set", port, "up"});
        auto r = inNodeAll(lab, node, cmds, false);
        if (r.rc != 0) throw std::runtime_error("cannot rewire " + node + ": " + r.out);
        announceOn(lab, bins, p, node, {port});
    }
}

namespace {

// A NIC sees its link come up when the leaf's port does: while the leaf's hostrouted
// holds that port down (the host-port hold), a NIC has nothing to announce on. Waits until
// none of `leafPorts` (leaf, port) is held, for as long as a hold may last with some
// routes (hold_max_s, 60 s) and a little more; after that it announces anyway.
void waitUntilReleased(const std::string& lab,
                       const std::set<std::pair<std::string, std::string>>& leafPorts) {
    auto released = [&lab, &leafPorts] {
        std::map<std::string, std::set<std::string>> held;
        for (const auto& [leaf, port] : leafPorts) {
            if (held.count(leaf) == 0) held[leaf] = heldPorts(lab, leaf);
            if (held[leaf].count(port) != 0) return false;
        }
        return true;
    };
    waitUntil(released, 70s, 100ms);
}

}  // namespace

void announceOn(const std::string& lab, const LabBinaries& bins, const plan::Plan& p,
                const std::string& node, const std::vector<std::string>& ports) {
    std::set<std::string> onPorts(ports.begin(), ports.end());
    // A routed NIC whose leaves run SONiC asks for its session's peer on that leaf's SVI
    // (the rail's gateway is on no SONiC leaf then: sonic_routed.cpp).
    const bool sonicPeers =
        p.request.attach == plan::Attach::Routed && !labSonicRecord(lab).is_null();
    for (const auto& srv : p.servers) {
        for (const auto& nic : srv.nics) {
            const plan::RailSubnet* rs = p.subnetFor(srv.group, nic.rail);
            if (rs == nullptr) continue;
            for (const auto& np : nic.ports) {
                bool hit = PlanLab::nicNode(srv, nic) == node
                               ? onPorts.count(np.name) > 0
                               : np.leaf == node && onPorts.count(np.leafPort) > 0;
                if (!hit) continue;
                // A bonded NIC announces through its bond, whose dual-send sends the ARP on
                // every port that has a link; a routed NIC on the port itself.
                bool bonded = p.request.attach != plan::Attach::Routed;
                // A bond announces on every port with a link: all of them, up first.
                std::set<std::pair<std::string, std::string>> leafPorts{{np.leaf, np.leafPort}};
                if (bonded) {
                    for (const auto& other : nic.ports)
                        leafPorts.insert({other.leaf, other.leafPort});
                }
                waitUntilReleased(lab, leafPorts);
                const std::string target =
                    sonicPeers ? plan::sonicRoutedPeer(*rs, np.plane) : rs->gateway;
                auto a = inNodeRun(
                    lab, PlanLab::nicNode(srv, nic),
                    {bins.self, "announce", bonded ? "bond0" : np.name, nic.address, target});
                if (a.rc != 0) throw std::runtime_error("announce failed: " + a.out);
                if (bonded) break;  // once per NIC
            }
        }
    }
}

}  // namespace twinrail::lab
