// pathqd benchmark on the dual-spine fabric (real FRR, real kernel, every fabric link
// shaped to 100 Mbit/s). Writes JSON.
//  reaction: s1 -> l2 is cut to 20 Mbit/s under load; time until l1's kernel gives s1
//            less than 40% of h2's subnet (from a settled 50:50). Baseline in the same run: FRR's
//            own propagation of one hand-made route-map edit + soft clear on s1 (the floor for any
//            BGP-carried signal).
//  goodput:  128 TCP (cubic) flows of 1 MiB from h1 to h2 with s1 -> l2 degraded; job
//            goodput = all bytes / time until the last flow finished (a collective waits
//            for its slowest flow). Static ECMP and pathqd WCMP in the same run, against
//            the max-flow bound. One warm-up job per mode is not counted.
//  cpu:      pathqd's CPU with 64 ports sampled every 100 ms (a peer pathqd answers the
//            probes), against the raw netlink reads it needs alone.
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "twinrail/lab/fabric.h"
#include "twinrail/lab/process.h"
#include "twinrail/netlink/link_stats.h"

namespace lab = twinrail::lab;
namespace nl = twinrail::netlink;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

constexpr double kLinkMbit = 100, kDegradedMbit = 20;
constexpr const char* kH2Net = "10.2.2.0/24";

// An even split, within one level of hysteresis (31 of 32 may stay).
bool even(double share) {
    return std::abs(share - 50.0) <= 2.0;
}

double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return -1;
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(std::min<double>(static_cast<double>(v.size()) - 1,
                                                  p * static_cast<double>(v.size() - 1) + 0.5))];
}

// Runs `fn` on a thread that has joined namespace `ns` (setns affects one thread only).
template <typename Fn>
void inNamespace(const std::string& ns, Fn fn) {
    std::thread t([&ns, &fn] {
        int fd = open(("/var/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) throw std::runtime_error("setns " + ns);
        close(fd);
        fn();
    });
    t.join();
}

// Share (percent) of the next hop through `port` in the kernel's weights for `prefix`.
double kernelShare(const std::string& prefix, const std::string& port) {
    int ifindex = static_cast<int>(if_nametoindex(port.c_str()));
    for (const auto& r : nl::dumpRouteWeights(AF_INET, 186)) {
        if (r.dst.str() != prefix) continue;
        double total = 0, mine = 0;
        for (const auto& nh : r.nexthops) {
            total += nh.weight;
            if (nh.ifindex == ifindex) mine += nh.weight;
        }
        return total > 0 ? 100 * mine / total : -1;
    }
    return -1;
}

// ---- traffic: `sink PORT` in h2, `source IP PORT FLOWS BYTES` in h1 ----

int sink(int port) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(s, 1024) != 0) return 1;
    for (;;) {
        int c = accept(s, nullptr, nullptr);
        if (c < 0) continue;
        std::thread([c] {
            std::vector<char> buf(1 << 16);
            while (read(c, buf.data(), buf.size()) > 0) {
            }
            close(c);  // the sender's read() returns 0: every byte arrived
        }).detach();
    }
}

int source(const std::string& ip, int port, int flows, size_t bytes) {
    std::vector<int> fds, sports;
    for (int i = 0; i < flows; ++i) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        // cubic, Linux's stock default, whatever this machine's default is (bbr here):
        // with bbr, 128 flows through drop-tail shapers share so unevenly that the
        // slowest flow, not the path split, decides the job time.
        const char* cc = getenv("PATHQD_BENCH_CC") != nullptr ? getenv("PATHQD_BENCH_CC") : "cubic";
        setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, static_cast<socklen_t>(strlen(cc)));
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<uint16_t>(port));
        inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
        if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return 1;
        sockaddr_in local{};
        socklen_t len = sizeof local;
        getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
        sports.push_back(ntohs(local.sin_port));
        fds.push_back(fd);
    }
    std::vector<double> done(fds.size());
    std::vector<std::thread> threads;
    auto t0 = Clock::now();
    for (size_t i = 0; i < fds.size(); ++i) {
        threads.emplace_back([&done, &fds, i, bytes, t0] {
            std::vector<char> buf(1 << 16, 'x');
            size_t left = bytes;
            while (left > 0) {
                ssize_t n = write(fds[i], buf.data(), std::min(left, buf.size()));
                if (n <= 0) {
                    done[i] = -1;  // counted as failed below
                    return;
                }
                left -= static_cast<size_t>(n);
            }
            shutdown(fds[i], SHUT_WR);
            char c;
            while (read(fds[i], &c, 1) > 0) {
            }
            done[i] = since(t0);
            close(fds[i]);
        });
    }
    for (auto& t : threads) t.join();
    int failed = static_cast<int>(std::count(done.begin(), done.end(), -1.0));
    nlohmann::json out{
        {"flows", flows},          {"failed", failed},
        {"bytes_per_flow", bytes}, {"completion_s", done},
        {"source_ports", sports},  {"job_s", *std::max_element(done.begin(), done.end())}};
    std::cout << out.dump() << "\n";
    return 0;
}

