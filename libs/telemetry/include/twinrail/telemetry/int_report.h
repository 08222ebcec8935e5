// P4.org Telemetry Report v2.0, as sent by INT-capable switches to a collector over UDP
// (the UDP payload starts at the group header). Network byte order throughout. Layout,
// the length rules and the choices made where the spec is silent: proto/int_report.md.
//
// The parser trusts nothing: every length is checked against what is left of the
// datagram (and of the individual report) before it is used, and any violation rejects
// the whole datagram with the offset and the field that was wrong. It never reads
// outside the buffer, and it does not use exceptions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <variant>
#include <vector>

#include "twinrail/telemetry/int_metadata.h"

namespace twinrail::telemetry {

inline constexpr size_t kMaxReportBytes = 4096;  // larger datagrams are rejected unread
inline constexpr uint8_t kReportVersion = 2;
inline constexpr uint8_t kReportLengthToEnd = 0xff;  // runs to the end of the datagram

// RepType
inline constexpr uint8_t kRepTypeInnerOnly = 0;
inline constexpr uint8_t kRepTypeInt = 1;
inline constexpr uint8_t kRepTypeIoam = 2;

// InType
inline constexpr uint8_t kInTypeNone = 0;
inline constexpr uint8_t kInTypeTlv = 1;
inline constexpr uint8_t kInTypeDsExtension = 2;
inline constexpr uint8_t kInTypeEthernet = 3;
inline constexpr uint8_t kInTypeIpv4 = 4;
inline constexpr uint8_t kInTypeIpv6 = 5;

// The 8-byte group header: at most one per datagram, first.
struct ReportGroupHeader {
    uint8_t version = 0;
    uint8_t hwId = 0;       // 6 bits
    uint32_t sequence = 0;  // 22 bits
    uint32_t nodeId = 0;
};

// One individual report. Offsets are into the datagram.
struct IntReport {
    size_t offset = 0;  // of the individual report header
    uint8_t repType = 0;
    uint8_t inType = 0;
    uint8_t reportLength = 0;     // as sent: words after the header's first word, 0xFF = to the end
    uint8_t mdLength = 0;         // as sent: words of metadata after the 8-byte main contents
    bool dropped = false;         // D
    bool congestedQueue = false;  // Q
    bool trackedFlow = false;     // F
    bool intermediate = false;    // I
    uint8_t reserved = 0;         // the 4 Rsvd bits, ignored on reception as the spec says
    // RepType 1 (INT) main contents; zero for other types.
    uint16_t repMdBits = 0;
    uint16_t domainSpecificId = 0;
    uint16_t dsMdBits = 0;
    uint16_t dsMdStatus = 0;
    IntHop metadata;                                   // nodeId is the group header's node id
    size_t dsMetadataOffset = 0, dsMetadataBytes = 0;  // not decoded: per domain
    // After the main contents: the truncated packet (InType 3-5), TLVs (1) or domain
    // specific extension data (2). For Inner Only reports, the whole body; for IOAM and
    // reserved report types (whose main contents have no format yet), the whole body, unread.
    size_t innerOffset = 0, innerBytes = 0;
};

struct IntPacket {
    ReportGroupHeader group;
    std::vector<IntReport> reports;  // every individual report, in order
};

// Reads only the group header (the 8 bytes that identify the sender), e.g. to account a
// datagram whose reports are refused by parseTelemetryReport.
std::variant<ReportGroupHeader, ParseError> parseReportGroupHeader(
    std::span<const uint8_t> datagram);

std::variant<IntPacket, ParseError> parseTelemetryReport(std::span<const uint8_t> datagram);

struct ReportOptions {
    uint8_t hwId = 0;
    bool dropped = false, congestedQueue = false, trackedFlow = false, intermediate = false;
};

// Builds one group from `nodeId` holding one INT report (InType None) per hop, each with
// the metadata `mdBits` asks for, for tests and the lab's traffic tools. Per the spec:
// bit 0 and bits 9-14 are reserved and written as 4 zero bytes, bit 15 carries
// dropQueueId + dropReason + zero padding; IntHop::nodeId is not sent (the node id is in
// the group header). Missing values are sent as all ones. With no hops, the group holds
// one INT report with no metadata (a group must hold at least one report).
std::vector<uint8_t> buildTelemetryReport(uint32_t nodeId, uint32_t sequence, uint16_t mdBits,
                                          const std::vector<IntHop>& hops,
                                          const ReportOptions& options = {});

}  // namespace twinrail::telemetry
