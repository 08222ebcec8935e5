// P4.org Telemetry Report v2.0 carrying INT v2.1 metadata, as sent by INT-capable
// switches to a collector over UDP. Network byte order throughout. Layout and the
// interpretation of the length fields are documented in proto/int_report.md.
//
// The parser trusts nothing: every length is checked against what is left of the
// datagram before it is used, and any violation rejects the whole packet with the
// offset and the field that was wrong. It never reads outside the buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace twinrail::telemetry {

inline constexpr size_t kMaxReportBytes = 4096;  // larger datagrams are rejected unread
inline constexpr uint8_t kReportVersion = 2;
inline constexpr uint8_t kRepTypeInt = 1;

// One hop's metadata. A field is empty when the instruction bitmap did not ask for it
// or the switch reported it as unavailable (all ones).
struct IntHop {
    std::optional<uint32_t> nodeId;
    std::optional<uint16_t> ingressPort, egressPort;
    std::optional<uint32_t> hopLatency;  // per deployment: ns by default
    std::optional<uint8_t> queueId;
    std::optional<uint32_t> queueOccupancy;  // 24 bits; bytes or cells per deployment
    std::optional<uint64_t> ingressTimestamp, egressTimestamp;
    std::optional<uint32_t> egressTxUtil;     // per deployment: per mille by default
    std::optional<uint32_t> bufferOccupancy;  // 24 bits
};

struct IntPacket {
    uint8_t hwId = 0;
    uint32_t sequence = 0;
    uint32_t nodeId = 0;        // from the group header
    std::vector<IntHop> hops;   // from every INT report in the group, in order
    unsigned otherReports = 0;  // reports of other types (drop, flow) that were skipped
};

struct ParseError {
    size_t offset = 0;
    std::string what;
    std::string str() const { return "offset " + std::to_string(offset) + ": " + what; }
};

std::variant<IntPacket, ParseError> parseTelemetryReport(std::span<const uint8_t> datagram);

// Builds a report (one group, one INT report) for tests and the lab's traffic tools.
std::vector<uint8_t> buildTelemetryReport(uint32_t nodeId, uint32_t sequence, uint16_t mdBits,
                                          const std::vector<IntHop>& hops);

}  // namespace twinrail::telemetry
