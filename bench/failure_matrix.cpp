// The failure matrix: the same events and the same traffic on the lab in each attachment
// mode, in one run. Events: a NIC port, a leaf, a spine, a leaf-spine link goes down, and
// each comes back. Traffic: 16 UDP flows per pair (a packet every 2 ms each), toward the
// failed attachment (srv1-nic1, from a NIC on the same rail and from one on another rail,
// whose path crosses the spines) and away from it. Figures per (mode, event, direction):
// the longest silence of each flow (p50, p95), flows not recovered (still silent at the
// end, 10 s or more after the event), packets lost; and the same traffic with no event,
// as the baseline. Writes bench/results/failure_matrix.json, a .dat and a PNG (gnuplot).
//
// usage: failure_matrix TWINRAIL_LAB HOSTROUTED PATHQD OUT.json [MODES] [PLANESTEER] [BEFORE.json]
//   MODES: comma-separated of bond, routed, evpn-mh (each as the planner ships it: bonded
//          NICs with planesteer), bond-alone, evpn-mh-alone (without it); default the first
//          three. BEFORE.json: an older result drawn beside this one in the heat map.
//        failure_matrix --plot OUT.json [BEFORE.json]   (draws the charts again)
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "twinrail/lab/lab_status.h"
#include "twinrail/lab/measure.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/shell.h"

namespace lab = twinrail::lab;
namespace plan = twinrail::plan;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr const char* kLab = "fmx";
constexpr int kSeconds = 14;  // the event at 2 s: 12 s after it

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(std::lround(p * static_cast<double>(v.size() - 1)))];
}

struct Event {
    std::string name;    // "nic-port-down", ...
    std::string target;  // what fails
    bool restore;
};

// The directions of the matrix, by flow pair: toward the failed attachment (srv1-nic1)
// from the same rail (through its leaves only) and from another rail (across the
// spines), and away from it (both pairs).
const char* directionOf(const std::string& pair) {
    if (pair == "srv2-nic1 -> srv1-nic1") return "toward-same-rail";
    if (pair == "srv1-nic2 -> srv1-nic1") return "toward-other-rail";
    return "away";
}
constexpr const char* kDirections[] = {"toward-same-rail", "toward-other-rail", "away"};

// One measurement, summarised per direction.
json summarise(const json& reports) {
    json out;
    for (const char* dir : kDirections) {
        std::vector<double> gaps;
        int notRecovered = 0, flows = 0;
        uint64_t lost = 0;
        for (const auto& r : reports) {
            if (std::string(directionOf(r.value("pair", ""))) != dir) continue;
            if (r.contains("error")) {
                out[dir]["error"] = r["error"];
                continue;
            }
            for (const auto& g : r["gaps_ms"]) gaps.push_back(g.get<double>());
            // Flows that sent nothing the receiver saw are silent for the whole run.
            int seen = r["flows"].get<int>();
            for (int i = seen; i < 16; ++i) gaps.push_back(kSeconds * 1000.0);
            notRecovered += r["flows_not_recovered"].get<int>() + (16 - seen);
            flows += 16;
            lost += r["lost"].get<uint64_t>();
        }
        out[dir] = {{"flows", flows},
                    {"silence_p50_ms", percentile(gaps, 0.5)},
                    {"silence_p95_ms", percentile(gaps, 0.95)},
                    {"silence_max_ms", percentile(gaps, 1.0)},
                    {"flows_not_recovered", notRecovered},
                    {"packets_lost", lost}};
    }
    return out;
}

json detourGoodput(const lab::LabBinaries& bins);

// planesteer's probes per second on each NIC over the mode's run, from the counters it
// logs every minute (echo_sent, arp_sent: cumulative), and their sum per server.
json probeCost(const plan::Plan& p) {
    json out{{"per_nic", json::object()}, {"per_server", json::object()}};
    for (const auto& srv : p.servers) {
        double server = 0;
        for (const auto& nic : srv.nics) {
            std::string node = lab::PlanLab::nicNode(srv, nic);
            std::ifstream in(lab::PlanLab::stateDir(kLab) + "/" + node + "/planesteer.log");
            std::vector<double> sent;
            for (std::string line; std::getline(in, line);) {
                auto e = line.find("echo_sent="), a = line.find("arp_sent=");
                if (e == std::string::npos || a == std::string::npos) continue;
                sent.push_back(std::stod(line.substr(e + 10)) + std::stod(line.substr(a + 9)));
            }
            if (sent.size() < 2) continue;
            double rate =
                (sent.back() - sent.front()) / (60.0 * static_cast<double>(sent.size() - 1));
            out["per_nic"][node] = rate;
            server += rate;
        }
        out["per_server"][srv.name] = server;
    }
    return out;
}

