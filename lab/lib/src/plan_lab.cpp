#include "twinrail/lab/plan_lab.h"

#include "lab_notices.h"

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "twinrail/lab/bond_nic.h"
#include "twinrail/lab/fabric.h"
#include "twinrail/lab/lab_status.h"
#include "twinrail/lab/reachability.h"
#include "twinrail/lab/shell.h"
#include "twinrail/plan/evpn_mh.h"
#include "twinrail/plan/outputs.h"
#include "twinrail/plan/server_config.h"
#include "twinrail/plan/sonic_target.h"

namespace twinrail::lab {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr size_t kMaxNamespaces = 48;  // what one machine runs comfortably (an FRR each)

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

plan::Request defaultLabRequest(plan::Attach attach) {
    plan::Request r;
    r.attach = attach;
    r.gpus = 4;
    r.gpusPerServer = 2;
    r.leafModel = {"lab-4x200G", 4, 200, {1}};
    r.spinesPerPlane = 2;
    return r;
}

PlanLab::PlanLab(std::string name, plan::Plan plan, LabBinaries bins,
                 std::optional<SonicLayout> sonic)
    : name_(std::move(name)),
      prefix_(nsPrefix(name_)),
      dir_(stateDir(name_)),
      plan_(std::move(plan)),
      bins_(std::move(bins)),
      sonic_(std::move(sonic)) {
    if (!validName(name_))
        throw std::invalid_argument("lab name \"" + name_ + "\": use 1-6 of a-z and 0-9");
    if (sonic_) prepareSonic(plan_);
}

bool PlanLab::validName(const std::string& name) {
    return std::regex_match(name, std::regex("[a-z0-9]{1,6}"));
}

std::string PlanLab::stateDir(const std::string& name) {
    return "/run/twinrail-lab/" + name;
}
std::string PlanLab::nsPrefix(const std::string& name) {
    return "trl-" + name + "-";
}

plan::Plan PlanLab::loadPlan(const std::string& name) {
    std::string path = stateDir(name) + "/plan.json";
    auto j = nlohmann::json::parse(readFile(path), nullptr, false);
    if (j.is_discarded()) throw std::runtime_error("no lab \"" + name + "\" here (" + path + ")");
    auto p = plan::planFromJson(j);
    if (auto* e = std::get_if<plan::SizingError>(&p))
        throw std::runtime_error(path + ": " + e->message);
    return std::get<plan::Plan>(p);
}

void PlanLab::up(bool keepOnFailure) {
    size_t nodes = plan_.switches.size();
    for (const auto& s : plan_.servers) nodes += s.nics.size();
    if (nodes > kMaxNamespaces) {
        throw std::runtime_error("this plan needs " + std::to_string(nodes) +
                                 " namespaces; the lab builds at most " +
                                 std::to_string(kMaxNamespaces) + " (scale the plan down)");
    }
    // A plan that cannot be built leaves a running lab of this name alone; from here on,
    // whatever a crashed or forgotten lab of this name left goes first.
    down(name_);
    try {
        fs::create_directories(dir_);
        std::ofstream(dir_ + "/plan.json") << plan::toJson(plan_).dump(1) << "\n";
        if (sonic_) std::ofstream(dir_ + "/sonic.json") << sonicRecord_.dump(1) << "\n";
        // Fast notices where both ends exist: bonded NICs (planesteer) on Linux leaves.
        if (r().attach == plan::Attach::Bond && !sonic_)
            writeLabNoticeKeys(dir_, plan::freshNoticeKeys(plan_));
        buildNamespaces();
        if (!waitUntil([this] { return converged(); }, 120s, 500ms)) {
            throw std::runtime_error(
                "the lab did not converge in 120 s: some NIC does not reach "
                "another through every plane (see " +
                dir_ + ")");
        }
    } catch (...) {
        if (!keepOnFailure) down(name_);
        throw;
    }
}

void PlanLab::buildNamespaces() {
    Fabric fabric(prefix_);
    for (const auto& sw : plan_.switches) fabric.addNode(sw.name);
    for (const auto& srv : plan_.servers)
        for (const auto& nic : srv.nics) fabric.addNode(nicNode(srv, nic));
    for (const auto& sw : plan_.switches) {
        for (const auto& p : sw.ports)
            if (p.role == plan::PortRole::Uplink) fabric.link(sw.name, p.name, p.peer, p.peerPort);
    }
    // The NICs' TCP asks for ECN, as a RoCE NIC's traffic is ECN-capable (DCQCN), so a
    // shaped lab port's marks (lab::shapePort) reach and slow it instead of drops.
    for (const auto& srv : plan_.servers) {
        for (const auto& nic : srv.nics)
            fabric.runOk(nicNode(srv, nic), {"sysctl", "-qw", "net.ipv4.tcp_ecn=1"});
    }
    const bool evpn = r().attach == plan::Attach::EvpnMh;
    if (evpn) {
        for (const auto& sw : plan_.switches) {
            if (sw.spine || sw.plane != 1) continue;
            auto mh = evpnLeaf(sw);
            fabric.link(sw.name, mh.auxPort, mh.peer, mh.auxPort);
        }
    } else {
        linkNics(fabric);
    }
    // As a switch ASIC does, a port that loses its link leaves every ECMP group at once.
    for (const auto& node : fabric.nodes()) {
        fabric.runOk(node, {"sysctl", "-qw", "net.ipv4.conf.all.ignore_routes_with_linkdown=1",
                            "net.ipv4.conf.default.ignore_routes_with_linkdown=1"});
    }
    if (sonic_) {
        addressSonicSwitches();
    } else {
        addressSwitches();
    }
    for (const auto& sw : plan_.switches) {
        std::string conf = frrConfFor(sw);
        // Not 180 s (FRR's default, for a switch coming up under load): the lab's ES
        // ports come up with it.
        if (evpn && !sw.spine) conf = "evpn mh startup-delay 1\n" + conf;
        if (sonic_) {
            // As the release's bgp container runs it: reached only through Docker.
            fabric.startFrrInContainer(sw.name, conf,
                                       plan::sonicFeatures(sonicRelease_).bgpdVtyPort);
        } else {
            fabric.startFrr(sw.name, conf);
        }
    }
    // zebra takes an ES on a bond, or on an interface it has not seen before its config:
    // the lab's ES ports (veths named as the bonds) appear after zebra has started.
    if (evpn) {
        linkNics(fabric);
        if (sonic_) {
            buildSonicSegments();
        } else {
            buildEvpnLinks();
        }
    }
    addressNics();
    for (const auto& sw : plan_.switches) {
        if (sonic_) {
            startSonicSwitch(sw);
        } else {
            startSwitch(sw);
        }
    }
    if (r().attach == plan::Attach::Routed) {
        for (const auto& srv : plan_.servers) {
            for (const auto& nic : srv.nics) {
                fabric.startFrr(nicNode(srv, nic), sonic_
                                                       ? plan::sonicHostFrrConfig(plan_, srv, nic)
                                                       : plan::hostFrrConfig(plan_, srv, nic));
            }
        }
    }
    // From here the lab lives on its own; `down` finds it by name.
    fabric.detach();
    // Every NIC announces itself on all its ports (its links are already up).
    for (const auto& srv : plan_.servers) {
        for (const auto& nic : srv.nics) {
            std::vector<std::string> ports;
            for (const auto& np : nic.ports) ports.push_back(np.name);
            announceOn(name_, bins_, plan_, nicNode(srv, nic), ports);
        }
    }
}

void PlanLab::linkNics(Fabric& fabric) {
    const bool evpn = r().attach == plan::Attach::EvpnMh;
    for (const auto& srv : plan_.servers) {
        for (const auto& nic : srv.nics) {
            for (const auto& np : nic.ports) {
                std::string leafPort = np.leafPort;
                if (evpn) {  // the veth stands in for the port's one-member bond
                    for (const auto& s : evpnLeaf(*plan_.findSwitch(np.leaf)).segments)
                        if (s.port == np.leafPort) leafPort = s.bond;
                }
                fabric.link(nicNode(srv, nic), np.name, np.leaf, leafPort);
            }
        }
    }
}

void PlanLab::buildEvpnLinks() {
    for (const auto& sw : plan_.switches) {
        if (sw.spine) continue;
        // The planner's links.sh, one argument vector per line, never through a shell:
        // scriptCommands() refuses a line that would need one.
        auto cmds =
            scriptCommands(plan::evpnLinkCommands(plan_, plan::evpnMhLeaf(plan_, sw), false));
        if (auto res = inNodeAll(name_, sw.name, cmds); res.rc != 0) {
            throw std::runtime_error("cannot build the EVPN-MH links of " + sw.name + ": " +
                                     res.out);
        }
    }
}

void PlanLab::addressSwitches() {
    for (const auto& sw : plan_.switches) {
        std::vector<Argv> cmds{{"ip", "addr", "add", sw.loopback + "/32", "dev", "lo"}};
        auto db = plan::configDb(plan_, sw);
        // evpn-mh: the SVIs are addressed by the link commands (buildEvpnLinks).
        if (db.contains("INTERFACE") && r().attach != plan::Attach::EvpnMh) {
            for (const auto& [key, v] : db["INTERFACE"].items()) {
                auto bar = key.find('|');
                // Every host port of a rail carries its gateway; the /32s make the routes.
                if (bar != std::string::npos) {
                    cmds.push_back({"ip", "addr", "add", key.substr(bar + 1), "dev",
                                    key.substr(0, bar), "noprefixroute"});
                } else if (v.contains("mac_addr")) {
                    // The one gateway MAC of the bond attachment (as intfmgrd applies it).
                    cmds.push_back({"ip", "link", "set", "dev", key, "address",
                                    v["mac_addr"].get<std::string>()});
                }
            }
        }
        if (auto r = inNodeAll(name_, sw.name, cmds); r.rc != 0)
            throw std::runtime_error("cannot address " + sw.name + ": " + r.out);
    }
}

void PlanLab::addressNics() {
    if (r().attach != plan::Attach::Routed) {
        writeBondHashObject(dir_ + "/bond_hash.o");
        for (const auto& srv : plan_.servers)
            for (const auto& nic : srv.nics) startBondNic(srv, nic);
        return;
    }
    // Routed: the NIC's address on its loopback, reachable through either port.
    for (const auto& srv : plan_.servers) {
        for (const auto& nic : srv.nics) {
            if (inNodeRun(name_, nicNode(srv, nic),
                          {"ip", "addr", "add", nic.address + "/32", "dev", "lo"})
                    .rc != 0)
                throw std::runtime_error("cannot address " + nicNode(srv, nic));
        }
    }
}

BondNic bondNicFor(const std::string& labName, const plan::Plan& p, const plan::Server& srv,
                   const plan::Nic& nic) {
    const plan::RailSubnet* rs = p.subnetFor(srv.group, nic.rail);
    if (rs == nullptr) throw std::runtime_error("no rail subnet for " + srv.name + "/" + nic.name);
    BondNic b;
    for (const auto& np : nic.ports) b.ports.push_back(np.name);
    b.mac = macForAddress(nic.address);
    b.address = nic.address + rs->prefix.substr(rs->prefix.find('/'));
    b.gateway = rs->gateway;
    b.aggregate = plan::fabricAggregate(p);
    b.bpfObject = PlanLab::stateDir(labName) + "/bond_hash.o";
    b.dualSendArp = p.request.attach != plan::Attach::EvpnMh;
    return b;
}

void PlanLab::startBondNic(const plan::Server& srv, const plan::Nic& nic) {
    const std::string node = nicNode(srv, nic);
    BondNic b = bondNicFor(name_, plan_, srv, nic);
    if (auto res = inNodeAll(name_, node, bondSetupCommands(b)); res.rc != 0)
        throw std::runtime_error("cannot build the bond of " + node + ": " + res.out);
    // The bond's miimon: follows the ports' carrier (see bond_nic.h).
    std::string log = dir_ + "/" + node + "-bond-agent.log";
    spawnDetached(inNamespace(ns(node), {bins_.self, "bond-agent", b.bond, b.ports[0], b.ports[1],
                                         b.bpfObject}),
                  log);
}

void PlanLab::startSwitch(const plan::Switch& sw) {
    fs::create_directories(dir_ + "/" + sw.name);
    auto db = plan::configDb(plan_, sw);
    // Lab scale: a veth port reports 10 Gbit/s, so pathqd measures against that rather
    // than the plan's port speeds (every port the same, so levels compare as on hardware).
    db["PATHQD"]["global"]["reference_mbps"] = "10000";
    // Probe latency between namespaces on a shared machine jitters by hundreds of
    // microseconds with no queue at all; a switch's ports do not.
    db["PATHQD"]["global"]["latency_ref_us"] = "5000";
    for (auto& [port, row] : db["PATHQD_PORT"].items()) row["capacity_mbps"] = "10000";
    // Liveness at the Cumulus example's 1 s keepalive and 3 s holdtime (the planner's
    // default is 3/9): a lost host leaves in 3 s, and a test of 10 holdtimes takes 30 s.
    if (db.contains("HOSTROUTED")) {
        db["HOSTROUTED"]["global"]["keepalive"] = "1";
        db["HOSTROUTED"]["global"]["holdtime"] = "3";
    }
    if (auto keys = labNoticeKeys(dir_); keys && !sw.spine)
        db["HOSTROUTED_NOTICE"] = plan::leafNoticeTable(plan_, sw, *keys);
    std::ofstream(dir_ + "/" + sw.name + "/config_db.json") << db.dump(2) << "\n";
    if (db.contains("HOSTROUTED_NOTICE"))
        restrictToDaemons(dir_ + "/" + sw.name + "/config_db.json");
    startService(name_, bins_, sw.name, Service::Redis);
    if (!sw.spine) startService(name_, bins_, sw.name, Service::Hostrouted);
    startService(name_, bins_, sw.name, Service::Pathqd);
    startArsdIfEnabled(name_, bins_, sw.name, db);
}

// Every NIC reaches every other through every plane, and every switch's BGP sessions have
// been up for 3 s: one spine per plane is enough for reachability, and a lab handed over with
// another spine's sessions still Idle, or reset once more while the daemons apply their FRR
// lines at start, failed the first `twinrail verify` (CI, SONiC EVPN-MH layout).
bool PlanLab::converged() const {
    for (const auto& sw : plan_.switches) {
        auto bgp = bgpSessions(prefix_ + sw.name);
        if (bgp["configured"] == 0 || bgp["established"] != bgp["configured"] ||
            bgp["youngest_ms"] < 3000)
            return false;
    }
    return everyNicReachesEveryNicThroughEveryPlane(nicReachability(name_, plan_));
}

NodeResult inNodeRun(const std::string& labName, const std::string& node, const Argv& argv) {
    auto r = run(inNamespace(PlanLab::nsPrefix(labName) + node, argv));
    return {r.rc, r.out + r.err};
}

NodeResult inNodeAll(const std::string& labName, const std::string& node,
                     const std::vector<Argv>& commands, bool stopOnError) {
    std::vector<Argv> inside;
    inside.reserve(commands.size());
    for (const auto& c : commands)
        inside.push_back(inNamespace(PlanLab::nsPrefix(labName) + node, c));
    auto r = runAll(inside, stopOnError);
    return {r.rc, r.out + r.err};
}

}  // namespace twinrail::lab
