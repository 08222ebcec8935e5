// One job of the load-balancing benchmark (lb_lab.h): every flow of a pattern at once,
// with the UDP sequence probe and (optionally) a ping beside it, and what it measured:
// job time, p1-leaf1's uplink load, TCP's reordering counters in the senders' and the
// receivers' namespaces, the probe's late datagrams, the RTT.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "lb_lab.h"
#include "lb_util.h"
#include "twinrail/lab/process.h"
#include "twinrail/lab/shell.h"

namespace twinrail::bench::lb {

using json = nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kProbePort = 9200, kProbeFlows = 4, kProbePps = 500;

// TCP's reordering evidence, each kept separately in the results:
//   receiver  TCPOFOQueue: data segments queued out of order (reordering, or a loss ahead);
//   sender    TCPSACKReorder/TCPTSReorder/TCPRenoReorder: reordering TCP detected;
//             TCPDSACKRecv: spurious retransmissions the receiver reported (a reordered
//             segment taken for lost); InSegs/OutSegs to scale them per segment.
const char* const kCounters[] = {
    "TcpExt.TCPOFOQueue",  "TcpExt.TCPSACKReorder",  "TcpExt.TCPTSReorder", "TcpExt.TCPRenoReorder",
    "TcpExt.TCPDSACKRecv", "TcpExt.TCPDSACKOfoRecv", "Tcp.InSegs",          "Tcp.OutSegs",
    "Tcp.RetransSegs"};

double median(std::vector<double> v) {
    if (v.empty()) return -1;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// ping's "time=0.123 ms" lines.
std::vector<double> pingTimes(const std::string& file) {
    std::ifstream in(file);
    std::vector<double> out;
    const std::regex kTime("time=([0-9.]+) ms");
    std::smatch m;
    for (std::string line; std::getline(in, line);)
        if (std::regex_search(line, m, kTime)) out.push_back(std::stod(m[1].str()));
    return out;
}

}  // namespace

std::map<std::string, double> parseProcNet(const std::string& text) {
    std::map<std::string, double> out;
    std::istringstream in(text);
    std::string names, values;
    while (std::getline(in, names) && std::getline(in, values)) {
        std::istringstream n(names), v(values);
        std::string prefix, prefixV, name, value;
        n >> prefix;
        v >> prefixV;
        if (prefix != prefixV || prefix.empty()) return out;  // not header/value pairs
        prefix.pop_back();                                    // the ':'
        while (n >> name && v >> value) {
            try {
                out[prefix + "." + name] = std::stod(value);
            } catch (const std::exception&) {
                // a field that is not a number (none today): skipped
            }
        }
    }
    return out;
}

std::map<std::string, double> LbLab::uplinkBytes() const {
    std::map<std::string, double> out;
    for (const auto& u : uplinks_) {
        out[u] = std::stod(lab::inNodeRun(kLab, "p1-leaf1",
                                          {"cat", "/sys/class/net/" + u + "/statistics/tx_bytes"})
                               .out);
    }
    return out;
}

// The counters of kCounters, summed over `nodes`' namespaces.
std::map<std::string, double> LbLab::tcpCounters(const std::vector<std::string>& nodes) const {
    std::map<std::string, double> sum;
    for (const auto& node : nodes) {
        auto all = parseProcNet(
            lab::inNodeRun(kLab, node, {"cat", "/proc/net/netstat", "/proc/net/snmp"}).out);
        for (const char* c : kCounters) sum[c] += all.count(c) ? all.at(c) : 0;
    }
    return sum;
}

double LbLab::idleRttMs() const {
    auto r = lab::inNodeRun(kLab, senders_[0],
                            {"ping", "-n", "-c", "20", "-i", "0.05", address_.at(receivers_[1])});
    std::string file = "/tmp/" + std::string(kLab) + "-ping-idle.out";
    std::ofstream(file) << r.out;
    double rtt = median(pingTimes(file));
    std::remove(file.c_str());
    return rtt;
}

std::string LbLab::tcpCongestionControl() const {
    std::string cc =
        lab::inNodeRun(kLab, senders_[0], {"cat", "/proc/sys/net/ipv4/tcp_congestion_control"}).out;
    while (!cc.empty() && (cc.back() == '\n' || cc.back() == ' ')) cc.pop_back();
    return cc;
}

json LbLab::job(const Pattern& pat, bool ping) const {
    const std::string prefix = lab::PlanLab::nsPrefix(kLab);
    const std::string tmp = "/tmp/" + std::string(kLab) + "-";
    auto before = uplinkBytes();
    auto sendBefore = tcpCounters(senders_), recvBefore = tcpCounters(receivers_);
    std::vector<std::string> files, probeFiles;
    std::vector<std::string> pingFiles;
    double wall = 0;
    {
        // The probe: receivers first, then one sender per NIC toward its permutation peer,
        // until the job ends (SIGTERM).
        std::vector<lab::ChildProcess> probeRecv, probeSend, clients;
        for (size_t i = 0; i < receivers_.size(); ++i) {
            std::string f = tmp + "probe-recv" + std::to_string(i) + ".out";
            std::remove(f.c_str());
            probeFiles.push_back(f);
            probeRecv.emplace_back(
                lab::inNamespace(prefix + receivers_[i],
                                 {probe_, "recv", std::to_string(kProbePort), "300", "1"}),
                f);
        }
        std::this_thread::sleep_for(200ms);  // bound before anything is sent
        for (size_t i = 0; i < senders_.size(); ++i) {
            probeSend.emplace_back(
                lab::inNamespace(
                    prefix + senders_[i],
                    {probe_, "send", address_.at(receivers_[(i + 1) % receivers_.size()]),
                     std::to_string(kProbePort), std::to_string(kProbeFlows),
                     std::to_string(kProbePps), "300"}),
                tmp + "probe-send" + std::to_string(i) + ".out");
        }
        // Pings from every sender to its permutation peer: the RTT over every loaded path,
        // pooled (one path alone is either idle or behind a collision).
        std::vector<lab::ChildProcess> pingers;
        for (size_t i = 0; ping && i < senders_.size(); ++i) {
            pingFiles.push_back(tmp + "ping" + std::to_string(i) + ".out");
            std::remove(pingFiles.back().c_str());
            pingers.emplace_back(
                lab::inNamespace(prefix + senders_[i],
                                 {"ping", "-n", "-i", "0.02", "-w", "120",
                                  address_.at(receivers_[(i + 1) % receivers_.size()])}),
                pingFiles.back());
        }
        auto t0 = Clock::now();
        // Every sender at once, each iperf3's report (and errors) in its own file; all bytes
        // of a sender NIC are kBytes whatever the pattern.
        for (size_t i = 0; i < senders_.size(); ++i) {
            std::vector<size_t> to;
            if (pat.allToAll) {
                for (size_t j = 0; j < receivers_.size(); ++j) to.push_back(j);
            } else {
                to.push_back((i + 1) % receivers_.size());
            }
            for (size_t j : to) {
                std::string file =
                    tmp + "job" + std::to_string(i) + "-" + std::to_string(j) + ".json";
                files.push_back(file);
                std::remove(file.c_str());
                clients.emplace_back(
                    lab::inNamespace(prefix + senders_[i],
                                     {"iperf3", "-J", "-c", address_.at(receivers_[j]), "-p",
                                      std::to_string(5201 + (pat.allToAll ? i : 0)), "-P",
                                      std::to_string(pat.streams), "-n",
                                      std::to_string(kBytes / static_cast<int>(to.size()))}),
                    file);
            }
        }
        auto deadline = Clock::now() + 120s;
        for (auto& c : clients) {
            c.wait(std::chrono::duration_cast<std::chrono::milliseconds>(
                std::max(Clock::duration::zero(), deadline - Clock::now())));
        }
        wall = std::chrono::duration<double>(Clock::now() - t0).count();
        for (auto& s : probeSend) s.signal(SIGTERM);
        for (auto& pg : pingers) pg.signal(SIGINT);
        for (auto& s : probeSend) s.wait(5s);
        for (auto& r : probeRecv) r.wait(5s);
        for (auto& pg : pingers) pg.wait(5s);
    }  // any still running is stopped
    auto after = uplinkBytes();
    auto sendAfter = tcpCounters(senders_), recvAfter = tcpCounters(receivers_);
    double most = 0, sum = 0;
    for (const auto& [u, b] : after) {
        most = std::max(most, b - before[u]);
        sum += b - before[u];
    }
    double slowest = 0;
    bool failed = false;
    for (const auto& f : files) {
        json r = json::parse(std::ifstream(f), nullptr, false);
        if (r.is_discarded() || r.contains("error") || !r.contains("end")) {
            failed = true;
            continue;
        }
        slowest = std::max(slowest, r["end"]["sum_received"]["seconds"].get<double>());
        std::remove(f.c_str());
    }
    json tcp = json::object();
    for (const char* c : kCounters) {
        std::string key(c);
        bool atReceiver = key == "TcpExt.TCPOFOQueue" || key == "Tcp.InSegs";
        tcp[key] = atReceiver ? recvAfter[key] - recvBefore[key] : sendAfter[key] - sendBefore[key];
    }
    uint64_t received = 0, late = 0, lost = 0;
    for (const auto& f : probeFiles) {
        json r = lastJsonLine(f);
        received += r.value("received", uint64_t{0});
        late += r.value("late", uint64_t{0});
        lost += r.value("lost", uint64_t{0});
        std::remove(f.c_str());
    }
    double mean = sum / static_cast<double>(uplinks_.size());
    json out{{"job_s", failed ? wall : slowest},
             {"wall_s", wall},
             {"failed", failed},
             {"load_max_over_mean", mean > 0 ? most / mean : 0},
             {"tcp", tcp},
             {"udp", {{"received", received}, {"late", late}, {"lost", lost}}}};
    if (ping) {
        json times = json::array();
        for (const auto& f : pingFiles) {
            for (double t : pingTimes(f)) times.push_back(t);
            std::remove(f.c_str());
        }
        out["rtt_ms"] = times;  // pooled by the caller, then dropped
    }
    return out;
}

}  // namespace twinrail::bench::lb
