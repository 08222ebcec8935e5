// INT v2.1 data packets over TCP/UDP: the 4-byte shim, then an INT-MD header and its
// metadata stack, or an INT-MX header. This is what a switch carries inside the data
// packet (and what an INT-MD sink copies into a report's truncated packet), not a
// telemetry report. The span given starts at the shim, i.e. it is the TCP/UDP payload.
// Layout and choices: proto/int_report.md.
//
// Like the report parser it trusts nothing: every length is checked before use, errors
// name the offset and the field, nothing is read outside the buffer, no exceptions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <variant>
#include <vector>

#include "twinrail/telemetry/int_metadata.h"

namespace twinrail::telemetry {

inline constexpr uint8_t kShimTypeMd = 1;
inline constexpr uint8_t kShimTypeDestination = 2;  // no format defined in INT v2.1: refused
inline constexpr uint8_t kShimTypeMx = 3;
inline constexpr uint8_t kIntVersion = 2;
inline constexpr size_t kIntHeaderBytes = 12;  // INT-MD and INT-MX header, each

struct IntShimPacket {
    // Shim
    uint8_t type = 0;         // kShimTypeMd or kShimTypeMx
    uint8_t npt = 0;          // next protocol type: what nptField holds
    uint8_t lengthWords = 0;  // INT header + stack, not counting the shim (INT >= 2.0)
    // NPT 0: bits 8-13 may carry the original DSCP; NPT 1: the original UDP destination
    // port; NPT 2: the low byte is the original IP protocol.
    uint16_t nptField = 0;

    // INT-MD or INT-MX header
    uint8_t version = 0;
    bool discard = false;            // D
    bool maxHopExceeded = false;     // E (INT-MD only)
    bool mtuExceeded = false;        // M (INT-MD only)
    uint8_t hopMl = 0;               // per-hop metadata length, words (INT-MD only)
    uint8_t remainingHopCount = 0;   // INT-MD only
    uint16_t instructionBitmap = 0;  // bit 0 node id ... bit 15 checksum complement
    uint16_t domainSpecificId = 0;
    uint16_t dsInstruction = 0;
    uint16_t dsFlags = 0;

    std::vector<IntHop> hops;    // INT-MD stack, newest (last pushed) first
    size_t dsBytesPerHop = 0;    // domain specific metadata in each hop: not decoded
    size_t sourceOnlyBytes = 0;  // INT-MD: the source's extra DS metadata; INT-MX: its
                                 // source-inserted metadata. Not decoded.
    size_t payloadOffset = 0;    // first byte after the INT stack: what NPT says follows
};

std::variant<IntShimPacket, ParseError> parseIntShim(std::span<const uint8_t> payload);

}  // namespace twinrail::telemetry