class Bench {
  public:
    Bench(std::string self, std::string pathqd)
        : self_(std::move(self)),
          pathqd_(std::move(pathqd)),
          fabric_(lab::uniquePrefix("pb")),
          dir_("/tmp/" + fabric_.prefix()) {}
    ~Bench() {
        daemons_.clear();
        sink_.stop();
        load_.stop();
        fabric_.teardown();
        std::filesystem::remove_all(dir_);
    }

    nlohmann::json run(int trials) {
        std::filesystem::create_directories(dir_);
        lab::buildDualSpineFabric(fabric_);
        for (const char* node : {"s1", "s2", "l1", "l2"}) {
            for (const char* port : {"swp1", "swp2"})
                lab::shapePort(fabric_, node, port, kLinkMbit);
        }
        sink_ = lab::ChildProcess({"ip", "netns", "exec", fabric_.ns("h2"), self_, "sink", "5300"},
                                  dir_ + "/sink.log");
        nlohmann::json out;
        if (only_ == "reaction") {  // with FRR's own propagation beside it, as in the full run
            out["reaction"]["baseline_frr_edit"] = baselineReaction(trials);
            startPathqd();
            out["reaction"]["pathqd"] = pathqdReaction(trials);
            out["reaction"]["ratio_p50_to_baseline"] =
                out["reaction"]["pathqd"]["p50_s"].get<double>() /
                out["reaction"]["baseline_frr_edit"]["p50_s"].get<double>();
            return out;
        }
        out["goodput"]["ecmp"] = goodputTrials("ecmp");
        if (only_ == "goodput") {
            startPathqd();
            out["goodput"]["pathqd"] = goodputTrials("pathqd");
            return out;
        }
        out["reaction"]["baseline_frr_edit"] = baselineReaction(trials);
        startPathqd();
        out["reaction"]["pathqd"] = pathqdReaction(trials);
        out["goodput"]["pathqd"] = goodputTrials("pathqd");
        double ideal = (kLinkMbit + kDegradedMbit) * 1e6;
        out["goodput"]["max_flow_bps"] = ideal;
        for (const char* mode : {"ecmp", "pathqd"}) {
            out["goodput"][mode]["ratio_to_max_flow"] =
                out["goodput"][mode]["median_goodput_bps"].get<double>() / ideal;
        }
        out["reaction"]["ratio_p50_to_baseline"] =
            out["reaction"]["pathqd"]["p50_s"].get<double>() /
            out["reaction"]["baseline_frr_edit"]["p50_s"].get<double>();
        return out;
    }

  private:
    void startPathqd() {
        nlohmann::json global = {{"reference_mbps", "100"},
                                 {"queue_ref_us", "20000"},
                                 {"latency_ref_us", "10000"},
                                 {"min_hold_ms", "2000"},
                                 {"raise_hold_ms", "5000"}};
        for (const char* node : {"s1", "s2", "l1", "l2"}) {
            std::string role = node[0] == 's' ? "downlink" : "uplink";
            nlohmann::json cfg;
            cfg["PATHQD"]["global"] = global;
            cfg["PATHQD_PORT"]["swp1"] = {{"role", role}};
            cfg["PATHQD_PORT"]["swp2"] = {{"role", role}};
            std::string path = dir_ + "/pathqd-" + node + ".json";
            std::ofstream(path) << cfg.dump();
            daemons_.emplace_back(
                std::vector<std::string>{"ip", "netns", "exec", fabric_.ns(node), pathqd_,
                                         "--config", path, "--frr-pathspace", fabric_.ns(node)},
                dir_ + "/pathqd-" + node + ".log");
        }
        waitShare(even, 20s);
    }

    double share() {
        auto w = lab::parseRouteWeights(fabric_.run("l1", {"ip", "route", "show", kH2Net}).out);
        double total = 0;
        for (const auto& [p, v] : w) total += v;
        return total > 0 ? 100.0 * w["swp1"] / total : -1;
    }
    bool waitShare(const std::function<bool(double)>& ok, std::chrono::milliseconds timeout) {
        return lab::waitUntil([this, &ok] { return ok(share()); }, timeout, 20ms);
    }

