// twinrail-lab: rehearse a twinrail plan on this machine, in network namespaces with real
// FRR, Redis, hostrouted and pathqd. See `twinrail-lab --help`.
#include <unistd.h>

#include <csignal>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "tour.h"
#include "twinrail/common/names.h"
#include "twinrail/common/sysexits.h"
#include "twinrail/common/tool_main.h"
#include "twinrail/lab/bond_nic.h"
#include "twinrail/lab/flow_probe.h"
#include "twinrail/lab/lab_status.h"
#include "twinrail/lab/measure.h"
#include "twinrail/lab/network_advertiser.h"
#include "twinrail/lab/shell.h"
#include "twinrail/plan/outputs.h"

namespace lab = twinrail::lab;
namespace plan = twinrail::plan;
namespace exitcode = twinrail::exitcode;
namespace fs = std::filesystem;

namespace {

constexpr const char* kUsage = R"(usage: twinrail-lab <command> [--name NAME] [options]

  up [--plan FILE] [--attach bond|routed|evpn-mh] [--keep] [--no-steer]
     [--lb ecmp|static|ars|ars-global|spray]
                       build the plan (default: 2 planes x 2 leaves x 2 spines, 2 servers
                       x 2 NICs) in namespaces; every switch runs FRR, its own Redis,
                       pathqd and (leaves) hostrouted; returns when every NIC reaches
                       every other NIC through both planes. Cleans up a previous lab
                       of the same name first. Plans come from twinrail-plan: NICs
                       attached as bonds (the default), routed or evpn-mh (--attach:
                       the default plan in that mode; EVPN-MH leaf pairs over an AUX
                       link, each NIC an 802.3ad-like bond to its pair's segment).
                       Bonded NICs (bond, evpn-mh) run planesteer, as the planner
                       ships them (planesteer(8)); --no-steer leaves it out, to
                       show what a bond alone loses.
                       --lb static: static smart routing on every leaf (each downlink
                       pinned to its planned uplink, hostrouted(8) UPLINK_PIN).
                       --lb ars|ars-global|spray: every switch's fabric ports run the
                       software ARS path (arsd): flowlets on local port quality, the
                       same with the path beyond each next hop (GLOBAL_ARS), or
                       per-packet random spray; config in SONiC's ARS tables.
      [--nos linux|sonic] [--sonic-release R] [--hwsku DIR]
                       the switches' layout: Linux (the default: swp ports, frr.conf,
                       config_db.json) or SONiC's, built from the planner's SONiC
                       target: EthernetN ports from the HWSKU (--hwsku, else
                       lab/hwsku/<model>, else the planner's), a bridge per VLAN with
                       its SVI, CONFIG_DB loaded, database_config.json, the release's
                       frr.conf (default 202505; master with evpn-mh, the only one
                       with its tables); FRR in a container per switch, reached as
                       the release's daemons reach it. Not with --lb static (no
                       aclorch here). docs/lab.md
  status [--json]      processes, BGP sessions, host routes, NIC reachability per plane
  fail NODE[:PORT]     take a switch (all its ports) or one port down (SONiC layout: a
                       switch port by its plan name, swp3, or its EthernetN name)
  restore NODE[:PORT]  bring it back; NICs on it announce themselves again
  swap-cables NIC:PORT NIC:PORT
                       miscable on purpose: two NIC ports' cables change places (again:
                       back); twinrail verify names them
  stop NODE SERVICE [--kill]
                       stop a switch's redis, hostrouted, pathqd or arsd (SIGTERM,
                       or SIGKILL)
  start NODE SERVICE   start it again as the lab does (the daemons as their units run)
  restart-frr NODE [--kill|--clean|--service]
                       restart a switch's FRR: zebra and bgpd killed with SIGKILL and
                       started again (--kill, the default), every FRR daemon stopped and
                       started (--clean), or FRR's init script as `systemctl restart frr`
                       runs it, under watchfrr from then on (--service)
  measure --fail NODE[:PORT] [--from NIC --to NIC] [--seconds N] [--json]
                       UDP flows both ways while NODE fails: the interruption
  down                 remove everything of the lab: processes, namespaces, files
  demo [--plan FILE]   up (bonded NICs: with planesteer), a short tour (host routes per
                       plane, WCMP weights, STATE_DB, a leaf and a NIC port failing
                       under traffic), down

  --name NAME          1-6 of a-z0-9; several labs can run side by side        [lab]
  --hostrouted PATH, --pathqd PATH, --planesteer PATH, --arsd PATH
                       the daemons to run                    [next to this tool, or PATH]

