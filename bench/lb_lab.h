// The load-balancing benchmark's lab (lb_bench.cpp): the plan, the modes it switches a
// running lab between, and one job of traffic with what it measures (job time, uplink
// load, TCP's reordering counters, the UDP sequence probe, RTT).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "twinrail/lab/plan_lab.h"

namespace twinrail::bench::lb {

inline constexpr const char* kLab = "lbb";
inline constexpr double kMbit = 100, kDegradedMbit = 25;
inline constexpr int kBytes = 25 * 1000 * 1000;  // per sender NIC, every pattern
inline constexpr int kIperfPorts = 4;            // iperf3 servers per receiver (all-to-all)

// What a mode changes on plane 1's switches.
enum class Steer { None, Ars, ArsGlobal, Spray };
struct Mode {
    const char* name;
    bool pins = false;    // static smart routing (UPLINK_PIN on the leaves)
    bool pathqd = false;  // pathqd running (WCMP weights; global ARS's remote half)
    Steer steer = Steer::None;
    bool singlePath = false;  // every host port pinned to one uplink: the reordering baseline
    bool perPacket = false;   // ARS modes: ARS_OBJECT assign_mode per_packet_quality
};

// A traffic pattern: who sends to whom, in how many TCP streams.
struct Pattern {
    const char* name;
    int streams = 1;        // TCP streams per sender-receiver pair
    bool allToAll = false;  // every sender to every receiver at once, else sender i -> i+1
    bool degraded = false;  // p1-spine1 -> p1-leaf2 at kDegradedMbit during the jobs
};

// "TcpExt.TCPOFOQueue" -> value, from /proc/net/netstat and /proc/net/snmp's text.
std::map<std::string, double> parseProcNet(const std::string& text);

class LbLab {
  public:
    // queueMs: how many milliseconds of traffic every shaped port may queue (tbf latency).
    LbLab(plan::Plan p, lab::LabBinaries bins, std::string probe, int queueMs);

    void setUp();
    void shape(const std::string& node, const std::string& port, double mbit) const;
    void shapeDegraded(bool degraded) const;
    // Switches every plane-1 switch to `m`; `idleUs` is the flowlet idle time of ARS modes.
    void mode(const Mode& m, uint32_t idleUs) const;
    // One job of `p` (every flow at once); with `ping`, a ping runs beside it.
    nlohmann::json job(const Pattern& p, bool ping) const;
    // The median RTT (ms) of pings between two NICs on an idle fabric.
    double idleRttMs() const;
    // The senders' TCP congestion control: the host's default, which the lab inherits
    // (cubic on a stock Debian; how full a deep queue stays depends on it).
    std::string tcpCongestionControl() const;

    size_t senderCount() const { return senders_.size(); }

  private:
    std::vector<const plan::Switch*> plane1() const;
    bool equalWeights() const;
    template <typename F>
    void editConfig(const std::string& node, F edit) const;
    void signalService(const std::string& node, lab::Service s, int sig) const;
    void detachPathqd(const plan::Switch& sw) const;
    void setPins(const plan::Switch& sw, bool pins, bool singlePath) const;
    void setSteer(const plan::Switch& sw, const Mode& m, uint32_t idleUs) const;
    std::map<std::string, double> uplinkBytes() const;
    std::map<std::string, double> tcpCounters(const std::vector<std::string>& nodes) const;

    plan::Plan p_;
    lab::LabBinaries bins_;
    std::string probe_;
    int queueMs_;
    std::vector<std::string> senders_, receivers_;  // NIC nodes behind p1-leaf1 / p1-leaf2
    std::map<std::string, std::string> address_;    // NIC node -> address
    std::vector<std::string> uplinks_;              // p1-leaf1's, in port order
    std::string degradedPort_;                      // p1-spine1's port toward p1-leaf2
    // Per plane-1 switch and steering mode: the tables the planner writes for it (ARS_*,
    // GLOBAL_ARS, SWITCH_HASH), taken from plans of the same request with that --lb.
    std::map<std::string, std::map<Steer, nlohmann::json>> steerTables_;
    // And the fields it writes differently in rows an ECMP plan has too: {table: {key:
    // {field: value}}} (ars-global: PATHQD|global max_penalty).
    std::map<std::string, std::map<Steer, nlohmann::json>> steerFields_;
};

}  // namespace twinrail::bench::lb