    // Time from `trigger` until l1's kernel gives `port` less than `below` percent of
    // h2's subnet.
    double timeUntilShareBelow(const std::string& port, double below,
                               const std::function<void()>& trigger) {
        std::atomic<bool> ready{false};
        double result = -1;
        Clock::time_point t0;
        std::thread watcher([this, &ready, &result, &t0, port, below] {
            inNamespace(fabric_.ns("l1"), [&ready, &result, &t0, port, below] {
                ready = true;
                auto deadline = Clock::now() + 10s;
                while (Clock::now() < deadline) {
                    double s = kernelShare(kH2Net, port);
                    if (s >= 0 && s < below) {
                        result = since(t0);
                        return;
                    }
                    std::this_thread::sleep_for(1ms);
                }
            });
        });
        while (!ready) std::this_thread::sleep_for(1ms);
        t0 = Clock::now();
        trigger();
        watcher.join();
        return result;
    }

    // Waits until l1 splits 50:50 and has for `quiet` (the levels have settled).
    void waitSettled(std::chrono::milliseconds quiet, std::chrono::milliseconds timeout) {
        auto deadline = Clock::now() + timeout;
        auto since50 = Clock::now();
        while (Clock::now() < deadline) {
            if (!even(share())) {
                since50 = Clock::now();
            } else if (Clock::now() - since50 >= quiet) {
                return;
            }
            std::this_thread::sleep_for(100ms);
        }
    }

    nlohmann::json summary(const std::vector<double>& v) {
        return {{"trials", v.size()},
                {"samples_s", v},
                {"p50_s", percentile(v, 0.5)},
                {"p95_s", percentile(v, 0.95)},
                {"max_s", v.empty() ? -1 : *std::max_element(v.begin(), v.end())}};
    }

    nlohmann::json baselineReaction(int trials) {
        std::vector<double> v;
        std::string ns = fabric_.ns("s1");
        // FRR weights a multipath only when every path carries the community: s2 tags a
        // constant, s1 alternates.
        for (const char* spine : {"s2", "s1"}) {
            lab::runOk({"vtysh",
                        "-N",
                        fabric_.ns(spine),
                        "-c",
                        "configure terminal",
                        "-c",
                        "route-map BENCH permit 10",
                        "-c",
                        "set extcommunity bandwidth 16",
                        "-c",
                        "exit",
                        "-c",
                        "router bgp 65000",
                        "-c",
                        "address-family ipv4 unicast",
                        "-c",
                        "neighbor swp1 route-map BENCH out",
                        "-c",
                        "end",
                        "-c",
                        "clear bgp ipv4 unicast swp1 soft out"});
        }
        waitShare([](double s) { return s == 50.0; }, 10s);
        auto setS1 = [ns](int bw) {
            lab::runOk({"vtysh", "-N", ns, "-c", "configure terminal", "-c",
                        "route-map BENCH permit 10", "-c",
                        "set extcommunity bandwidth " + std::to_string(bw), "-c", "end", "-c",
                        "clear bgp ipv4 unicast swp1 soft out"});
        };
        for (int i = 0; i < trials; ++i) {
            v.push_back(timeUntilShareBelow("swp1", 40, [&setS1] { setS1(3); }));
            setS1(16);
            waitShare([](double s) { return s == 50.0; }, 10s);
            std::this_thread::sleep_for(500ms);
        }
        for (const char* spine : {"s1", "s2"}) {
            lab::runOk({"vtysh", "-N", fabric_.ns(spine), "-c", "configure terminal", "-c",
                        "router bgp 65000", "-c", "address-family ipv4 unicast", "-c",
                        "no neighbor swp1 route-map BENCH out", "-c", "no route-map BENCH", "-c",
                        "end", "-c", "clear bgp ipv4 unicast swp1 soft out"});
        }
        waitShare([](double s) { return s == 50.0; }, 10s);
        return summary(v);
    }

    nlohmann::json pathqdReaction(int trials) {
        fabric_.run("h2", {"iperf3", "-s", "-D"});
        load_ = lab::ChildProcess({"ip", "netns", "exec", fabric_.ns("h1"), "iperf3", "-c",
                                   "10.2.2.10", "-t", "3600", "-P", "16"},
                                  dir_ + "/iperf.log");
        std::vector<double> v;
        for (int i = 0; i < trials; ++i) {
            waitSettled(3s, 60s);
            v.push_back(timeUntilShareBelow(
                "swp1", 40, [this] { lab::shapePort(fabric_, "s1", "swp2", kDegradedMbit); }));
            lab::shapePort(fabric_, "s1", "swp2", kLinkMbit);
        }
        load_.stop();
        fabric_.run("h2", {"pkill", "-f", "iperf3 -s"});
        return summary(v);
    }