Exit codes: 0 ok, 64 usage, 78 a plan file refused (naming the field), 65 a plan that
cannot be built, 69 the lab is not healthy / the demo failed,
70 an internal error, 77 not root.
)";

struct Options {
    std::string command;
    std::vector<std::string> args;
    std::string name = "lab";
    std::string planFile;
    std::string from = "srv1-nic2";
    std::string to = "srv1-nic1";
    std::string failTarget;
    int seconds = 6;
    bool json = false;
    lab::FrrRestart frrRestart = lab::FrrRestart::Kill;
    bool killGiven = false;
    bool keep = false;                      // up: leave a lab that failed to come up, to look at it
    bool steer = true;                      // up: planesteer on every bonded NIC
    std::optional<plan::Request::Lb> lb;    // up: overrides the plan's
    std::optional<plan::Attach> attach;     // up, default plan: bond, routed or evpn-mh
    std::optional<lab::SonicLayout> sonic;  // up --nos sonic
    bool sonicImplied = false;              // only --sonic-release/--hwsku gave it
    lab::LabBinaries bins;
};

// --sonic-release: one of the releases twinrail supports (sonic_release.h).
twinrail::plan::SonicRelease parseRelease(const std::string& v) {
    if (auto why = twinrail::plan::sonicReleaseRefusal(v))
        throw twinrail::UsageError{"--sonic-release: " + *why};
    return *twinrail::plan::parseSonicRelease(v);
}

using twinrail::ConfigFileError;
using twinrail::UsageError;

// The daemons and the CLI from the build tree this binary is in (build/lab/tool/), else
// from PATH (an installed package's).
std::string sibling(const std::string& self, const std::string& rel, const std::string& name) {
    fs::path dir = fs::path(self).parent_path();
    for (const auto& candidate : {dir / name, dir / rel / name})
        if (fs::exists(candidate)) return fs::canonical(candidate).string();
    return name;
}

bool hasNosSonic(int argc, char** argv) {
    for (int i = 1; i + 1 < argc; ++i)
        if (std::string(argv[i]) == "--nos" && std::string(argv[i + 1]) == "sonic") return true;
    return false;
}

// --sonic-release and --hwsku come with --nos sonic (before or after it).
lab::SonicLayout& sonicOnly(Options& o) {
    if (!o.sonic) o.sonic = lab::SonicLayout{}, o.sonicImplied = true;
    return *o.sonic;
}

