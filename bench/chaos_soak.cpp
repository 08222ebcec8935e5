// Chaos soak on the dual-plane lab: for a set time (15 min by default), random faults
// one at a time (a leaf, a spine, a leaf-spine link or a NIC port goes down; hostrouted
// or pathqd killed with SIGKILL; FRR killed or restarted; Redis restarted), each held a
// few seconds, healed, then a quiet period. Invariants, checked throughout:
//   * every NIC reaches every other NIC through at least one plane, except in windows of
//     at most kWindowBound (pings every 200 ms between every pair, timestamped);
//   * after each quiet period, every NIC reaches every other NIC through every plane;
//   * STATE_DB matches the kernel (each leaf's installed HOST_ROUTE_TABLE rows are its
//     table 10; each switch has a PATH_QUALITY_TABLE row per configured port);
//   * nothing leaks: one of each process per switch, no host route outside the plan,
//     the same set of pathqd route-maps on each spine.
// Writes a JSON report: the faults, the longest window per kind, and every breach.
//
// usage: chaos_soak TWINRAIL_LAB HOSTROUTED PATHQD OUT.json [SECONDS] [SEED]
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "twinrail/lab/lab_status.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/process.h"
#include "twinrail/lab/shell.h"
#include "twinrail/plan/plan.h"

namespace lab = twinrail::lab;
namespace plan = twinrail::plan;
using json = nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::system_clock;

