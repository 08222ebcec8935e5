// ECN marks as a congestion signal, with and without the ECN input, in one run (issue 21).
// The dual-spine fabric of tests/integration/pathqd_lab.h: every fabric link shaped to
// 100 Mbit/s and marking ECN as a WRED profile does (lab::shapePort, ecn_marker.h), real
// FRR, pathqd on every switch. s1 runs pathqd's SONiC source, as on a SONiC spine: a
// stand-in for syncd's flex counters (below) writes s1's COUNTERS_DB from the kernel's
// port counters every second and the marker's queue counters every 10 s (SONiC's default
// queue poll), so pathqd reads the marks as SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS.
//
// The load that marks: s1 sends ECN-capable UDP (DSCP 26, ECT(0): traffic class 106,
// what the plan's nccl.conf gives RoCE) to h2 across s1 -> l2 in bursts, 40 Mbit/s on
// average. The link is 40% used (under the utilisation knee), its tbf has no backlog (the
// bursts fit its bucket) and drops nothing, but each burst outruns the port's rate for
// longer than the 1 ms marking threshold: a link that marks and does not drop.
//
// Per mode (ecn_ref 0.1, the default, then ecn_ref 0: the input off), from fresh pathqds:
// l1's share of h2's subnet through s1 before the load and over 40 s of it, and s1's
// PATH_QUALITY_TABLE row for the link. A third mode shows pauses the same way: veths have
// no PFC, so the stand-in adds 800 pause frames a second on priority 3 to s1 -> l2's
// SAI_PORT_STAT_PFC_3_RX_PKTS (what a leaf pausing that port would make syncd count), no
// burst. Writes OUT.json; exits 1 when the ECN input did not move weight away from s1, the
// input off did, or the pauses did not.
//
// usage: ecn_bench PATHQD OUT.json
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "pathqd_lab.h"
#include "twinrail/lab/ecn_marker.h"
#include "twinrail/lab/fabric.h"
#include "twinrail/lab/process.h"
#include "twinrail/lab/shell.h"

namespace lab = twinrail::lab;
using json = nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kH2Net = "10.2.2.0/24";
constexpr int kCountersDb = 2, kApplDb = 0, kStateDb = 6;

// A burst sender: `burst` datagrams of `size` bytes back to back, `rate` bit/s on average.
constexpr const char* kBurstPy = R"(import socket, sys, time
src, dst, rate, burst, size = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 106)  # DSCP 26, ECT(0)
s.bind((src, 0))
payload = bytes(size)
period = burst * size * 8 / rate
t = time.monotonic()
while True:
    for _ in range(burst):
        s.sendto(payload, (dst, 9))
    t += period
    time.sleep(max(0.0, t - time.monotonic()))
)";

double median(std::vector<double> v) {
    return twinrail::bench::percentile(std::move(v), 0.5);
}

class EcnBench : twinrail::it::PathqdLab {
  public:
    explicit EcnBench(std::string pathqd) : pathqd_(std::move(pathqd)) {}
    ~EcnBench() {
        stopCounters();
        removeFabric(keepLogs_);
    }
    EcnBench(const EcnBench&) = delete;
    EcnBench& operator=(const EcnBench&) = delete;

    json run() {
        keepLogs_ = true;
        buildFabric("ecn");
        std::ofstream(dir_ + "/burst.py") << kBurstPy;
        startCounters();
        json modes = json::array();
        modes.push_back(mode("0.1", false));
        modes.push_back(mode("0", false));
        modes.push_back(mode("0", true));
        keepLogs_ = false;
        return modes;
    }

