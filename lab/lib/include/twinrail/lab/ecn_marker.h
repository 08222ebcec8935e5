// ECN marking on a lab port (bpf/ecn_mark.c): this kernel has no marking qdisc (no red,
// codel, fq_codel), so the lab marks the way a switch port's WRED profile does with a tc
// egress program that keeps a phantom queue at the port's rate, and counts what it saw of
// the ECN-capable class. Lab tooling only: a switch marks in its ASIC (SONiC) or its
// qdiscs (Linux), and pathqd reads those counters.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace twinrail::lab {

std::string_view ecnMarkObject();  // the compiled program, as embedded

// Attaches (or replaces) the marker on `port`'s egress in namespace `ns`: a port of `mbit`
// Mbit/s that marks ECN-capable packets CE once `markAfter` of queue is ahead of them.
// Its counts start at 0. Throws with tc's message when it cannot be attached.
void attachEcnMarker(const std::string& ns, const std::string& port, double mbit,
                     std::chrono::microseconds markAfter);

struct EcnCounts {
    uint64_t ect = 0;     // ECN-capable packets that left the port
    uint64_t marked = 0;  // of those, marked CE by it
};
// The marker's counts on `port` in `ns`; nullopt when it has none attached.
std::optional<EcnCounts> readEcnMarks(const std::string& ns, const std::string& port);

}  // namespace twinrail::lab