namespace {

constexpr const char* kLab = "soak";
constexpr double kWindowBound = 3.0;  // seconds a pair may go unanswered
constexpr auto kQuiet = 10s;
constexpr auto kHealthyWithin = 90s;

double now() {
    return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

struct Fault {
    std::string kind, target;
    double start = 0, healed = 0, healthyAfter = -1;
    std::vector<std::string> breaches;
};

struct Soak {
    plan::Plan plan;
    lab::LabBinaries bins;
    std::mt19937 rng;
    std::vector<std::string> leaves, spines, nics;
    std::map<std::string, std::set<std::string>> routeMaps;  // spine -> pathqd's route-maps
    std::vector<Fault> faults;

    std::string pick(const std::vector<std::string>& from) {
        return from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)];
    }
    int between(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
    std::string redis(const std::string& node, const lab::Argv& args) {
        lab::Argv argv{"redis-cli", "-s", lab::PlanLab::stateDir(kLab) + "/" + node + "/redis.sock",
                       "-n", "6"};
        argv.insert(argv.end(), args.begin(), args.end());
        return lab::inNodeRun(kLab, node, argv).out;
    }
};

std::set<std::string> lines(const std::string& text) {
    std::set<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
        if (!l.empty()) out.insert(l);
    return out;
}

std::set<std::string> pathqdRouteMaps(const std::string& spine) {
    auto cfg =
        lab::run({"vtysh", "-N", lab::PlanLab::nsPrefix(kLab) + spine, "-c", "show running-config"})
            .out;
    std::set<std::string> out;
    for (const auto& l : lines(cfg))
        if (l.rfind("route-map TWINRAIL-PQ", 0) == 0) out.insert(l);
    return out;
}

// The invariants that must hold once the fabric is quiet; returns what does not.
std::vector<std::string> checkQuiet(Soak& s) {
    std::vector<std::string> bad;
    auto status = lab::labStatus(kLab);
    if (!status.value("healthy", false))
        bad.push_back("not every NIC reaches every NIC through every plane");
    std::set<std::string> planned;
    for (const auto& srv : s.plan.servers)
        for (const auto& nic : srv.nics) planned.insert(nic.address);
    for (const auto& leaf : s.leaves) {
        std::set<std::string> table;
        for (const auto& l :
             lines(lab::inNodeRun(kLab, leaf, {"ip", "route", "show", "table", "10"}).out))
            table.insert(l.substr(0, l.find(' ')));
        std::set<std::string> state;
        for (const auto& key :
             lines(s.redis(leaf, {"--scan", "--pattern", "HOST_ROUTE_TABLE|*"}))) {
            if (s.redis(leaf, {"HGET", key, "state"}) == "installed\n")
                state.insert(key.substr(key.find('|') + 1));
        }
        if (table != state) bad.push_back(leaf + ": STATE_DB installed hosts differ from table 10");
        for (const auto& h : table) {
            if (planned.count(h) == 0)
                bad.push_back(leaf + ": host route " + h + " outside the plan");
        }
    }
    for (const auto& sw : s.plan.switches) {
        for (const auto& p : sw.ports) {
            if (p.role != plan::PortRole::Uplink) continue;
            if (s.redis(sw.name, {"EXISTS", "PATH_QUALITY_TABLE|" + p.name}) != "1\n")
                bad.push_back(sw.name + ": no PATH_QUALITY_TABLE row for " + p.name);
        }
        std::map<std::string, int> procs;
        std::istringstream in(
            lab::run({"ip", "netns", "pids", lab::PlanLab::nsPrefix(kLab) + sw.name}).out);
        for (std::string pid; in >> pid;) {
            std::ifstream comm("/proc/" + pid + "/comm");
            std::string name;
            if (std::getline(comm, name)) ++procs[name];
        }
        for (const auto& [name, n] : procs) {
            if (n > 1 && name != "vtysh")
                bad.push_back(sw.name + ": " + std::to_string(n) + " " + name);
        }
    }
    for (const auto& spine : s.spines) {
        if (pathqdRouteMaps(spine) != s.routeMaps[spine])
            bad.push_back(spine + ": pathqd route-maps changed");
    }
    return bad;
}

// Injects one random fault and returns what heals it.
std::function<void()> inject(Soak& s, Fault& f) {
    static const std::vector<std::string> kinds = {
        "nic-port",     "leaf",      "spine",       "leaf-spine-link", "hostrouted-kill9",
        "pathqd-kill9", "frr-kill9", "frr-restart", "redis-restart"};
    f.kind = kinds[std::uniform_int_distribution<size_t>(0, kinds.size() - 1)(s.rng)];
    if (f.kind == "nic-port") {
        f.target = s.pick(s.nics) + ":port" + std::to_string(s.between(1, 2));
    } else if (f.kind == "leaf") {
        f.target = s.pick(s.leaves);
    } else if (f.kind == "spine") {
        f.target = s.pick(s.spines);
    } else if (f.kind == "leaf-spine-link") {
        std::string leaf = s.pick(s.leaves);
        std::vector<std::string> up;
        for (const auto& sw : s.plan.switches) {
            if (sw.name == leaf) {
                for (const auto& p : sw.ports)
                    if (p.role == plan::PortRole::Uplink) up.push_back(p.name);
            }
        }
        f.target = leaf + ":" + s.pick(up);
    }
    if (f.kind == "nic-port" || f.kind == "leaf" || f.kind == "spine" ||
        f.kind == "leaf-spine-link") {
        lab::failNode(kLab, f.target);
        return [&s, t = f.target] { lab::restoreNode(kLab, s.bins, t); };
    }
    if (f.kind == "hostrouted-kill9" || f.kind == "pathqd-kill9") {
        auto svc = f.kind == "hostrouted-kill9" ? lab::Service::Hostrouted : lab::Service::Pathqd;
        f.target = svc == lab::Service::Hostrouted ? s.pick(s.leaves)
                                                   : s.pick(s.between(0, 1) ? s.leaves : s.spines);
        lab::stopService(kLab, f.target, svc, SIGKILL);
        return [&s, t = f.target, svc] { lab::startService(kLab, s.bins, t, svc); };
    }
    if (f.kind == "redis-restart") {
        f.target = s.between(0, 1) ? s.pick(s.leaves) : s.pick(s.spines);
        lab::stopService(kLab, f.target, lab::Service::Redis, SIGKILL);
        return [&s, t = f.target] { lab::startService(kLab, s.bins, t, lab::Service::Redis); };
    }
    f.target = s.between(0, 1) ? s.pick(s.leaves) : s.pick(s.spines);
    lab::restartFrr(kLab, f.target,
                    f.kind == "frr-kill9" ? lab::FrrRestart::Kill : lab::FrrRestart::Clean);
    return [] {};
}

// Reply times per pair from `ping -D` logs: every gap over 1 s between two replies is a
// window, reported with the fault it fell in; over kWindowBound it is a breach.
json windows(Soak& s, const std::map<std::string, std::string>& logs, double t0, double t1,
             double& longestGap) {
    json out = json::array();
    for (const auto& [pair, path] : logs) {
        std::ifstream in(path);
        std::vector<double> replies;
        for (std::string l; std::getline(in, l);) {
            if (l.size() < 3 || l[0] != '[' || l.find("bytes from") == std::string::npos) continue;
            replies.push_back(std::stod(l.substr(1, l.find(']') - 1)));
        }
        replies.insert(replies.begin(), t0);
        replies.push_back(t1);
        for (size_t i = 1; i < replies.size(); ++i) {
            double gap = replies[i] - replies[i - 1];
            if (i > 1 && i + 1 < replies.size()) longestGap = std::max(longestGap, gap);
            if (gap <= 1.0) continue;
            std::string during = "none";
            for (const auto& f : s.faults) {
                if (replies[i - 1] < f.healthyAfter + 1 && replies[i] > f.start - 1)
                    during = f.kind + " " + f.target;
            }
            out.push_back({{"pair", pair},
                           {"from", replies[i - 1]},
                           {"seconds", gap},
                           {"during", during},
                           {"breach", gap > kWindowBound}});
        }
    }
    return out;
}

}  // namespace

