// Measuring an interruption as a training job sees it: many UDP flows (distinct source
// ports, so ECMP spreads them over both planes), each a packet every `interval`, and a
// receiver that records, per flow, the longest silence between two packets.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace twinrail::lab {

// Sends until `duration` ends; returns {"flows", "sent"} or {"error"}.
nlohmann::json runFlowSender(const std::string& dst, uint16_t port, int flows,
                             std::chrono::microseconds interval,
                             std::chrono::milliseconds duration);

// Receives until `duration` ends. Returns {"flows", "received", "lost", "max_gap_ms",
// "flows_interrupted" (a gap over 50 ms), "flows_not_recovered", "gaps_ms": [...]}.
nlohmann::json runFlowReceiver(uint16_t port, std::chrono::microseconds interval,
                               std::chrono::milliseconds duration);

}  // namespace twinrail::lab
