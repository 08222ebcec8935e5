// What the load-balancing benchmarks (lb_bench, polarisation_bench) share: taking pathqd
// out of a running lab switch, so that its routes are FRR's plain multipath again, and
// reading udp_seq_probe's report.
#pragma once

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/shell.h"

namespace twinrail::bench {

// pathqd stopped leaves its route-maps (and the last levels) in place, so they are
// detached here: no link-bandwidth from this switch, FRR's plain multipath. pathqd
// attaches them again when it starts.
inline void detachPathqdRouteMaps(const std::string& labName, const plan::Switch& sw) {
    lab::Argv argv{"vtysh",
                   "-N",
                   lab::PlanLab::nsPrefix(labName) + sw.name,
                   "-d",
                   "bgpd",
                   "-c",
                   "configure terminal",
                   "-c",
                   "router bgp " + std::to_string(sw.asn)};
    for (const char* af : {"ipv4", "ipv6"}) {
        argv.insert(argv.end(), {"-c", std::string("address-family ") + af + " unicast"});
        for (const auto& port : sw.ports) {
            argv.insert(
                argv.end(),
                {"-c",
                 "no neighbor " + port.name + " route-map TWINRAIL-PQ-IN-" + port.name + " in",
                 "-c",
                 "no neighbor " + port.name + " route-map TWINRAIL-PQ-OUT-" + port.name + " out"});
        }
        argv.insert(argv.end(), {"-c", "exit-address-family"});
    }
    argv.insert(argv.end(), {"-c", "end", "-c", "clear bgp ipv4 unicast * soft", "-c",
                             "clear bgp ipv6 unicast * soft"});
    lab::run(argv, std::chrono::seconds(60));
}

// The last line of `file` that is a JSON object (udp_seq_probe prints its report last), or
// {"error": ...} when there is none.
inline nlohmann::json lastJsonLine(const std::string& file) {
    std::ifstream in(file);
    std::string line, last;
    while (std::getline(in, line))
        if (!line.empty() && line[0] == '{') last = line;
    nlohmann::json j = nlohmann::json::parse(last, nullptr, false);
    return j.is_discarded() ? nlohmann::json{{"error", "no output in " + file}} : j;
}

}  // namespace twinrail::bench
