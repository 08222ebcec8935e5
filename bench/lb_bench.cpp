// Load balancing, every mode on one lab and one run (issue 22 item 5): static ECMP, static
// smart routing (uplink pins), pathqd's WCMP, both, flowlet ARS (local and global), packet
// spray, per-packet quality ARS (local and global), and single-path forwarding (every host
// port pinned to one uplink, at a quarter of the load). The plan: 4 servers x 2 GPUs, leaves with 4
// downlinks and 4 uplinks, 4 spines per plane (one link per leaf-spine pair), every plane-1 fabric
// and host port shaped to 100 Mbit/s; the bonded NICs send on plane 1 only (their second ports
// down), so plane 1 is the fabric under test. Real FRR, hostrouted, pathqd, arsd.
//
//  permutation: every NIC behind p1-leaf1 sends one TCP flow of 25 MB to a different NIC
//      behind p1-leaf2 (a collective's step). Job time (the last flow) against the ideal.
//  all-to-all: every NIC behind p1-leaf1 sends to every NIC behind p1-leaf2 at once (16
//      flows of 6.25 MB: an all-to-all step, each receiver an incast of 4). Against the ideal.
//  degraded: p1-spine1 -> p1-leaf2 at a quarter of its rate; 4 flows per NIC, the
//      permutation. Goodput (all bytes / job time) against max-flow (3 x 100 + 25 Mbit/s).
// Beside every job: TCP's reordering counters in every sender and receiver namespace and
// the UDP sequence probe (udp_seq_probe: 4 flows per sender NIC, the share of datagrams
// arriving after a higher sequence number). Ratios to ECMP, to the ideal and, for
// reordering, to single path and to static (one fixed path per flow, the same load), from
// the same run. Then the flowlet idle-time sweep: ARS
// (local) at {0.1 .. 4} x half the idle fabric's RTT (the ARS modes' idle time is half of it).
// Writes JSON, a markdown table (OUT.md) and gnuplot plots.
//
// usage: lb_bench TWINRAIL_LAB HOSTROUTED PATHQD ARSD PROBE OUT.json [REPS] [SWEEP_REPS] [MODES]
//        [QUEUE_MS]
// QUEUE_MS (100): how much traffic, in milliseconds, every shaped port may queue (tbf's
// latency). A flowlet can only move without reordering once the queues it leaves are
// shorter than its idle time; 100 ms is a deep-buffered switch, 2 ms a shallow one.
//   MODES: a comma-separated subset of the modes' names (default: every mode)
//        lb_bench report OUT.json   (the table and plots again, from a run's JSON)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench_util.h"
#include "lb_lab.h"
#include "lb_report.h"

namespace lab = twinrail::lab;
namespace plan = twinrail::plan;
namespace lb = twinrail::bench::lb;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

using lb::Steer;
// Single path first after ECMP (whose pings give the RTT that sets the ARS idle time).
constexpr lb::Mode kModes[] = {
    {"ecmp", false, false, Steer::None, false},
    {"single-path", false, false, Steer::None, true},
    {"static", true, false, Steer::None, false},
    {"pathqd", false, true, Steer::None, false},
    {"static+pathqd", true, true, Steer::None, false},
    // Both ARS modes with pathqd running: global ARS reads its remote half from pathqd's
    // weights; local ARS chooses by its own ports' quality alone, so the one difference
    // between the two is GLOBAL_ARS.
    {"ars", false, true, Steer::Ars, false},
    {"ars-global", false, true, Steer::ArsGlobal, false},
    // SONiC's per-packet random hash, as an ASIC sprays: by the route's (equal) weights.
    {"spray", false, false, Steer::Spray, false},
    // SAI's per_packet_quality, local and global: every packet to the next hop with the
    // shortest queue by arsd's data-path estimate (global: drained at the path beyond's rate).
    {"ars-packet", false, true, Steer::Ars, false, true},
    {"ars-packet-global", false, true, Steer::ArsGlobal, false, true},
};
constexpr const lb::Mode& kArs = kModes[5];
constexpr lb::Pattern kPermutation{"permutation", 1, false, false};
constexpr lb::Pattern kAllToAll{"all-to-all", 1, true, false};
constexpr lb::Pattern kDegraded{"degraded", 4, false, true};
constexpr double kSweep[] = {0.1, 0.25, 0.5, 1, 2, 4};  // x RTT/2
// And two fixed points: SONiC's default idle time and the largest ARS_OBJECT allows.
constexpr uint32_t kSweepFixedUs[] = {256, 2047};

