// CPU part of the pathqd benchmark: two namespaces joined by 64 veth pairs, pathqd on
// both sides, no FRR. Measures the CPU of one pathqd over 30 s of 100 ms sampling,
// once with latency probes off (counters, model, decisions) and once with probes on,
// and, as the baseline in the same run, the CPU of the bare netlink reads (links +
// qdiscs) every period. With veth, sending a probe also runs the peer namespace's
// receive path in the sender's context, so the probe figure includes the neighbour's
// kernel work that a real switch does on the other box.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "bench_util.h"
#include "twinrail/lab/fabric.h"
#include "twinrail/lab/process.h"
#include "twinrail/netlink/link_stats.h"

namespace lab = twinrail::lab;
using twinrail::bench::processCpuSeconds;
using twinrail::bench::threadCpuSeconds;
using namespace std::chrono_literals;

namespace {}  // namespace

namespace {

// CPU seconds of one pathqd (side a) over `window`, with both sides running.
double pathqdCpu(lab::Fabric& f, const std::string& dir, const std::string& pathqd, int ports,
                 bool probes, std::chrono::seconds window, bool& stayedUp) {
    nlohmann::json cfgA, cfgB;
    cfgA["PATHQD"]["global"] = {{"reference_mbps", "100000"},
                                {"probe_port", probes ? "50411" : "0"}};
    cfgB = cfgA;
    for (int i = 0; i < ports; ++i) {
        std::string p = "p" + std::to_string(i);
        cfgA["PATHQD_PORT"][p] = {{"role", "uplink"}, {"capacity_mbps", "100000"}};
        cfgB["PATHQD_PORT"][p] = {{"role", "downlink"}, {"capacity_mbps", "100000"}};
    }
    std::ofstream(dir + "/a.json") << cfgA.dump();
    std::ofstream(dir + "/b.json") << cfgB.dump();
    lab::ChildProcess b(
        {"ip", "netns", "exec", f.ns("b"), pathqd, "--config", dir + "/b.json", "--no-frr-check"},
        dir + "/b.log");
    lab::ChildProcess a(
        {"ip", "netns", "exec", f.ns("a"), pathqd, "--config", dir + "/a.json", "--no-frr-check"},
        dir + "/a.log");
    std::this_thread::sleep_for(5s);  // start-up and first probe replies
    double before = processCpuSeconds(a.pid());
    std::this_thread::sleep_for(window);
    double cpu = processCpuSeconds(a.pid()) - before;
    stayedUp = a.running() && b.running();
    return cpu;
}

}  // namespace

nlohmann::json cpuBench(const std::string& pathqd, int ports) {
    constexpr auto kWindow = 30s;
    lab::Fabric f(lab::uniquePrefix("pc"));
    std::string dir = "/tmp/" + f.prefix();
    std::filesystem::create_directories(dir);
    f.addNode("a");
    f.addNode("b");
    for (int i = 0; i < ports; ++i)
        f.link("a", "p" + std::to_string(i), "b", "p" + std::to_string(i));
    bool upSampling = false, upProbes = false;
    double samplingCpu = pathqdCpu(f, dir, pathqd, ports, false, kWindow, upSampling);
    double probesCpu = pathqdCpu(f, dir, pathqd, ports, true, kWindow, upProbes);

    // Baseline: the reads alone, on the same period, from a thread inside namespace a.
    double readsCpu = 0;
    int reads = 0;
    std::thread t([&f, &readsCpu, &reads, kWindow] {
        int fd = open(("/var/run/netns/" + f.ns("a")).c_str(), O_RDONLY | O_CLOEXEC);
        setns(fd, CLONE_NEWNET);
        close(fd);
        double c0 = threadCpuSeconds();
        auto end = std::chrono::steady_clock::now() + kWindow;
        auto next = std::chrono::steady_clock::now();
        while (next < end) {
            (void)twinrail::netlink::dumpLinkCounters();
            (void)twinrail::netlink::dumpQdiscs();
            ++reads;
            next += 100ms;
            std::this_thread::sleep_until(next);
        }
        readsCpu = threadCpuSeconds() - c0;
    });
    t.join();
    f.teardown();
    std::filesystem::remove_all(dir);
    double window = std::chrono::duration<double>(kWindow).count();
    return {{"ports", ports},
            {"sample_interval_ms", 100},
            {"window_s", window},
            {"sampling_cpu_pct_of_one_core", 100 * samplingCpu / window},
            {"sampling_cpu_ms_per_period", 1000 * samplingCpu / (window / 0.1)},
            {"with_probes_cpu_pct_of_one_core", 100 * probesCpu / window},
            {"baseline_reads_cpu_pct", 100 * readsCpu / window},
            {"baseline_reads", reads},
            {"sampling_ratio_to_baseline", readsCpu > 0 ? samplingCpu / readsCpu : -1},
            {"with_probes_ratio_to_baseline", readsCpu > 0 ? probesCpu / readsCpu : -1},
            {"pathqd_stayed_up", upSampling && upProbes}};
}