Options parse(int argc, char** argv) {
    Options o;
    o.bins.self = fs::canonical("/proc/self/exe").string();
    o.bins.hostrouted = sibling(o.bins.self, "../../daemons/hostrouted", "hostrouted");
    o.bins.pathqd = sibling(o.bins.self, "../../daemons/pathqd", "pathqd");
    o.bins.twinrail = sibling(o.bins.self, "../../tools/twinrail", "twinrail");
    o.bins.planesteer = sibling(o.bins.self, "../../daemons/planesteer", "planesteer");
    o.bins.arsd = sibling(o.bins.self, "../../daemons/arsd", "arsd");
    if (argc < 2) throw UsageError{"no command"};
    o.command = argv[1];
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [argc, argv, &i, &a] {
            if (i + 1 >= argc) throw UsageError{a + " needs a value"};
            return std::string(argv[++i]);
        };
        if (a == "--name") {
            o.name = value();
        } else if (a == "--plan") {
            o.planFile = value();
        } else if (a == "--hostrouted") {
            o.bins.hostrouted = value();
        } else if (a == "--pathqd") {
            o.bins.pathqd = value();
        } else if (a == "--arsd") {
            o.bins.arsd = value();
        } else if (a == "--from") {
            o.from = value();
        } else if (a == "--to") {
            o.to = value();
        } else if (a == "--fail") {
            o.failTarget = value();
        } else if (a == "--seconds") {
            o.seconds = std::stoi(value());
        } else if (a == "--json") {
            o.json = true;
        } else if (a == "--keep") {
            o.keep = true;
        } else if (a == "--attach") {
            o.attach = plan::parseAttach(value());
            if (!o.attach) throw UsageError{"--attach: bond, routed or evpn-mh"};
        } else if (a == "--lb") {
            o.lb = plan::parseLb(value());
            if (!o.lb) throw UsageError{std::string("--lb: one of ") + plan::kLbNames};
        } else if (a == "--nos") {
            std::string nos = value();
            if (nos != "linux" && nos != "sonic") throw UsageError{"--nos: linux or sonic"};
            if (nos == "sonic" && !o.sonic) o.sonic = lab::SonicLayout{};
            if (nos == "linux") o.sonic.reset();
        } else if (a == "--sonic-release") {
            sonicOnly(o).release = parseRelease(value());
        } else if (a == "--hwsku") {
            sonicOnly(o).hwskuDir = value();
        } else if (a == "--steer") {  // the default now; kept for scripts that say it
            o.steer = true;
        } else if (a == "--no-steer") {
            o.steer = false;
        } else if (a == "--planesteer") {
            o.bins.planesteer = value();
        } else if (a == "--kill" || a == "--clean" || a == "--service") {
            o.killGiven = a == "--kill";
            o.frrRestart = a == "--kill"    ? lab::FrrRestart::Kill
                           : a == "--clean" ? lab::FrrRestart::Clean
                                            : lab::FrrRestart::Service;
        } else if (a.rfind("--", 0) == 0) {
            throw UsageError{"unknown option " + a};
        } else {
            o.args.push_back(a);
        }
    }
    if (!lab::PlanLab::validName(o.name)) throw UsageError{"--name: use 1-6 of a-z and 0-9"};
    if (o.sonic && o.sonicImplied && !hasNosSonic(argc, argv))
        throw UsageError{"--sonic-release and --hwsku need --nos sonic"};

    // Node names become namespace names and paths under the lab's state folder.
    for (const auto* node : {&o.from, &o.to}) {
        if (auto why = twinrail::names::check(*node, twinrail::names::Kind::Node))
            throw UsageError{"\"" + twinrail::names::printable(*node) + "\": node name " + *why};
    }
    if ((o.command == "stop" || o.command == "start") && !o.args.empty()) {
        if (auto why = twinrail::names::check(o.args[0], twinrail::names::Kind::Node)) {
            throw UsageError{"\"" + twinrail::names::printable(o.args[0]) + "\": node name " +
                             *why};
        }
    }
    return o;
}

plan::Plan planFor(const Options& o) {
    std::variant<plan::Plan, plan::SizingError> p;
    if (o.planFile.empty()) {
        p = plan::buildPlan(lab::defaultLabRequest(o.attach.value_or(plan::Attach::Bond)));
    } else {
        std::ifstream in(o.planFile);
        auto j = nlohmann::json::parse(in, nullptr, false);
        if (j.is_discarded()) throw ConfigFileError(o.planFile + ": not a JSON plan file");
        p = plan::planFromJson(j);
        if (auto* e = std::get_if<plan::SizingError>(&p))
            throw ConfigFileError(o.planFile + ": " + e->message);
    }
    if (auto* e = std::get_if<plan::SizingError>(&p)) throw std::invalid_argument(e->message);
    auto out = std::get<plan::Plan>(p);
    if (o.lb) out.request.lb = *o.lb;
    return out;
}

