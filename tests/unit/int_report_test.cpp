#include <gtest/gtest.h>

#include "twinrail/telemetry/int_report.h"

namespace twinrail::telemetry {
namespace {

// node id, ports, hop latency, queue, egress tx util
constexpr uint16_t kBits = 0x8000 | 0x4000 | 0x2000 | 0x1000 | 0x0100;

IntHop hop(uint16_t egress, uint32_t latency, uint32_t queue) {
    IntHop h;
    h.nodeId = 7;
    h.ingressPort = 1;
    h.egressPort = egress;
    h.hopLatency = latency;
    h.queueId = 3;
    h.queueOccupancy = queue;
    h.egressTxUtil = 850;
    return h;
}

const ParseError& errorOf(const std::variant<IntPacket, ParseError>& r) {
    static const ParseError kNone{0, "parsed"};
    const auto* e = std::get_if<ParseError>(&r);
    return e != nullptr ? *e : kNone;
}

TEST(IntReport, RoundTripsTwoHops) {
    auto bytes = buildTelemetryReport(7, 42, kBits, {hop(5, 1200, 4000), hop(6, 300, 0)});
    auto r = parseTelemetryReport(bytes);
    ASSERT_TRUE(std::holds_alternative<IntPacket>(r)) << errorOf(r).str();
    const auto& p = std::get<IntPacket>(r);
    EXPECT_EQ(p.nodeId, 7u);
    EXPECT_EQ(p.sequence, 42u);
    ASSERT_EQ(p.hops.size(), 2u);
    EXPECT_EQ(p.hops[0].egressPort, 5);
    EXPECT_EQ(p.hops[0].hopLatency, 1200u);
    EXPECT_EQ(p.hops[0].queueOccupancy, 4000u);
    EXPECT_EQ(p.hops[0].queueId, 3);
    EXPECT_EQ(p.hops[0].egressTxUtil, 850u);
    EXPECT_FALSE(p.hops[0].ingressTimestamp);
}

TEST(IntReport, AllOnesMeansUnavailable) {
    IntHop h = hop(5, 0xffffffff, 0xffffff);
    auto r = parseTelemetryReport(buildTelemetryReport(7, 1, kBits, {h}));
    ASSERT_TRUE(std::holds_alternative<IntPacket>(r));
    EXPECT_FALSE(std::get<IntPacket>(r).hops[0].hopLatency);
    EXPECT_FALSE(std::get<IntPacket>(r).hops[0].queueOccupancy);
}

TEST(IntReport, RejectsEveryTruncation) {
    auto bytes = buildTelemetryReport(7, 1, kBits, {hop(5, 1, 1)});
    for (size_t len = 0; len < bytes.size(); ++len) {
        auto r = parseTelemetryReport(std::span<const uint8_t>(bytes.data(), len));
        EXPECT_TRUE(std::holds_alternative<ParseError>(r)) << "length " << len;
    }
}

TEST(IntReport, RejectsWrongVersionAndOversize) {
    auto bytes = buildTelemetryReport(7, 1, kBits, {hop(5, 1, 1)});
    bytes[0] = static_cast<uint8_t>((1 << 4) | (bytes[0] & 0x0f));
    EXPECT_NE(errorOf(parseTelemetryReport(bytes)).what.find("version 1"), std::string::npos);
    std::vector<uint8_t> big(kMaxReportBytes + 1, 0);
    EXPECT_NE(errorOf(parseTelemetryReport(big)).what.find("exceeds"), std::string::npos);
}

TEST(IntReport, RejectsLengthsThatDisagree) {
    auto bytes = buildTelemetryReport(7, 1, kBits, {hop(5, 1, 1)});
    auto longer = bytes;
    longer[9] = static_cast<uint8_t>(longer[9] + 1);  // report length one word too long
    EXPECT_NE(errorOf(parseTelemetryReport(longer)).what.find("left"), std::string::npos);
    auto misaligned = bytes;
    misaligned[10] = static_cast<uint8_t>(misaligned[10] - 1);  // md length not whole hops
    EXPECT_NE(errorOf(parseTelemetryReport(misaligned)).what.find("whole number"),
              std::string::npos);
    auto mdTooBig = bytes;
    mdTooBig[10] = 200;
    EXPECT_NE(errorOf(parseTelemetryReport(mdTooBig)).what.find("cannot hold"), std::string::npos);
}

TEST(IntReport, RejectsReservedInstructionBits) {
    auto bytes = buildTelemetryReport(7, 1, 0x8000 | 0x0040, {});  // bit 9 is reserved
    bytes[10] = 1;                                                 // claim one word of metadata
    bytes[9] = 3;
    bytes.insert(bytes.end(), 4, 0);
    EXPECT_NE(errorOf(parseTelemetryReport(bytes)).what.find("reserved"), std::string::npos);
}

TEST(IntReport, SkipsOtherReportTypesAndReadsTheRest) {
    auto bytes = buildTelemetryReport(7, 1, kBits, {hop(5, 1, 1)});
    // Insert a 1-word "drop report" (type 2) before the INT report.
    std::vector<uint8_t> other = {0x20, 1, 0, 0, 0xde, 0xad, 0xbe, 0xef};
    bytes.insert(bytes.begin() + 8, other.begin(), other.end());
    auto r = parseTelemetryReport(bytes);
    ASSERT_TRUE(std::holds_alternative<IntPacket>(r)) << errorOf(r).str();
    EXPECT_EQ(std::get<IntPacket>(r).otherReports, 1u);
    EXPECT_EQ(std::get<IntPacket>(r).hops.size(), 1u);
}

TEST(IntReport, GarbageNeverCrashes) {
    uint32_t seed = 12345;
    int parsed = 0;
    for (int i = 0; i < 20000; ++i) {
        std::vector<uint8_t> bytes(seed % 200);
        for (auto& b : bytes) {
            seed = seed * 1103515245 + 12345;
            b = static_cast<uint8_t>(seed >> 16);
        }
        if (!bytes.empty())
            bytes[0] = static_cast<uint8_t>(0x20 | (bytes[0] & 0x0f));  // right version
        auto r = parseTelemetryReport(bytes);
        if (const auto* p = std::get_if<IntPacket>(&r)) {
            ++parsed;
            EXPECT_LE(p->hops.size() * 4, bytes.size());  // never more data than was sent
        }
    }
    EXPECT_LT(parsed, 20000);  // most garbage is refused
}

}  // namespace
}  // namespace twinrail::telemetry