  private:
    json mode(const std::string& ecnRef, bool pauses) {
        std::string name = pauses ? "pauses" : "ecn_ref-" + ecnRef;
        std::cout << "== " << name << std::endl;
        json global = {{"ecn_ref", ecnRef}};
        json sonic = {{"ecn_ref", ecnRef}, {"source", "sonic"}};
        for (auto [node, role, cfg, redis] : {std::tuple{"s1", "downlink", sonic, true},
                                              {"s2", "downlink", global, false},
                                              {"l1", "uplink", global, false},
                                              {"l2", "uplink", global, false}}) {
            auto& d = launchPathqd(pathqd_, node, config(role, cfg), redis);
            if (!d.waitReady(10s)) throw std::runtime_error(std::string(node) + ": " + d.log());
        }
        json out{{"mode", name}, {"ecn_ref", ecnRef}};
        bool even = lab::waitUntil(
            [this] { return std::abs(share("l1", kH2Net, "swp1") - 50) < 3; }, 30s, 200ms);
        std::this_thread::sleep_for(3s);
        out["share_before_percent"] = share("l1", kH2Net, "swp1");
        out["even_before"] = even;
        auto marksBefore = lab::readEcnMarks(fabric_->ns("s1"), "swp2").value_or(lab::EcnCounts{});
        auto dropsBefore = drops();
        std::optional<lab::ChildProcess> burst;
        if (!pauses) {
            burst.emplace(std::vector<std::string>{"ip", "netns", "exec", fabric_->ns("s1"),
                                                   "python3", dir_ + "/burst.py", "10.0.0.1",
                                                   "10.2.2.10", "40e6", "16", "1400"},
                          dir_ + "/burst-" + name + ".log");
        }
        pausePps_ = pauses ? 800 : 0;
        auto t0 = Clock::now();
        std::vector<double> late;
        json series = json::array();  // [seconds since the load started, share]
        series.push_back({0.0, out["share_before_percent"]});
        double minShare = 100;
        std::optional<double> movedAfter;
        while (Clock::now() - t0 < 40s) {
            std::this_thread::sleep_for(500ms);
            double s = share("l1", kH2Net, "swp1");
            double at = std::chrono::duration<double>(Clock::now() - t0).count();
            minShare = std::min(minShare, s);
            series.push_back({at, s});
            if (!movedAfter && s < 47) movedAfter = at;
            if (at >= 30) late.push_back(s);
        }
        pausePps_ = 0;
        for (const char* f :
             {"ecn_ratio", "ecn_source", "pause_rx_pps", "congestion", "congestion_cause", "level",
              "util", "queue_bytes", "queue_source", "drop_ratio"})
            out["s1_swp2"][f] = row("s1", "swp2", f);
        auto marks = lab::readEcnMarks(fabric_->ns("s1"), "swp2").value_or(lab::EcnCounts{});
        out["marker_ect_packets"] = marks.ect - marksBefore.ect;
        out["marker_marked_packets"] = marks.marked - marksBefore.marked;
        out["tbf_drops"] = drops() - dropsBefore;
        out["share_last_10s_percent"] = median(late);
        out["share_min_percent"] = minShare;
        out["moved_below_47_after_s"] = movedAfter ? json(*movedAfter) : json(nullptr);
        out["series"] = series;
        if (burst) {
            out["burst_running"] = burst->running();
            burst->stop();
        }
        daemons_.clear();  // SIGTERM: the route-maps stay until the next mode's pathqds
        std::cout << out.dump() << std::endl;
        return out;
    }

    std::string row(const std::string& node, const std::string& port, const std::string& f) {
        auto out = redisFor(node).cli(kStateDb, {"HGET", "PATH_QUALITY_TABLE|" + port, f});
        return out.substr(0, out.find('\n'));
    }

    long long drops() {
        auto out = fabric_->run("s1", {"tc", "-s", "-j", "qdisc", "show", "dev", "swp2"}).out;
        long long total = 0;
        for (const auto& q : json::parse(out, nullptr, false))
            if (q.is_object() && q.contains("drops")) total += q["drops"].get<long long>();
        return total;
    }

    // ---- syncd's flex counters, for s1 --------------------------------------------
    // Port counters every second (FLEX_COUNTER_TABLE PORT's default) from the kernel,
    // queue counters every 10 s (QUEUE's default) from the marker; the name maps and
    // APPL_DB PORT_TABLE as portsyncd and syncd write them.
    void startCounters() {
        auto& r = redisFor("s1");
        for (const char* port : {"swp1", "swp2"}) {
            std::string n = port + 3;
            r.cli(kCountersDb, {"HSET", "COUNTERS_PORT_NAME_MAP", port, "oid:0x100000000000" + n});
            r.cli(kCountersDb, {"HSET", "COUNTERS_QUEUE_NAME_MAP", std::string(port) + ":3",
                                "oid:0x150000000000" + n});
            r.cli(kCountersDb, {"HSET", "COUNTERS_QUEUE_TYPE_MAP", "oid:0x150000000000" + n,
                                "SAI_QUEUE_TYPE_UNICAST"});
            r.cli(kApplDb,
                  {"HSET", std::string("PORT_TABLE:") + port, "oper_status", "up", "speed", "100"});
        }
        writer_ = std::thread([this] {
            for (int tick = 0; !stop_; ++tick) {
                writePorts();
                if (tick % 10 == 0) writeQueues();
                for (int i = 0; i < 10 && !stop_; ++i) std::this_thread::sleep_for(100ms);
            }
        });
    }
    void stopCounters() {
        stop_ = true;
        if (writer_.joinable()) writer_.join();
    }
    void writePorts() {
        auto text = fabric_->run("s1", {"ip", "-s", "-j", "link", "show"}).out;
        for (const auto& link : json::parse(text, nullptr, false)) {
            if (!link.is_object() || !link.contains("stats64")) continue;
            std::string name = link.value("ifname", "");
            if (name != "swp1" && name != "swp2") continue;
            const auto& s = link["stats64"];
            auto v = [&s](const char* dir, const char* f) {
                return std::to_string(s[dir].value(f, 0ULL));
            };
            if (name == "swp2") pauses_ += pausePps_.load();  // one poll a second
            redisFor("s1").cli(
                kCountersDb,
                {"HSET", "COUNTERS:oid:0x100000000000" + name.substr(3),
                 "SAI_PORT_STAT_PFC_3_RX_PKTS", std::to_string(name == "swp2" ? pauses_ : 0),
                 "SAI_PORT_STAT_IF_OUT_OCTETS", v("tx", "bytes"), "SAI_PORT_STAT_IF_OUT_UCAST_PKTS",
                 v("tx", "packets"), "SAI_PORT_STAT_IF_OUT_NON_UCAST_PKTS", "0",
                 "SAI_PORT_STAT_IF_OUT_DISCARDS", v("tx", "dropped"), "SAI_PORT_STAT_IF_IN_OCTETS",
                 v("rx", "bytes"), "SAI_PORT_STAT_IF_IN_UCAST_PKTS", v("rx", "packets")});
        }
    }
    void writeQueues() {
        for (const char* port : {"swp1", "swp2"}) {
            auto c = lab::readEcnMarks(fabric_->ns("s1"), port);
            if (!c) continue;
            redisFor("s1").cli(
                kCountersDb, {"HSET", "COUNTERS:oid:0x150000000000" + std::string(port + 3),
                              "SAI_QUEUE_STAT_PACKETS", std::to_string(c->ect),
                              "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", std::to_string(c->marked)});
        }
    }