#ifdef TWINRAIL_LAB_HAS_ARSD
constexpr bool kHaveArsd = true;
#else
constexpr bool kHaveArsd = false;
#endif

double median(std::vector<double> v) {
    if (v.empty()) return -1;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double share(double part, double whole) {
    return whole > 0 ? part / whole : 0;
}

// `reps` jobs of one pattern in the current mode: medians, and reordering over all of them.
json runMode(const lb::LbLab& l, const std::string& name, const lb::Pattern& pat, int reps,
             bool ping) {
    std::vector<double> jobs, loads, rtts;  // rtts: every ping of every job
    json samples = json::array();
    std::map<std::string, double> tcp;
    double udpReceived = 0, udpLate = 0, udpLost = 0;
    for (int i = 0; i < reps; ++i) {
        json j = l.job(pat, ping);
        if (j.contains("rtt_ms")) {
            for (const auto& t : j["rtt_ms"]) rtts.push_back(t.get<double>());
            j.erase("rtt_ms");
        }
        samples.push_back(j);
        jobs.push_back(j["job_s"].get<double>());
        loads.push_back(j["load_max_over_mean"].get<double>());
        for (const auto& [k, v] : j["tcp"].items()) tcp[k] += v.get<double>();
        udpReceived += j["udp"]["received"].get<double>();
        udpLate += j["udp"]["late"].get<double>();
        udpLost += j["udp"]["lost"].get<double>();
        std::this_thread::sleep_for(1s);
    }
    const double total = static_cast<double>(lb::kBytes) * 8 * static_cast<double>(l.senderCount());
    json reorder{{"tcp_ofo_per_segment", share(tcp["TcpExt.TCPOFOQueue"], tcp["Tcp.InSegs"])},
                 {"tcp_reorder_events_per_segment",
                  share(tcp["TcpExt.TCPSACKReorder"] + tcp["TcpExt.TCPTSReorder"] +
                            tcp["TcpExt.TCPRenoReorder"],
                        tcp["Tcp.OutSegs"])},
                 {"tcp_dsack_per_segment", share(tcp["TcpExt.TCPDSACKRecv"], tcp["Tcp.OutSegs"])},
                 {"tcp_retrans_per_segment", share(tcp["Tcp.RetransSegs"], tcp["Tcp.OutSegs"])},
                 {"udp_late_share", share(udpLate, udpReceived)},
                 {"udp_lost_share", share(udpLost, udpReceived + udpLost)},
                 {"tcp_counters", tcp},
                 {"udp_received", udpReceived}};
    json out{{"mode", name},
             {"pattern", pat.name},
             {"samples", samples},
             {"median_job_s", median(jobs)},
             {"median_goodput_mbps", total / median(jobs) / 1e6},
             {"median_load_max_over_mean", median(loads)},
             {"reorder", reorder}};
    if (!rtts.empty()) {
        out["rtt_ms_median"] = median(rtts);
        out["rtt_ms_p10"] = twinrail::bench::percentile(rtts, 0.1);
        out["rtt_ms_p90"] = twinrail::bench::percentile(rtts, 0.9);
        out["rtt_samples"] = rtts.size();
    }
    std::cout << name << " " << pat.name << ": " << out["median_job_s"] << " s, load max/mean "
              << out["median_load_max_over_mean"] << ", tcp ofo/seg "
              << reorder["tcp_ofo_per_segment"] << ", udp late " << reorder["udp_late_share"]
              << std::endl;
    return out;
}

// Each reordering figure of `reorder` over the same figure of `base` (null where base is 0).
json reorderRatios(const json& reorder, const json& base) {
    json r = json::object();
    for (const char* k : {"tcp_ofo_per_segment", "tcp_reorder_events_per_segment",
                          "tcp_dsack_per_segment", "udp_late_share"}) {
        double b = base.value(k, 0.0);
        r[k] = b > 0 && reorder.contains(k) ? json(reorder[k].get<double>() / b) : json(nullptr);
    }
    return r;
}

json reorderOf(const json& results, const char* mode) {
    for (const auto& m : results)
        if (m["mode"] == mode) return m["reorder"];
    return json::object();
}

// Ratios of one pattern's results: job time to ECMP's; reordering to two baselines of one
// path per flow. single-path: every flow through one uplink, at a quarter of the load.
// static: every flow on its own fixed path at the same load as the other modes (the lab's
// own reordering grows with its load: two CPUs, and tbf dequeuing from timers).
void ratios(json& results) {
    const json single = reorderOf(results, "single-path");
    const json pinned = reorderOf(results, "static");
    double ecmpJob = 0;
    for (const auto& m : results)
        if (m["mode"] == "ecmp") ecmpJob = m["median_job_s"].get<double>();
    for (auto& m : results) {
        if (ecmpJob > 0) m["job_ratio_to_ecmp"] = m["median_job_s"].get<double>() / ecmpJob;
        m["reorder_ratio_to_single_path"] = reorderRatios(m["reorder"], single);
        m["reorder_ratio_to_static"] = reorderRatios(m["reorder"], pinned);
    }
}

}  // namespace