json runMode(const std::string& mode, const lab::LabBinaries& bins, const std::string& steer) {
    auto r = lab::defaultLabRequest();
    r.attach = mode == "routed"                               ? plan::Attach::Routed
               : mode == "evpn-mh" || mode == "evpn-mh-alone" ? plan::Attach::EvpnMh
                                                              : plan::Attach::Bond;
    auto p = std::get<plan::Plan>(plan::buildPlan(r));
    lab::PlanLab l(kLab, p, bins);
    l.up();
    if (mode.find("-alone") == std::string::npos) lab::startPlaneSteers(kLab, p, steer);
    std::this_thread::sleep_for(5s);  // pathqd's first levels, probes settled
    // srv1-nic1 is the failed attachment: port1 on p1-leaf1, whose uplink swp3 goes to
    // p1-spine1.
    const std::vector<lab::FlowPair> pairs{{"srv2-nic1", "srv1-nic1"},
                                           {"srv1-nic2", "srv1-nic1"},
                                           {"srv1-nic1", "srv2-nic1"},
                                           {"srv1-nic1", "srv1-nic2"}};
    const std::vector<Event> events{{"nic-port", "srv1-nic1:port1", false},
                                    {"nic-port", "srv1-nic1:port1", true},
                                    {"leaf", "p1-leaf1", false},
                                    {"leaf", "p1-leaf1", true},
                                    {"spine", "p1-spine1", false},
                                    {"spine", "p1-spine1", true},
                                    {"leaf-spine-link", "p1-leaf1:swp3", false},
                                    {"leaf-spine-link", "p1-leaf1:swp3", true}};
    json out{{"mode", mode}, {"events", json::array()}};
    auto baseline = lab::measureDuring(
        kLab, bins, pairs, [] {}, kSeconds);
    out["baseline"] = summarise(baseline);
    for (const auto& e : events) {
        std::function<void()> act =
            e.restore
                ? std::function<void()>([&bins, &e] { lab::restoreNode(kLab, bins, e.target); })
                : std::function<void()>([&e] { lab::failNode(kLab, e.target); });
        auto reports = lab::measureDuring(kLab, bins, pairs, act, kSeconds);
        json row = summarise(reports);
        row["event"] = e.name + (e.restore ? " restored" : " down");
        row["target"] = e.target;
        std::cout << mode << " " << row["event"].get<std::string>() << ":";
        for (const char* d : kDirections) {
            std::cout << " " << d << " p95 " << row[d]["silence_p95_ms"].get<double>()
                      << " ms, not recovered " << row[d]["flows_not_recovered"] << ";";
        }
        std::cout << std::endl;
        out["events"].push_back(row);
        if (e.restore) {
            lab::waitUntil([] { return lab::labStatus(kLab).value("healthy", false); }, 90s, 1s);
            std::this_thread::sleep_for(3s);
        }
    }
    if (r.attach == plan::Attach::EvpnMh) out["detour_goodput"] = detourGoodput(bins);
    if (mode.find("-alone") == std::string::npos && r.attach != plan::Attach::Routed)
        out["probes_per_second"] = probeCost(p);
    lab::PlanLab::down(kLab);
    return out;
}

// evpn-mh only: with srv1-nic1's plane-1 port down, TCP goodput from srv1-nic2 to it for 3 s,
// sent into each plane (a tc pin on the sender's bond): plane 2 delivers directly, plane 1
// through p1-leaf1's detour over the AUX link to p2-leaf1.
json detourGoodput(const lab::LabBinaries& bins) {
    json out;
    lab::failNode(kLab, "srv1-nic1:port1");
    std::this_thread::sleep_for(3s);
    lab::inNodeRun(kLab, "srv1-nic1", {"iperf3", "-s", "-D", "-p", "5202"});
    std::this_thread::sleep_for(500ms);
    for (const char* port : {"port1", "port2"}) {
        lab::inNodeRun(kLab, "srv1-nic2",
                       {"tc",     "filter", "add",    "dev",      "bond0",
                        "egress", "pref",   "5",      "protocol", "ip",
                        "u32",    "match",  "ip",     "dst",      "10.128.0.2/32",
                        "action", "mirred", "egress", "redirect", "dev",
                        port});
        auto r = lab::inNodeRun(
            kLab, "srv1-nic2",
            {"iperf3", "-J", "-c", "10.128.0.2", "-B", "10.128.1.2", "-p", "5202", "-t", "3"});
        lab::inNodeRun(kLab, "srv1-nic2",
                       {"tc", "filter", "del", "dev", "bond0", "egress", "pref", "5"});
        auto j = json::parse(r.out, nullptr, false);
        double bps = j.is_discarded() ? 0 : j["end"]["sum_received"].value("bits_per_second", 0.0);
        out[std::string("plane") + port[4]] = {
            {"mbps", bps / 1e6},
            {"path", port[4] == '1' ? "p1-leaf1 -> AUX -> p2-leaf1" : "p2-leaf1"}};
        std::cout << "evpn-mh, port1 down, into plane " << port[4] << ": " << bps / 1e6 << " Mbit/s"
                  << std::endl;
    }
    lab::restoreNode(kLab, bins, "srv1-nic1:port1");
    return out;
}

