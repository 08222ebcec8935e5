// Hash polarisation, shown (issue 22 item 4; the seed's section 2.2: a dual-plane fabric
// "greatly reduces the probability of hash polarisation"). The plan: 4 servers x 2 GPUs,
// leaves with 4 downlinks and 4 uplinks, 2 spines per plane, so 2 links per leaf-spine pair:
// a flow is hashed once at the leaf (4 uplinks) and again at the spine (2 links to the
// destination leaf). Every switch hashes L4 (fib_multipath_hash_policy=1) with its own
// fib_multipath_hash_seed, and a tc program on every switch port forgets the hash a packet
// arrives with (bpf/clear_hash.c), so each switch hashes the headers as an ASIC does.
//
// Traffic: every NIC behind p*-leaf1 sends FLOWS UDP flows of equal rate (udp_seq_probe,
// each flow its own source port) to a NIC behind p*-leaf2; with equal-rate flows, a link's
// tx_bytes count the flows hashed onto it. Load = max/mean over p*-leaf1's uplinks and over
// the spines' links down to p*-leaf2, for:
//   seeds   equal: the same seed on every switch; distinct: a different seed per switch;
//   planes  dual: the NICs' bonds spread flows over both planes; single plane 1 (2): the
//           NICs' ports in the other plane down, every flow in one plane (the same NICs,
//           the same flows).
// A reference: the same max/mean when each flow picks a link uniformly at random.
//
// usage: polarisation_bench TWINRAIL_LAB HOSTROUTED PATHQD PROBE CLEAR_HASH.o OUT.json [REPS]
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "lb_util.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/process.h"
#include "twinrail/lab/shell.h"

namespace lab = twinrail::lab;
namespace plan = twinrail::plan;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr const char* kLab = "pol";
constexpr int kPort = 9100;
constexpr int kFlowsPerNic = 32, kPps = 100, kPayload = 200;
constexpr double kSeconds = 6;