static int benchMain(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "report") {  // the table and plots again
        json in = json::parse(std::ifstream(argv[2]), nullptr, false);
        if (in.is_discarded()) {
            std::cerr << "lb_bench: " << argv[2] << ": not JSON\n";
            return 65;
        }
        std::string path = argv[2];
        lb::writeReport(in, path.substr(0, path.rfind('.')));
        return 0;
    }
    if (argc < 7) {
        std::cerr << "usage: lb_bench TWINRAIL_LAB HOSTROUTED PATHQD ARSD PROBE OUT.json [REPS] "
                     "[SWEEP_REPS] [MODES] [QUEUE_MS]\n";
        return 64;
    }
    const int reps = argc > 7 ? std::stoi(argv[7]) : 5;
    const int sweepReps = argc > 8 ? std::stoi(argv[8]) : 3;
    const std::string only =
        argc > 9 && std::string(argv[9]) != "all" ? "," + std::string(argv[9]) + "," : "";
    const int queueMs = argc > 10 ? std::stoi(argv[10]) : 100;
    const auto t0 = std::chrono::steady_clock::now();
    plan::Request r = lab::defaultLabRequest();
    r.gpus = 8;
    r.leafModel = {"lab-8x200G", 8, 200, {1}};
    r.spinesPerPlane = 4;
    r.lb = plan::Request::Lb::Static;
    auto p = std::get<plan::Plan>(plan::buildPlan(r));
    lab::LabBinaries bins{argv[2], argv[3], argv[1], "twinrail"};
#ifdef TWINRAIL_LAB_HAS_ARSD
    bins.arsd = argv[4];