    std::string pathqd_;
    bool keepLogs_ = false;
    std::atomic<bool> stop_{false};
    std::atomic<int> pausePps_{0};
    uint64_t pauses_ = 0;  // writer thread only
    std::thread writer_;
};

// The three modes' shares over time, one line each: a .dat and a gnuplot PNG beside OUT.
void plot(const json& modes, const std::string& out) {
    const std::string base = out.substr(0, out.rfind('.'));
    std::ofstream dat(base + ".dat");
    dat << "# seconds";
    for (const auto& m : modes) dat << "\t" << m["mode"].get<std::string>();
    dat << "\n";
    for (size_t i = 0; i < modes[0]["series"].size(); ++i) {
        dat << modes[0]["series"][i][0].get<double>();
        for (const auto& m : modes)
            dat << "\t" << (i < m["series"].size() ? m["series"][i][1].get<double>() : NAN);
        dat << "\n";
    }
    dat.close();
    std::ofstream gp(base + ".gp");
    gp << "set terminal pngcairo size 900,420\nset output '" << base << ".png'\n"
       << "set title \"l1's share of h2's subnet through s1; s1 -> l2 marks ECN or is paused "
          "from t=0\"\nset xlabel 'seconds'\nset ylabel 'percent'\nset yrange [38:52]\n"
          "set grid\nset key bottom left\n"
       << "plot '" << base
       << ".dat' using 1:2 with steps lw 2 title 'ECN input on (ecn\\_ref 0.1)', "
       << "'' using 1:3 with steps lw 2 title 'ECN input off (ecn\\_ref 0), same marks', "
       << "'' using 1:4 with steps lw 2 title '800 pause frames/s received'\n";
    gp.close();
    auto r = lab::run({"gnuplot", base + ".gp"});
    if (r.rc != 0) std::cerr << "gnuplot: " << r.err << "\n";
}

int benchMain(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: ecn_bench PATHQD OUT.json\n";
        return 64;
    }
    json modes;
    {
        EcnBench b(argv[1]);
        modes = b.run();
    }
    const json& on = modes[0];
    const json& off = modes[1];
    auto moved = [](const json& m) {
        return m["share_before_percent"].get<double>() - m["share_last_10s_percent"].get<double>();
    };
    double movedOn = moved(on), movedOff = moved(off), movedPauses = moved(modes[2]);
    bool pass = movedOn >= 4 && std::abs(movedOff) < 2 && on["tbf_drops"] == 0 && movedPauses >= 4;
    json report{{"what", "l1's share of h2's subnet through s1 while s1 -> l2 marks ECN"},
                {"modes", modes},
                {"moved_points_ecn_on", movedOn},
                {"moved_points_ecn_off", movedOff},
                {"moved_points_pauses", movedPauses},
                {"pass", pass}};
    std::ofstream(argv[2]) << report.dump(2) << "\n";
    plot(modes, argv[2]);
    std::cout << (pass ? "PASS" : "FAIL") << ": through s1 " << on["share_before_percent"]
              << "% -> " << on["share_last_10s_percent"] << "% with the ECN input, "
              << off["share_before_percent"] << "% -> " << off["share_last_10s_percent"]
              << "% without; " << modes[2]["share_last_10s_percent"] << "% with 800 pauses/s -> "
              << argv[2] << "\n";
    return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return benchMain(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "ecn_bench: " << e.what() << "\n";
        return 70;
    }
}