double median(std::vector<double> v) {
    if (v.empty()) return -1;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double maxOverMean(const std::vector<double>& v) {
    if (v.empty()) return 0;
    double sum = 0, most = 0;
    for (double x : v) {
        sum += x;
        most = std::max(most, x);
    }
    return sum > 0 ? most / (sum / static_cast<double>(v.size())) : 0;
}

// The median max/mean of `flows` equal flows, each on one of `links` links picked uniformly
// at random: what a hash does at best, for comparison (a fixed seed: the same every run).
double randomReference(int flows, int links) {
    std::mt19937 rng(22);
    std::uniform_int_distribution<int> pick(0, links - 1);
    std::vector<double> trials;
    for (int t = 0; t < 20001; ++t) {
        std::vector<double> load(static_cast<size_t>(links), 0);
        for (int f = 0; f < flows; ++f) load[static_cast<size_t>(pick(rng))] += 1;
        trials.push_back(maxOverMean(load));
    }
    return median(trials);
}

struct Link {
    std::string node, port, peer;
    int plane = 0;
    bool uplink = false;  // p*-leaf1's uplink; else a spine's link down to p*-leaf2
};

struct Bench {
    plan::Plan p;
    lab::LabBinaries bins;
    std::string probe, clearHash;
    std::vector<std::string> senders, receivers;  // NIC nodes behind leaf1 / leaf2 (rail 1/2)
    std::map<std::string, std::string> address;
    std::vector<Link> links;
    std::vector<std::string> switches;
    std::set<int> portsUp = {1, 2};  // the planes the NICs' ports are up in

    void setUp() {
        for (const auto& srv : p.servers) {
            for (const auto& nic : srv.nics) {
                std::string node = lab::PlanLab::nicNode(srv, nic);
                address[node] = nic.address;
                (nic.rail == 1 ? senders : receivers).push_back(node);
            }
        }
        for (const auto& sw : p.switches) {
            switches.push_back(sw.name);
            std::string leaf1 = "p" + std::to_string(sw.plane) + "-leaf1";
            std::string leaf2 = "p" + std::to_string(sw.plane) + "-leaf2";
            for (const auto& port : sw.ports) {
                if (sw.name == leaf1 && port.role == plan::PortRole::Uplink)
                    links.push_back({sw.name, port.name, port.peer, sw.plane, true});
                if (sw.spine && port.peer == leaf2)
                    links.push_back({sw.name, port.name, port.peer, sw.plane, false});
                // Every port: the hash is the switch's own, from the headers.
                lab::inNodeRun(kLab, sw.name, {"tc", "qdisc", "add", "dev", port.name, "clsact"});
                auto r =
                    lab::inNodeRun(kLab, sw.name,
                                   {"tc", "filter", "replace", "dev", port.name, "ingress", "pref",
                                    "7", "bpf", "da", "obj", clearHash, "sec", "classifier"});
                if (r.rc != 0)
                    throw std::runtime_error(sw.name + " " + port.name + ": tc bpf: " + r.out);
            }
            lab::inNodeRun(kLab, sw.name,
                           {"sysctl", "-qw", "net.ipv4.fib_multipath_hash_policy=1",
                            "net.ipv6.fib_multipath_hash_policy=1"});
        }
        // Plain ECMP: pathqd's weights would move the hash ranges' boundaries (and did, in
        // the single plane, where every flow shares plane 1), which is not what is measured.
        for (const auto& sw : p.switches) {
            lab::stopService(kLab, sw.name, lab::Service::Pathqd, SIGTERM);
            twinrail::bench::detachPathqdRouteMaps(kLab, sw);
        }
        std::this_thread::sleep_for(5s);  // the soft clears' routes, equal weights
    }

    // Equal: one seed on every switch; distinct: one per switch. New values every rep, so
    // the reps are different hash functions, not the same one again.
    // The NICs' ports up in `planes` only (failed elsewhere; their bonds move every flow to
    // the port still up), as a NIC cabled to those planes alone.
    void nicPortsUp(const std::set<int>& planes) {
        if (planes == portsUp) return;
        for (const auto& srv : p.servers) {
            for (const auto& nic : srv.nics) {
                for (const auto& port : nic.ports) {
                    std::string target = lab::PlanLab::nicNode(srv, nic) + ":" + port.name;
                    bool up = planes.count(port.plane) > 0;
                    if (up == (portsUp.count(port.plane) > 0)) continue;
                    if (up) {
                        lab::restoreNode(kLab, bins, target);
                    } else {
                        lab::failNode(kLab, target);
                    }
                }
            }
        }
        portsUp = planes;
        std::this_thread::sleep_for(3s);  // bond agents moved, hosts announced again
    }

    json setSeeds(bool equal, int rep) const {
        std::mt19937 rng(static_cast<unsigned>(1000 + rep));
        const auto common = static_cast<uint32_t>(rng() | 1);
        json seeds = json::object();
        for (const auto& sw : switches) {
            uint32_t seed = equal ? common : static_cast<uint32_t>(rng() | 1);
            lab::inNodeRun(
                kLab, sw,
                {"sysctl", "-qw", "net.ipv4.fib_multipath_hash_seed=" + std::to_string(seed)});
            seeds[sw] = seed;
        }
        return seeds;
    }

    std::vector<double> txBytes() const {
        std::vector<double> out;
        for (const auto& l : links) {
            auto r = lab::inNodeRun(kLab, l.node,
                                    {"cat", "/sys/class/net/" + l.port + "/statistics/tx_bytes"});
            out.push_back(r.rc == 0 ? std::stod(r.out) : 0);
        }
        return out;
    }

    // One run of every flow at once; per link the bytes sent during it.
    json run(const std::set<int>& planes) const {
        std::vector<lab::ChildProcess> recv, send;
        std::vector<std::string> recvFiles, sendFiles;
        for (size_t i = 0; i < receivers.size(); ++i) {
            std::string file = "/tmp/pol-recv" + std::to_string(i) + ".out";
            std::remove(file.c_str());
            recvFiles.push_back(file);
            recv.emplace_back(lab::inNamespace(lab::PlanLab::nsPrefix(kLab) + receivers[i],
                                               {probe, "recv", std::to_string(kPort), "30", "1"}),
                              file);
        }
        std::this_thread::sleep_for(300ms);  // receivers bound
        auto before = txBytes();
        for (size_t i = 0; i < senders.size(); ++i) {
            std::string file = "/tmp/pol-send" + std::to_string(i) + ".out";
            std::remove(file.c_str());
            sendFiles.push_back(file);
            std::string dst = address.at(receivers[(i + 1) % receivers.size()]);
            send.emplace_back(
                lab::inNamespace(
                    lab::PlanLab::nsPrefix(kLab) + senders[i],
                    {probe, "send", dst, std::to_string(kPort), std::to_string(kFlowsPerNic),
                     std::to_string(kPps), std::to_string(kSeconds), std::to_string(kPayload)}),
                file);
        }
        for (auto& s : send) s.wait(30s);
        for (auto& r : recv) r.wait(5s);
        auto after = txBytes();
        std::vector<double> up, down;
        json perLink = json::array();
        std::map<std::string, std::vector<double>> perSpine;
        for (size_t i = 0; i < links.size(); ++i) {
            const Link& l = links[i];
            if (!planes.count(l.plane)) continue;
            double b = after[i] - before[i];
            (l.uplink ? up : down).push_back(b);
            if (!l.uplink) perSpine[l.node].push_back(b);
            perLink.push_back({{"node", l.node}, {"port", l.port}, {"peer", l.peer}, {"bytes", b}});
        }
        // Within one spine (its links to the same leaf): the most uneven spine, and the spines
        // whose every flow took one link (the other under 5% of the spine's bytes).
        double withinSpine = 0;
        int polarised = 0;
        for (const auto& [spine, b] : perSpine) {
            withinSpine = std::max(withinSpine, maxOverMean(b));
            double sum = 0, least = b.empty() ? 0 : b[0];
            for (double x : b) {
                sum += x;
                least = std::min(least, x);
            }
            polarised += sum > 0 && least < 0.05 * sum;
        }
        uint64_t received = 0, flows = 0;
        for (const auto& f : recvFiles) {
            json r = twinrail::bench::lastJsonLine(f);
            received += r.value("received", uint64_t{0});
            flows += r.value("flows", uint64_t{0});
        }
        // The next hops' order decides which hash ranges meet at a spine (hash-threshold).
        json routes = json::object();
        for (int plane : planes) {
            for (const char* sw : {"-leaf1", "-spine1", "-spine2"}) {
                std::string node = "p" + std::to_string(plane) + sw;
                routes[node] =
                    lab::inNodeRun(kLab, node, {"ip", "route", "show", address.at(receivers[1])})
                        .out;
            }
        }
        return {{"uplinks_max_over_mean", maxOverMean(up)},
                {"routes_to_second_receiver", routes},
                {"spine_down_max_over_mean", maxOverMean(down)},
                {"within_spine_max_over_mean", withinSpine},
                {"polarised_spines", polarised},
                {"spines", perSpine.size()},
                {"flows_received", flows},
                {"datagrams_received", received},
                {"links", perLink}};
    }
};

void plot(const json& out, const std::string& base) {
    std::ofstream dat(base + ".dat");
    dat << "# case uplinks spine_down within_spine random_reference (median max/mean)\n";
    for (const auto& c : out["cases"]) {
        std::string planes = c["planes"];  // "single plane 1" -> "plane 1", short tics
        if (planes.rfind("single ", 0) == 0) planes = planes.substr(7);
        dat << "\"" << planes << ", " << c["seeds"].get<std::string>() << "\" "
            << c["median_uplinks_max_over_mean"].get<double>() << " "
            << c["median_spine_down_max_over_mean"].get<double>() << " "
            << c["median_within_spine_max_over_mean"].get<double>() << " "
            << c["random_reference_max_over_mean"].get<double>() << "\n";
    }
    dat.close();  // gnuplot reads it below
    std::ofstream gp(base + ".gp");
    gp << "set terminal pngcairo size 1100,460\nset output '" << base << ".png'\n"
       << "set style data histograms\nset style histogram clustered gap 1\n"
       << "set style fill solid 0.8 border -1\nset yrange [0:3]\nset grid y\n"
       << "set key top right horizontal\nset ylabel 'max / mean link load'\n"
       << "set title 'Hash polarisation: " << kFlowsPerNic * 4
       << " equal UDP flows, 2 links per leaf-spine pair (median of " << out["reps"].get<int>()
       << ")'\n"
       << "plot '" << base << ".dat' using 2:xtic(1) title 'leaf1 uplinks', "
       << "'' using 3 title 'spine links to leaf2', '' using 4 title 'within one spine', "
       << "'' using 5 title 'uniform random (reference)'\n";
    gp.close();
    lab::run({"gnuplot", base + ".gp"});
}

}  // namespace