#endif
    lab::PlanLab pl(lb::kLab, p, bins);
    pl.up();
    lb::LbLab l(p, bins, argv[5], queueMs);
    l.setUp();
    const double ideal = lb::kBytes * 8.0 / (lb::kMbit * 1e6);
    const double maxFlow = (3 * lb::kMbit + lb::kDegradedMbit) * 1e6;
    json out{{"reps", reps},
             {"sweep_reps", sweepReps},
             {"link_mbps", lb::kMbit},
             {"queue_ms", queueMs},
             {"bytes_per_nic", lb::kBytes},
             {"ideal_job_s", ideal},
             {"max_flow_mbps", maxFlow / 1e6},
             {"idle_rtt_ms", l.idleRttMs()},
             {"tcp_congestion_control", l.tcpCongestionControl()},
             {"permutation", json::array()},
             {"all-to-all", json::array()},
             {"degraded", json::array()}};
    std::vector<const lb::Mode*> modes;
    for (const auto& m : kModes) {
        if ((m.steer == Steer::None || kHaveArsd) &&
            (only.empty() || only.find("," + std::string(m.name) + ",") != std::string::npos))
            modes.push_back(&m);
    }
    if (!kHaveArsd) out["skipped"] = "ars, ars-global, spray: this build's lab has no arsd";
    // The ARS modes' idle time: half the lab's RTT on the idle fabric (the paths' own
    // delay, as an ASIC's idle time is set), within ARS_OBJECT's 2..2047 us. The RTT under
    // ECMP's load is reported beside it, not used: pings either miss every queue or wait
    // behind a standing one, and its median flipped between 0.045 and 4 ms from run to run,
    // and with it the idle time (which decides whether colliding flows ever part).
    const double halfRttUs = out["idle_rtt_ms"].get<double>() * 500;
    const uint32_t idleUs =
        std::clamp<uint32_t>(static_cast<uint32_t>(std::lround(halfRttUs)), 2U, 2047U);
    out["ars_idle_us"] = idleUs;
    for (const auto* m : modes) {
        l.mode(*m, idleUs);
        json perm = runMode(l, m->name, kPermutation, reps, std::string(m->name) == "ecmp");
        perm["ratio_to_ideal"] = ideal / perm["median_job_s"].get<double>();
        if (perm.contains("rtt_ms_median")) out["loaded_rtt_ms"] = perm["rtt_ms_median"];
        if (m->steer != Steer::None) perm["flowlet_idle_us"] = idleUs;
        out["permutation"].push_back(perm);
        json a2a = runMode(l, m->name, kAllToAll, reps, false);
        a2a["ratio_to_ideal"] = ideal / a2a["median_job_s"].get<double>();
        out["all-to-all"].push_back(a2a);
    }
    for (const auto* m : modes) {
        l.shapeDegraded(false);
        l.mode(*m, idleUs);  // the modes start healthy: ECMP's levels stay equal
        l.shapeDegraded(true);
        std::this_thread::sleep_for(m->pathqd ? 8s : 2s);  // pathqd sees it and publishes
        json res = runMode(l, m->name, kDegraded, reps, false);
        res["ratio_to_max_flow"] = res["median_goodput_mbps"].get<double>() * 1e6 / maxFlow;
        out["degraded"].push_back(res);
    }
    l.shapeDegraded(false);
    for (const char* pattern : {"permutation", "all-to-all", "degraded"}) ratios(out[pattern]);
    // The sweep: flowlet ARS (local) at multiples of half the loaded RTT, permutation.
    out["sweep"] = json::array();
    const bool arsRan = std::any_of(modes.begin(), modes.end(),
                                    [](const lb::Mode* m) { return m->steer == Steer::Ars; });
    if (arsRan) {
        // {idle us wanted, x RTT/2}, in idle order; the fixed points once each.
        std::vector<std::pair<uint32_t, double>> points;
        for (double f : kSweep)
            points.emplace_back(static_cast<uint32_t>(std::lround(f * halfRttUs)), f);
        for (uint32_t us : kSweepFixedUs) points.emplace_back(us, us / halfRttUs);
        std::sort(points.begin(), points.end());
        for (const auto& [want, f] : points) {
            const uint32_t idle = std::clamp<uint32_t>(want, 2, 2047);
            l.mode(kArs, idle);
            json s = runMode(l, "ars", kPermutation, sweepReps, false);
            s["idle_x_half_rtt"] = f;
            s["idle_us_wanted"] = want;
            s["idle_us"] = idle;
            s["clamped"] = idle != want;
            s["ratio_to_ideal"] = ideal / s["median_job_s"].get<double>();
            out["sweep"].push_back(s);
        }
        const json single = reorderOf(out["permutation"], "single-path");
        const json pinned = reorderOf(out["permutation"], "static");
        for (auto& s : out["sweep"]) {
            s["reorder_ratio_to_single_path"] = reorderRatios(s["reorder"], single);
            s["reorder_ratio_to_static"] = reorderRatios(s["reorder"], pinned);
        }
    }
    out["runtime_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    lab::PlanLab::down(lb::kLab);
    std::string path = argv[6];
    std::ofstream(path) << out.dump(2) << "\n";
    std::string base = path.substr(0, path.rfind('.'));
    lb::writeReport(out, base);
    return 0;
}

int main(int argc, char** argv) {
    return twinrail::bench::labMain("lb_bench", lb::kLab,
                                    [argc, argv] { return benchMain(argc, argv); });
}
