// What the two INT wire formats share: one node's metadata (IntHop) and the error a
// parser returns. The Telemetry Report v2.0 parser (int_report.h) and the INT v2.1
// shim/INT-MD/INT-MX parser (int_shim.h) both produce them. Layouts and choices:
// proto/int_report.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace twinrail::telemetry {

// One node's metadata, in the bit order shared by a report's RepMdBits and an INT-MD
// instruction bitmap (bit 0 is the most significant bit). A field is empty when its bit
// was not set, or when the node sent all ones ("unavailable", INT v2.1 section on
// metadata insertion). Only bits 0 and 15 mean different things in the two formats.
struct IntHop {
    // Report: the group header's node id (report bit 0 is reserved, not a node id).
    // INT-MD stack entry: instruction bit 0.
    std::optional<uint32_t> nodeId;
    std::optional<uint16_t> ingressPort, egressPort;  // bit 1: level 1 interface ids
    std::optional<uint32_t> hopLatency;               // bit 2; per deployment: ns by default
    std::optional<uint8_t> queueId;                   // bit 3
    std::optional<uint32_t> queueOccupancy;           // bit 3; 24 bits, bytes or cells
    std::optional<uint64_t> ingressTimestamp;         // bit 4
    std::optional<uint64_t> egressTimestamp;          // bit 5
    std::optional<uint32_t> l2IngressIf, l2EgressIf;  // bit 6: level 2 interface ids
    std::optional<uint32_t> egressTxUtil;             // bit 7; per deployment: per mille
    std::optional<uint8_t> bufferId;                  // bit 8
    std::optional<uint32_t> bufferOccupancy;          // bit 8; 24 bits
    // Report bit 15: the queue the packet was dropped from, and why. The padding is
    // kept raw (the spec gives it no meaning) so a sender that fills it can be seen.
    std::optional<uint8_t> dropQueueId, dropReason;
    std::optional<uint16_t> dropPadding;
    // INT-MD bit 15: checksum complement, raw (any 32-bit value is meaningful).
    std::optional<uint32_t> checksumComplement;
};

// Metadata bit numbers (bit 0 = most significant bit of the 16-bit bitmap).
inline constexpr int kBitNodeIdOrReserved = 0;
inline constexpr int kBitDropOrChecksum = 15;

constexpr uint16_t mdBit(int bit) {
    return static_cast<uint16_t>(0x8000u >> bit);
}

// A parser's refusal: where (byte offset in the buffer it was given), which field, and why.
struct ParseError {
    size_t offset = 0;
    std::string field;
    std::string what;
    std::string str() const {
        return "offset " + std::to_string(offset) + " (" + field + "): " + what;
    }
};

}  // namespace twinrail::telemetry