// Whether `program` is an executable in PATH (what `command -v` answers, without a shell).
bool onPath(const std::string& program) {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
    for (std::string dir; std::getline(dirs, dir, ':');)
        if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    return false;
}

// A gnuplot chart, two panels over the same events: each mode's p95 silence toward and
// away (log scale), and the flows not recovered (16 per pair: 16 toward each, 32 away).
bool plot(const json& modes, const std::string& base) {
    std::ofstream dat(base + ".dat");  // tab-separated: labels keep their spaces
    dat << "event";
    for (const char* what : {"p95", "not recovered"}) {
        for (const auto& m : modes) {
            for (const char* d : kDirections)
                dat << "\t" << m["mode"].get<std::string>() << " " << d << " " << what;
        }
    }
    dat << "\n";
    const auto& first = modes[0]["events"];
    for (size_t i = 0; i < first.size(); ++i) {
        dat << first[i]["event"].get<std::string>();
        for (const auto& m : modes) {
            for (const char* d : kDirections)
                dat << "\t" << std::max(1.0, m["events"][i][d]["silence_p95_ms"].get<double>());
        }
        for (const auto& m : modes) {
            for (const char* d : kDirections)
                dat << "\t" << m["events"][i][d]["flows_not_recovered"].get<int>();
        }
        dat << "\n";
    }
    dat.close();
    const size_t n = std::size(kDirections) * modes.size();
    std::ofstream gp(base + ".gp");
    gp << "set terminal pngcairo size 1400,900 font ',10'\nset output '" << base << ".png'\n"
       << "set datafile separator '\\t'\nset style data histograms\n"
          "set style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
          "set key outside right\nset grid ytics\nset xtics rotate by -20\n"
          "set linetype 9 lc rgb '#8c564b'\nset linetype 10 lc rgb '#7f7f7f'\n"
          "set linetype 11 lc rgb '#bcbd22'\nset linetype 12 lc rgb '#17becf'\n"
          "set multiplot layout 2,1\n"
       << "set title \"Failure matrix: p95 over flows of the longest silence (ms, log scale; "
          "14000 = never recovered)\"\nset logscale y\nset yrange [1:20000]\nset ylabel 'ms'\n"
       << "plot for [c=2:" << 1 + n << "] '" << base
       << ".dat' using c:xtic(1) title columnheader(c)\n"
       << "set title \"Flows not recovered within 12 s of the event (16 per pair: 16 toward each, "
          "32 away)\"\n"
          "unset logscale y\nset yrange [0:32]\nset ylabel 'flows'\n"
       << "plot for [c=" << 2 + n << ":" << 1 + 2 * n << "] '" << base
       << ".dat' using c:xtic(1) title columnheader(c)\nunset multiplot\n";
    gp.close();
    if (!onPath("gnuplot")) {
        std::cerr << "gnuplot not installed: " << base << ".png not drawn\n";
        return false;
    }
    auto r = lab::run({"gnuplot", base + ".gp"});
    if (r.rc != 0) {
        std::cerr << "gnuplot: " << r.err << "\n";
        return false;
    }
    std::cout << "wrote " << base << ".png\n";
    return true;
}