int up(const Options& o) {
    auto t0 = std::chrono::steady_clock::now();
    if (o.sonic && !o.sonic->hwskuDir.empty() && !fs::is_directory(o.sonic->hwskuDir)) {
        std::cerr << "twinrail-lab: --hwsku " << o.sonic->hwskuDir << ": no such directory\n";
        return exitcode::kNoInput;
    }
    lab::PlanLab l(o.name, planFor(o), o.bins, o.sonic);
    std::cout << plan::sizingReport(l.plan());
    std::cout << "building lab \"" << o.name << "\" ...\n" << std::flush;
    l.up(o.keep);
    if (o.steer) lab::startPlaneSteers(o.name, l.plan(), o.bins.planesteer);
    auto s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "lab \"" << o.name
              << "\" is up: every NIC reaches every other NIC through both planes ("
              << static_cast<int>(s) << " s). `twinrail-lab status`, `twinrail-lab down`.\n";
    return exitcode::kOk;
}

int status(const Options& o) {
    auto s = lab::labStatus(o.name);
    std::cout << (o.json ? s.dump(2) + "\n" : lab::statusTable(s));
    return s["healthy"].get<bool>() ? exitcode::kOk : exitcode::kUnavailable;
}

int down(const Options& o) {
    auto done = lab::PlanLab::down(o.name);
    if (done.empty()) std::cout << "nothing of lab \"" << o.name << "\" was left\n";
    for (const auto& d : done) std::cout << d << "\n";
    return exitcode::kOk;
}

int measure(const Options& o) {
    if (o.failTarget.empty()) throw UsageError{"measure needs --fail NODE[:PORT]"};
    std::vector<lab::FlowPair> pairs{{o.from, o.to}, {o.to, o.from}};
    auto r = lab::measureDuring(
        o.name, o.bins, pairs, [&o] { lab::failNode(o.name, o.failTarget); }, o.seconds);
    std::cout << (o.json ? r.dump(2) + "\n" : lab::describeMeasurement(r));
    for (const auto& x : r)
        if (x.contains("error") || x["flows_not_recovered"] != 0) return exitcode::kUnavailable;
    return exitcode::kOk;
}

int demo(Options o) {
    // The seed's mode with the gap closed where it can be: planesteer on every bonded NIC.
    o.steer = true;
    up(o);
    bool ok = false;
    try {
        ok = twinrail::labtool::runTour(o.name, o.bins, planFor(o));
    } catch (const std::exception& e) {
        std::cerr << "twinrail-lab: demo: " << e.what() << "\n";
    }
    std::cout << "\n\033[1m== Tearing down\033[0m\n";
    down(o);
    std::istringstream list(lab::run({"ip", "netns", "list"}).out);
    int left = 0;
    for (std::string line; std::getline(list, line);)
        left += line.rfind(lab::PlanLab::nsPrefix(o.name), 0) == 0;
    std::cout << "namespaces left: " << left << "\n" << (ok ? "demo finished\n" : "DEMO FAILED\n");
    return ok ? exitcode::kOk : exitcode::kUnavailable;
}