static int benchMain(int argc, char** argv) {
    if (argc < 5) {
        std::cerr << "usage: chaos_soak TWINRAIL_LAB HOSTROUTED PATHQD OUT.json [SECONDS] [SEED]\n";
        return 64;
    }
    int seconds = argc > 5 ? std::stoi(argv[5]) : 900;
    unsigned seed = argc > 6 ? static_cast<unsigned>(std::stoul(argv[6])) : 20261201u;
    Soak s{std::get<plan::Plan>(plan::buildPlan(lab::defaultLabRequest(plan::Attach::Routed))),
           lab::LabBinaries{argv[2], argv[3], argv[1], "twinrail"},
           std::mt19937(seed),
           {},
           {},
           {},
           {},
           {}};
    for (const auto& sw : s.plan.switches) (sw.spine ? s.spines : s.leaves).push_back(sw.name);
    for (const auto& srv : s.plan.servers)
        for (const auto& nic : srv.nics) s.nics.push_back(lab::PlanLab::nicNode(srv, nic));
    lab::PlanLab lab(kLab, s.plan, s.bins);
    lab.up();
    std::this_thread::sleep_for(10s);  // pathqd publishes its first levels
    for (const auto& spine : s.spines) s.routeMaps[spine] = pathqdRouteMaps(spine);
    auto initial = checkQuiet(s);

    std::string dir = "/tmp/trl-soak-pings";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::vector<std::unique_ptr<lab::ChildProcess>> pingers;
    std::map<std::string, std::string> logs;
    for (const auto& a : s.plan.servers) {
        for (const auto& an : a.nics) {
            for (const auto& b : s.plan.servers) {
                for (const auto& bn : b.nics) {
                    if (&an == &bn) continue;
                    std::string pair =
                        lab::PlanLab::nicNode(a, an) + ">" + lab::PlanLab::nicNode(b, bn);
                    logs[pair] = dir + "/" + pair + ".log";
                    pingers.push_back(std::make_unique<lab::ChildProcess>(
                        std::vector<std::string>{
                            "ip", "netns", "exec",
                            lab::PlanLab::nsPrefix(kLab) + lab::PlanLab::nicNode(a, an), "ping",
                            "-D", "-n", "-i", "0.2", "-I", an.address, bn.address},
                        logs[pair]));
                }
            }
        }
    }
    double t0 = now();
    double end = t0 + seconds;
    while (now() < end) {
        Fault f;
        f.start = now();
        std::function<void()> heal;
        try {
            heal = inject(s, f);
        } catch (const std::exception& e) {
            f.breaches.push_back(std::string("inject failed: ") + e.what());
        }
        std::this_thread::sleep_for(std::chrono::seconds(s.between(5, 15)));
        try {
            if (heal) heal();
        } catch (const std::exception& e) {
            f.breaches.push_back(std::string("heal failed: ") + e.what());
        }
        f.healed = now();
        if (lab::waitUntil([] { return lab::labStatus(kLab).value("healthy", false); },
                           kHealthyWithin, 500ms)) {
            f.healthyAfter = now();
        } else {
            f.breaches.push_back("not healthy " + std::to_string(kHealthyWithin.count()) +
                                 " s after healing");
        }
        std::this_thread::sleep_for(kQuiet);
        for (auto& b : checkQuiet(s)) f.breaches.push_back(b);
        std::cout << f.kind << " " << f.target << ": healthy " << (f.healthyAfter - f.healed)
                  << " s after healing, " << f.breaches.size() << " breaches" << std::endl;
        s.faults.push_back(f);
    }
    double t1 = now();
    pingers.clear();
    json report{{"seconds", t1 - t0},
                {"seed", seed},
                {"window_bound_s", kWindowBound},
                {"initial_breaches", initial},
                {"faults", json::array()},
                {"by_kind", json::object()}};
    size_t breaches = initial.size();
    for (const auto& f : s.faults) {
        report["faults"].push_back(
            {{"kind", f.kind},
             {"target", f.target},
             {"start", f.start},
             {"healed", f.healed},
             {"healthy_after_heal_s", f.healthyAfter < 0 ? -1 : f.healthyAfter - f.healed},
             {"breaches", f.breaches}});
        auto& k = report["by_kind"][f.kind];
        if (k.is_null()) k = json::object();
        k["count"] = k.value("count", 0) + 1;
        k["max_healthy_after_heal_s"] =
            std::max(k.value("max_healthy_after_heal_s", 0.0), f.healthyAfter - f.healed);
        breaches += f.breaches.size();
    }
    double longestGap = 0;  // between two replies of one pair, whatever its length
    auto w = windows(s, logs, t0, t1, longestGap);
    report["longest_gap_between_replies_s"] = longestGap;
    double longest = 0;
    for (const auto& x : w) {
        longest = std::max(longest, x["seconds"].get<double>());
        breaches += x["breach"].get<bool>();
        std::string kind = x["during"].get<std::string>();
        kind = kind.substr(0, kind.find(' '));
        auto& k = report["by_kind"][kind];
        if (k.is_null()) k = json::object();
        k["longest_window_s"] =
            std::max(k.value("longest_window_s", 0.0), x["seconds"].get<double>());
    }
    report["windows_over_1s"] = w;
    report["longest_window_s"] = longest;
    report["breaches"] = breaches;
    report["faults_injected"] = s.faults.size();
    lab::PlanLab::down(kLab);
    std::ofstream(argv[4]) << report.dump(2) << "\n";
    std::cout << s.faults.size() << " faults in " << (t1 - t0) << " s, longest window " << longest
              << " s, " << breaches << " breaches -> " << argv[4] << "\n";
    return breaches == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
    try {
        return benchMain(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "chaos_soak: " << e.what() << "\n";
    } catch (...) {
        std::cerr << "chaos_soak: unknown exception\n";
    }
    return 70;
}