// One heat map a person reads at a glance: a row per event and direction, a column per
// mode (an older result's first, marked "before"), each cell the p95 silence in ms and the
// flows never recovered; green at most 20 ms (a hitless restore), yellow at most 250 ms
// (issue 24's bound for a failure), red beyond or with a flow lost.
bool heatmap(const json& modes, const json& before, const std::string& base) {
    std::vector<std::pair<std::string, const json*>> columns;
    for (const auto& m : before)
        columns.emplace_back("before\\n" + m["mode"].get<std::string>(), &m);
    for (const auto& m : modes) columns.emplace_back(m["mode"].get<std::string>(), &m);
    std::ofstream dat(base + "_heat.dat");
    std::ostringstream ytics;
    const auto& events = modes[0]["events"];
    int row = 0;
    for (size_t e = 0; e <= events.size(); ++e) {
        for (const char* d : kDirections) {
            std::string name = e == 0 ? "baseline" : events[e - 1]["event"].get<std::string>();
            ytics << (row ? ", " : "") << "\"" << name << ", " << d << "\" " << row;
            for (size_t c = 0; c < columns.size(); ++c) {
                const json& m = *columns[c].second;
                const json& cell = e == 0 ? m["baseline"][d] : m["events"][e - 1][d];
                double p95 = cell.value("silence_p95_ms", 0.0);
                int lost = cell.value("flows_not_recovered", 0);
                double colour = lost > 0 ? 4.3 : std::log10(std::max(1.0, p95));
                std::ostringstream label;
                label << std::lround(p95)
                      << (lost > 0 ? ", " + std::to_string(lost) + " dead" : "");
                dat << c << "\t" << row << "\t" << colour << "\t" << label.str() << "\n";
            }
            ++row;
        }
    }
    dat.close();
    std::ostringstream xtics;
    for (size_t c = 0; c < columns.size(); ++c)
        xtics << (c ? ", " : "") << "\"" << columns[c].first << "\" " << c;
    std::ofstream gp(base + "_heat.gp");
    gp << "set terminal pngcairo size " << 420 + 130 * columns.size() << "," << 120 + 26 * row
       << " font ',9'\nset output '" << base << "_heat.png'\n"
       << "set datafile separator '\\t'\nset title \"Failure matrix: p95 of each flow's longest "
          "silence, ms (and flows never recovered)\\ngreen <= 20 ms, yellow <= 250 ms, red beyond "
          "or a flow lost\"\nunset key\nunset colorbox\nset xtics scale 0 ("
       << xtics.str() << ")\n"
       << "set bmargin 4\nset ytics scale 0 (" << ytics.str() << ")\n"
       << "set xrange [-0.5:" << static_cast<double>(columns.size()) - 0.5 << "]\nset yrange ["
       << row - 0.5 << ":-0.5]\nset cbrange [0:4.3]\n"
       << "set palette defined (0 '#1a9850', 1.3 '#a6d96a', 1.31 '#fee08b', 2.4 '#fdae61', "
          "2.41 '#f46d43', 4.3 '#a50026')\n"
       << "plot '" << base << "_heat.dat' using 1:2:3 with image, '' using 1:2:4 with labels\n";
    gp.close();
    if (!onPath("gnuplot")) return false;
    auto r = lab::run({"gnuplot", base + "_heat.gp"});
    if (r.rc != 0) {
        std::cerr << "gnuplot: " << r.err << "\n";
        return false;
    }
    std::cout << "wrote " << base << "_heat.png\n";
    return true;
}

json readResult(const std::string& path) {
    std::ifstream in(path);
    auto j = json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.contains("modes"))
        throw std::runtime_error(path + ": not a failure matrix result");
    return j;
}

}  // namespace

static int benchMain(int argc, char** argv) {
    if ((argc == 3 || argc == 4) && std::string(argv[1]) == "--plot") {  // redraw a result
        json j = readResult(argv[2]);
        json before = argc == 4 ? readResult(argv[3])["modes"] : json::array();
        std::string path = argv[2];
        std::string base = path.substr(0, path.rfind(".json"));
        bool bars = plot(j["modes"], base);
        return heatmap(j["modes"], before, base) && bars ? 0 : 70;
    }
    if (argc < 5) {
        std::cerr << "usage: failure_matrix TWINRAIL_LAB HOSTROUTED PATHQD OUT.json [MODES] "
                     "[PLANESTEER] [BEFORE.json]\n       failure_matrix --plot OUT.json "
                     "[BEFORE.json]\n";
        return 64;
    }
    lab::LabBinaries bins{argv[2], argv[3], argv[1], "twinrail"};
    std::string modesArg = argc > 5 ? argv[5] : "bond,routed,evpn-mh";
    std::string steer = argc > 6 ? argv[6] : "planesteer";
    json before = argc > 7 ? readResult(argv[7])["modes"] : json::array();
    json modes = json::array();
    std::stringstream in(modesArg);
    for (std::string m; std::getline(in, m, ',');) modes.push_back(runMode(m, bins, steer));
    json out{{"seconds_per_measurement", kSeconds},
             {"flows_per_pair", 16},
             {"packet_interval_ms", 2},
             {"modes", modes}};
    std::string path = argv[4];
    std::ofstream(path) << out.dump(2) << "\n";
    std::string base = path.substr(0, path.rfind(".json"));
    std::cout << "wrote " << path << "\n";
    bool bars = plot(modes, base);
    return heatmap(modes, before, base) && bars ? 0 : 70;
}

int main(int argc, char** argv) {
    try {
        return benchMain(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "failure_matrix: " << e.what() << "\n";
    } catch (...) {
        std::cerr << "failure_matrix: unknown exception\n";
    }
    return 70;
}