    nlohmann::json goodputTrials(const std::string& mode) {
        lab::shapePort(fabric_, "s1", "swp2", kDegradedMbit);
        if (mode == "pathqd") waitShare([](double s) { return s > 0 && s < 30; }, 15s);
        std::this_thread::sleep_for(2s);
        std::vector<double> goodputs, jobs, shares;
        constexpr int kFlows = 128;
        constexpr size_t kBytes = 1 << 20;
        constexpr int kReps = 5;
        std::vector<double> viaS1;
        auto txBytes = [this](const char* port) {
            return std::stod(fabric_.runOk(
                "l1", {"cat", std::string("/sys/class/net/") + port + "/statistics/tx_bytes"}));
        };
        // Rep 0 warms up and is not counted: training traffic is continuous, and the
        // first job after an idle period also measures the levels settling under load.
        for (int rep = 0; rep <= kReps; ++rep) {
            double shareBefore = share();
            double s1Before = txBytes("swp1"), s2Before = txBytes("swp2");
            auto r =
                lab::runOk({"ip", "netns", "exec", fabric_.ns("h1"), self_, "source", "10.2.2.10",
                            "5300", std::to_string(kFlows), std::to_string(kBytes)},
                           120s);
            auto result = nlohmann::json::parse(r);
            if (result["failed"].get<int>() > 0) throw std::runtime_error("flows failed: " + r);
            double job = result["job_s"].get<double>();
            if (rep == 0) continue;
            shares.push_back(shareBefore);
            jobs.push_back(job);
            double d1 = txBytes("swp1") - s1Before, d2 = txBytes("swp2") - s2Before;
            viaS1.push_back(100 * d1 / (d1 + d2));
            goodputs.push_back(static_cast<double>(kFlows) * kBytes * 8 / job);
            std::this_thread::sleep_for(1s);
        }
        lab::shapePort(fabric_, "s1", "swp2", kLinkMbit);
        if (mode == "pathqd") waitShare(even, 30s);
        return {{"flows", kFlows},
                {"bytes_per_flow", kBytes},
                {"l1_share_via_s1_pct_before_each", shares},
                {"job_s", jobs},
                {"goodput_bps", goodputs},
                {"bytes_via_s1_pct", viaS1},
                {"median_goodput_bps", percentile(goodputs, 0.5)}};
    }

  public:
    std::string only_;  // "goodput" or "reaction": that part alone

  private:
    std::string self_, pathqd_;
    lab::Fabric fabric_;
    std::string dir_;
    std::vector<lab::ChildProcess> daemons_;
    lab::ChildProcess sink_, load_;
};

}  // namespace

nlohmann::json cpuBench(const std::string& pathqd, int ports);  // pathqd_cpu.cpp

static int benchMain(int argc, char** argv) {
    std::vector<std::string> a(argv, argv + argc);
    if (a.size() == 3 && a[1] == "sink") return sink(std::stoi(a[2]));
    if (a.size() == 6 && a[1] == "source")
        return source(a[2], std::stoi(a[3]), std::stoi(a[4]), std::stoull(a[5]));
    if (a.size() < 3) {
        std::cerr << "usage: pathqd_bench PATHQD OUTPUT.json [TRIALS]\n";
        return 64;
    }
    int trials = a.size() > 3 ? std::stoi(a[3]) : 20;
    nlohmann::json out;
    try {
        // PATHQD_BENCH_ONLY=cpu, goodput or reaction runs one part, for tuning.
        std::string only =
            getenv("PATHQD_BENCH_ONLY") != nullptr ? getenv("PATHQD_BENCH_ONLY") : "";
        if (only.empty() || only == "cpu") out["cpu"] = cpuBench(a[1], 64);
        if (only != "cpu") {
            Bench b(std::filesystem::canonical("/proc/self/exe").string(), a[1]);
            b.only_ = only;
            out.update(b.run(trials));
        }
    } catch (const std::exception& e) {
        std::cerr << "bench failed: " << e.what() << "\n";
        return 1;
    }
    std::ofstream(a[2]) << out.dump(2) << "\n";
    std::cout << out.dump(2) << "\n";
    return 0;
}

int main(int argc, char** argv) {
    try {
        return benchMain(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "pathqd_bench: " << e.what() << "\n";
    } catch (...) {
        std::cerr << "pathqd_bench: unknown exception\n";
    }
    return 70;
}
