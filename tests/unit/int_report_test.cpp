#include "twinrail/telemetry/int_report.h"

#include <gtest/gtest.h>

namespace twinrail::telemetry {
namespace {

// ports, hop latency, queue, egress tx util
constexpr uint16_t kBits = mdBit(1) | mdBit(2) | mdBit(3) | mdBit(7);

IntHop hop(uint16_t egress, uint32_t latency, uint32_t queue) {
    IntHop h;
    h.ingressPort = 1;
    h.egressPort = egress;
    h.hopLatency = latency;
    h.queueId = 3;
    h.queueOccupancy = queue;
    h.egressTxUtil = 850;
    return h;
}

const ParseError& errorOf(const std::variant<IntPacket, ParseError>& r) {
    static const ParseError kNone{0, "", "parsed"};
    const auto* e = std::get_if<ParseError>(&r);
    return e != nullptr ? *e : kNone;
}

const IntPacket& packetOf(const std::variant<IntPacket, ParseError>& r) {
    static const IntPacket kNone;
    const auto* p = std::get_if<IntPacket>(&r);
    return p != nullptr ? *p : kNone;
}

TEST(IntReport, RoundTripsTwoHopsAsTwoReports) {
    auto bytes = buildTelemetryReport(7, 42, kBits, {hop(5, 1200, 4000), hop(6, 300, 0)});
    auto r = parseTelemetryReport(bytes);
    ASSERT_TRUE(std::holds_alternative<IntPacket>(r)) << errorOf(r).str();
    const auto& p = packetOf(r);
    EXPECT_EQ(p.group.nodeId, 7u);
    EXPECT_EQ(p.group.sequence, 42u);
    ASSERT_EQ(p.reports.size(), 2u);  // one node's metadata per report, as the spec has it
    const IntHop& h = p.reports[0].metadata;
    EXPECT_EQ(h.nodeId, 7u);  // from the group header
    EXPECT_EQ(h.egressPort, 5);
    EXPECT_EQ(h.hopLatency, 1200u);
    EXPECT_EQ(h.queueOccupancy, 4000u);
    EXPECT_EQ(h.queueId, 3);
    EXPECT_EQ(h.egressTxUtil, 850u);
    EXPECT_FALSE(h.ingressTimestamp);
    EXPECT_EQ(p.reports[1].metadata.egressPort, 6);
    EXPECT_EQ(p.reports[1].offset, 8u + 28u);  // group header + one 28-byte report
}

TEST(IntReport, BuilderWritesTheSpecLayout) {
    IntHop h;
    h.ingressPort = 4;
    h.egressPort = 511;
    h.dropQueueId = 2;
    h.dropReason = 80;
    ReportOptions o;
    o.hwId = 5;
    o.dropped = true;
    auto bytes = buildTelemetryReport(10000, 3, mdBit(0) | mdBit(1) | mdBit(15), {h}, o);
    const std::vector<uint8_t> want = {
        0x21, 0x40, 0x00, 0x03, 0x00, 0x00, 0x27, 0x10,  // ver 2, hw_id 5, seq 3, node 10000
        0x10, 0x05, 0x03, 0x80,                          // INT, InType none, 5 + 3 words, D
        0xc0, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // RepMdBits 0xc001, default domain
        0x00, 0x00, 0x00, 0x00,                          // bit 0: reserved, zero
        0x00, 0x04, 0x01, 0xff,                          // bit 1: ports 4 / 511
        0x02, 0x50, 0x00, 0x00};                         // bit 15: queue 2, reason 80, pad
    EXPECT_EQ(bytes, want);
    auto r = parseTelemetryReport(bytes);
    ASSERT_TRUE(std::holds_alternative<IntPacket>(r)) << errorOf(r).str();
    const IntReport& rep = packetOf(r).reports.at(0);
    EXPECT_TRUE(rep.dropped);
    EXPECT_EQ(packetOf(r).group.hwId, 5);
    EXPECT_EQ(rep.metadata.dropQueueId, 2);
    EXPECT_EQ(rep.metadata.dropReason, 80);
    EXPECT_EQ(rep.metadata.dropPadding, 0);
}

TEST(IntReport, AllOnesMeansUnavailable) {
    IntHop h = hop(5, 0xffffffff, 0xffffff);
    auto r = parseTelemetryReport(buildTelemetryReport(7, 1, kBits | mdBit(15), {h}));
    ASSERT_TRUE(std::holds_alternative<IntPacket>(r)) << errorOf(r).str();
    const IntHop& got = packetOf(r).reports.at(0).metadata;
    EXPECT_FALSE(got.hopLatency);
    EXPECT_FALSE(got.queueOccupancy);
    EXPECT_EQ(got.queueId, 3);     // per sub-field: the queue id next to it still counts
    EXPECT_FALSE(got.dropReason);  // no drop values: the whole drop word is all ones
    EXPECT_FALSE(got.dropPadding);
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
    EXPECT_EQ(errorOf(parseTelemetryReport(bytes)).field, "ver");
    EXPECT_NE(errorOf(parseTelemetryReport(bytes)).what.find("version 1"), std::string::npos);
    std::vector<uint8_t> big(kMaxReportBytes + 1, 0x20);
    EXPECT_NE(errorOf(parseTelemetryReport(big)).what.find("exceeds"), std::string::npos);
}

TEST(IntReport, RejectsLengthsThatDisagree) {
    auto bytes = buildTelemetryReport(7, 1, kBits, {hop(5, 1, 1)});
    auto longer = bytes;
    longer[9] = static_cast<uint8_t>(longer[9] + 1);  // report length one word too long
    EXPECT_EQ(errorOf(parseTelemetryReport(longer)).field, "report_length");
    EXPECT_EQ(errorOf(parseTelemetryReport(longer)).offset, 9u);
    auto mdShort = bytes;
    mdShort[10] = static_cast<uint8_t>(mdShort[10] - 1);  // less than RepMdBits needs
    EXPECT_EQ(errorOf(parseTelemetryReport(mdShort)).field, "rep_md_bits");
    auto mdTooBig = bytes;
    mdTooBig[10] = 200;
    EXPECT_EQ(errorOf(parseTelemetryReport(mdTooBig)).field, "md_length");
    EXPECT_EQ(errorOf(parseTelemetryReport(mdTooBig)).offset, 10u);
    // One more word in md_length and in the report, but no DSMdBits to explain it.
    auto unexplained = bytes;
    unexplained[9] = static_cast<uint8_t>(unexplained[9] + 1);
    unexplained[10] = static_cast<uint8_t>(unexplained[10] + 1);
    unexplained.insert(unexplained.end(), 4, 0);
    EXPECT_EQ(errorOf(parseTelemetryReport(unexplained)).field, "md_length");
}

TEST(IntReport, IntReportNeedsItsMainContents) {
    auto bytes = buildTelemetryReport(7, 1, 0, {});
    bytes[9] = 0;  // report length 0 (as bmv2's int_sink.p4 sends): no room for 8 bytes
    auto r = parseTelemetryReport(bytes);
    EXPECT_EQ(errorOf(r).field, "report_length");
    EXPECT_EQ(errorOf(r).offset, 9u);
}

TEST(IntReport, ReportLength0xFFRunsToTheEndOfTheDatagram) {
    auto bytes = buildTelemetryReport(7, 1, kBits, {hop(5, 1, 1)});
    bytes[9] = kReportLengthToEnd;
    // What follows, even what looks like another report, is this report's inner contents.
    auto second = buildTelemetryReport(7, 1, kBits, {hop(6, 1, 1)});
    bytes.insert(bytes.end(), second.begin() + 8, second.end());
    bytes.push_back(0xab);  // and it need not end on a word
    auto r = parseTelemetryReport(bytes);
    ASSERT_TRUE(std::holds_alternative<IntPacket>(r)) << errorOf(r).str();
    ASSERT_EQ(packetOf(r).reports.size(), 1u);
    const IntReport& rep = packetOf(r).reports[0];
    EXPECT_EQ(rep.reportLength, 0xff);
    EXPECT_EQ(rep.innerBytes, second.size() - 8 + 1);
    EXPECT_EQ(rep.innerOffset + rep.innerBytes, bytes.size());
    EXPECT_EQ(rep.metadata.egressPort, 5);
}

TEST(IntReport, ReservedBitsAreFourOctetsEachAndSkipped) {
    IntHop h;
    h.egressPort = 9;
    h.dropQueueId = 1;
    h.dropReason = 12;
    auto bytes =
        buildTelemetryReport(0x100, 1, mdBit(0) | mdBit(1) | mdBit(9) | mdBit(14) | mdBit(15), {h});
    // bit 0 is not a node id in a report: whatever it holds, the node is the group's.
    bytes[20] = 0xde;
    bytes[21] = 0xad;
    auto r = parseTelemetryReport(bytes);
    ASSERT_TRUE(std::holds_alternative<IntPacket>(r)) << errorOf(r).str();
    const IntHop& got = packetOf(r).reports.at(0).metadata;
    EXPECT_EQ(got.nodeId, 0x100u);
    EXPECT_EQ(got.egressPort, 9);
    EXPECT_EQ(got.dropQueueId, 1);  // found after the two reserved words
    EXPECT_EQ(got.dropReason, 12);
}

TEST(IntReport, DomainSpecificMetadataIsSizedByMdLength) {
    auto bytes = buildTelemetryReport(7, 1, mdBit(2), {hop(5, 100, 1)});
    bytes[9] = static_cast<uint8_t>(bytes[9] + 2);
    bytes[10] = static_cast<uint8_t>(bytes[10] + 2);  // 8 bytes of DS metadata
    bytes[14] = 0x12;                                 // domain 0x1234
    bytes[15] = 0x34;
    bytes[16] = 0x80;  // one DSMdBits bit (4 octets or a multiple)
    bytes.insert(bytes.end(), {1, 2, 3, 4, 5, 6, 7, 8});
    auto r = parseTelemetryReport(bytes);
    ASSERT_TRUE(std::holds_alternative<IntPacket>(r)) << errorOf(r).str();
    const IntReport& rep = packetOf(r).reports.at(0);
    EXPECT_EQ(rep.domainSpecificId, 0x1234);
    EXPECT_EQ(rep.dsMetadataBytes, 8u);
    EXPECT_EQ(rep.dsMetadataOffset, bytes.size() - 8);
    EXPECT_EQ(rep.innerBytes, 0u);
    EXPECT_EQ(rep.metadata.hopLatency, 100u);
    bytes[16] = 0xe0;  // three bits need at least 12 bytes
    EXPECT_EQ(errorOf(parseTelemetryReport(bytes)).field, "ds_md_bits");
}

TEST(IntReport, KeepsReportsOfOtherTypesUnread) {
    auto bytes = buildTelemetryReport(7, 1, kBits, {hop(5, 1, 1)});
    // An IOAM report (type 2, no main contents format yet) and an Inner Only report whose
    // md_length must be ignored, before the INT report.
    std::vector<uint8_t> other = {0x20, 1, 0, 0,    0xde, 0xad, 0xbe, 0xef,
                                  0x03, 1, 9, 0x20, 0x02, 0x00, 0x00, 0x01};
    bytes.insert(bytes.begin() + 8, other.begin(), other.end());
    auto r = parseTelemetryReport(bytes);
    ASSERT_TRUE(std::holds_alternative<IntPacket>(r)) << errorOf(r).str();
    const auto& reps = packetOf(r).reports;
    ASSERT_EQ(reps.size(), 3u);
    EXPECT_EQ(reps[0].repType, kRepTypeIoam);
    EXPECT_EQ(reps[0].innerOffset, 12u);
    EXPECT_EQ(reps[0].innerBytes, 4u);
    EXPECT_EQ(reps[1].repType, kRepTypeInnerOnly);
    EXPECT_EQ(reps[1].inType, kInTypeEthernet);
    EXPECT_EQ(reps[1].mdLength, 9);
    EXPECT_TRUE(reps[1].trackedFlow);
    EXPECT_EQ(reps[1].innerBytes, 4u);
    EXPECT_EQ(reps[2].metadata.egressPort, 5);
}

TEST(IntReport, GroupHeaderReaderNeedsOnlyTheHeader) {
    auto bytes = buildTelemetryReport(0xa0b0c0d, 0x2abcde, 0, {}, ReportOptions{42});
    bytes.resize(8);
    EXPECT_EQ(errorOf(parseTelemetryReport(bytes)).field, "individual report header");
    auto g = parseReportGroupHeader(bytes);
    ASSERT_TRUE(std::holds_alternative<ReportGroupHeader>(g));
    EXPECT_EQ(std::get<ReportGroupHeader>(g).hwId, 42);
    EXPECT_EQ(std::get<ReportGroupHeader>(g).sequence, 0x2abcdeu);
    EXPECT_EQ(std::get<ReportGroupHeader>(g).nodeId, 0xa0b0c0du);
    bytes.resize(7);
    EXPECT_TRUE(std::holds_alternative<ParseError>(parseReportGroupHeader(bytes)));
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
            EXPECT_LE(p->reports.size() * 4, bytes.size());  // never more data than was sent
            for (const auto& rep : p->reports) {
                EXPECT_LE(rep.innerOffset + rep.innerBytes, bytes.size());
                EXPECT_LE(rep.dsMetadataOffset + rep.dsMetadataBytes, bytes.size());
            }
        } else {
            EXPECT_LE(std::get<ParseError>(r).offset, bytes.size());
            EXPECT_FALSE(std::get<ParseError>(r).field.empty());
        }
    }
    EXPECT_LT(parsed, 20000);  // most garbage is refused
}

}  // namespace
}  // namespace twinrail::telemetry