static int benchMain(int argc, char** argv) {
    if (argc < 7) {
        std::cerr << "usage: polarisation_bench TWINRAIL_LAB HOSTROUTED PATHQD PROBE "
                     "CLEAR_HASH.o OUT.json [REPS]\n";
        return 64;
    }
    const int reps = argc > 7 ? std::stoi(argv[7]) : 6;
    plan::Request r = lab::defaultLabRequest();
    r.gpus = 8;
    r.leafModel = {"lab-8x200G", 8, 200, {1}};
    r.spinesPerPlane = 2;  // 4 uplinks over 2 spines: 2 links per leaf-spine pair
    Bench b;
    b.p = std::get<plan::Plan>(plan::buildPlan(r));
    b.probe = argv[4];
    b.clearHash = argv[5];
    b.bins = {argv[2], argv[3], argv[1], "twinrail"};
    lab::PlanLab l(kLab, b.p, b.bins);
    auto t0 = std::chrono::steady_clock::now();
    l.up();
    b.setUp();
    json out{{"reps", reps},
             {"flows", kFlowsPerNic * static_cast<int>(b.senders.size())},
             {"flows_per_nic", kFlowsPerNic},
             {"pps_per_flow", kPps},
             {"seconds", kSeconds},
             {"links_per_leaf_spine", b.p.sizing.linksPerLeafSpine},
             {"spines_per_plane", b.p.sizing.spinesPerPlane},
             {"cases", json::array()}};
    const int flows = kFlowsPerNic * static_cast<int>(b.senders.size());
    struct Case {
        const char* name;
        std::set<int> planes;  // the planes the NICs' ports are up in
    };
    const Case kCases[] = {{"dual", {1, 2}}, {"single plane 1", {1}}, {"single plane 2", {2}}};
    for (const auto& c : kCases) {
        b.nicPortsUp(c.planes);
        json cases[2] = {json::array(), json::array()};
        for (int rep = 0; rep < reps; ++rep) {
            for (int equal : {1, 0}) {  // interleaved: drift hits both alike
                json seeds = b.setSeeds(equal == 1, rep);
                json s = b.run(c.planes);
                s["seeds"] = seeds;
                std::cout << c.name << (equal ? " equal" : " distinct") << " rep " << rep
                          << ": uplinks " << s["uplinks_max_over_mean"] << ", spine down "
                          << s["spine_down_max_over_mean"] << ", polarised spines "
                          << s["polarised_spines"] << "/" << s["spines"] << std::endl;
                cases[equal].push_back(s);
            }
        }
        const int links = 4 * static_cast<int>(c.planes.size());
        for (int equal : {1, 0}) {
            auto med = [&cases, equal](const char* key) {
                std::vector<double> v;
                for (const auto& s : cases[equal]) v.push_back(s[key].get<double>());
                return median(v);
            };
            int polarised = 0, spines = 0;
            for (const auto& s : cases[equal]) {
                polarised += s["polarised_spines"].get<int>();
                spines += s["spines"].get<int>();
            }
            out["cases"].push_back(
                {{"planes", c.name},
                 {"seeds", equal ? "equal" : "distinct"},
                 {"median_uplinks_max_over_mean", med("uplinks_max_over_mean")},
                 {"median_spine_down_max_over_mean", med("spine_down_max_over_mean")},
                 {"median_within_spine_max_over_mean", med("within_spine_max_over_mean")},
                 {"polarised_spine_share",
                  spines > 0 ? static_cast<double>(polarised) / spines : 0.0},
                 {"random_reference_max_over_mean", randomReference(flows, links)},
                 {"samples", cases[equal]}});
        }
    }
    out["runtime_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    lab::PlanLab::down(kLab);
    std::string path = argv[6];
    std::ofstream(path) << out.dump(2) << "\n";
    plot(out, path.substr(0, path.rfind('.')));
    return 0;
}

int main(int argc, char** argv) {
    return twinrail::bench::labMain("polarisation_bench", kLab,
                                    [argc, argv] { return benchMain(argc, argv); });
}