// Helpers this tool runs inside a namespace.
int hidden(const std::vector<std::string>& a, const std::string& cmd) {
    using std::chrono::microseconds, std::chrono::milliseconds;
    if (cmd == "announce" && (a.size() == 3 || (a.size() == 4 && a[3] == "reply"))) {
        std::string err;
        if (lab::sendArpAnnounce(a[0], a[1], a[2], err, a.size() == 4)) return exitcode::kOk;
        std::cerr << "announce: " << err << "\n";
        return exitcode::kOsErr;
    }
    if (cmd == "flow-send" && a.size() == 5) {
        std::cout << lab::runFlowSender(a[0], static_cast<uint16_t>(std::stoi(a[1])),
                                        std::stoi(a[2]), microseconds(std::stoi(a[3])),
                                        milliseconds(std::stoi(a[4])))
                  << std::endl;
        return exitcode::kOk;
    }
    if (cmd == "flow-recv" && a.size() == 3) {
        std::cout << lab::runFlowReceiver(static_cast<uint16_t>(std::stoi(a[0])),
                                          microseconds(std::stoi(a[1])),
                                          milliseconds(std::stoi(a[2])))
                  << std::endl;
        return exitcode::kOk;
    }
    if (cmd == "advertise-networks" && a.size() == 2) return lab::runNetworkAdvertiser(a[0], a[1]);
    if (cmd == "bond-agent" && a.size() == 4) {
        lab::BondNic b;
        b.bond = a[0];
        b.ports = {a[1], a[2]};
        b.bpfObject = a[3];
        return lab::runBondAgent(b);
    }
    throw UsageError{"bad arguments for " + cmd};
}

lab::Service serviceFrom(const std::string& name) {
    if (name == "redis") return lab::Service::Redis;
    if (name == "hostrouted") return lab::Service::Hostrouted;
    if (name == "pathqd") return lab::Service::Pathqd;
    if (name == "arsd") return lab::Service::Arsd;
    throw UsageError{"unknown service " + name + " (redis, hostrouted, pathqd, arsd)"};
}

int run(const Options& o) {
    const std::string& c = o.command;
    if (c == "announce" || c == "flow-send" || c == "flow-recv" || c == "bond-agent" ||
        c == "advertise-networks")
        return hidden(o.args, c);
    if (geteuid() != 0) {
        std::cerr << "twinrail-lab: needs root (network namespaces, FRR)\n";
        return 77;
    }
    if (c == "up") return up(o);
    if (c == "status") return status(o);
    if (c == "down") return down(o);
    if (c == "demo") return demo(o);
    if (c == "measure") return measure(o);
    if ((c == "fail" || c == "restore") && o.args.size() == 1) {
        if (c == "fail") {
            lab::failNode(o.name, o.args[0]);
        } else {
            lab::restoreNode(o.name, o.bins, o.args[0]);
        }
        std::cout << c << " " << o.args[0] << ": done\n";
        return exitcode::kOk;
    }
    if ((c == "stop" || c == "start") && o.args.size() == 2) {
        lab::Service svc = serviceFrom(o.args[1]);
        if (c == "start") {
            lab::startService(o.name, o.bins, o.args[0], svc);
        } else if (!lab::stopService(
                       o.name, o.args[0], svc,
                       o.frrRestart == lab::FrrRestart::Kill && o.killGiven ? SIGKILL : SIGTERM)) {
            std::cerr << "twinrail-lab: " << o.args[1] << " was not running on " << o.args[0]
                      << "\n";
            return exitcode::kUnavailable;
        }
        std::cout << c << " " << o.args[0] << " " << o.args[1] << ": done\n";
        return exitcode::kOk;
    }
    if (c == "swap-cables" && o.args.size() == 2) {
        lab::swapNicCables(o.name, o.bins, o.args[0], o.args[1]);
        std::cout << "swapped the cables of " << o.args[0] << " and " << o.args[1] << "\n";
        return exitcode::kOk;
    }
    if (c == "restart-frr" && o.args.size() == 1) {
        lab::restartFrr(o.name, o.args[0], o.frrRestart);
        std::cout << "restart-frr " << o.args[0] << ": done\n";
        return exitcode::kOk;
    }
    throw UsageError{"unknown command or arguments: " + c};
}

}  // namespace

int main(int argc, char** argv) {
    return twinrail::toolMain(argc, argv, "twinrail-lab", kUsage,
                              [argc, argv] { return run(parse(argc, argv)); });
}
