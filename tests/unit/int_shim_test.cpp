#include "twinrail/telemetry/int_shim.h"

#include <gtest/gtest.h>

namespace twinrail::telemetry {
namespace {

void put(std::vector<uint8_t>& out, uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// An INT over UDP payload laid out by hand from INT v2.1, so the parser is checked
// against the spec rather than against a builder of its own.
struct Md {
    uint8_t type = kShimTypeMd;
    uint8_t npt = 1;
    uint16_t nptField = 4791;
    bool d = false, e = false, m = false;
    uint8_t hopMl = 0;
    uint8_t remaining = 5;
    uint16_t bitmap = 0;
    uint16_t dsId = 0, dsInstruction = 0, dsFlags = 0;
    std::vector<uint8_t> stack;
    std::vector<uint8_t> payload = {0xaa, 0xbb};
};

std::vector<uint8_t> build(const Md& md) {
    std::vector<uint8_t> out;
    out.push_back(static_cast<uint8_t>((md.type << 4) | (md.npt << 2)));
    out.push_back(static_cast<uint8_t>((kIntHeaderBytes + md.stack.size()) / 4));
    put(out, md.nptField, 2);
    put(out,
        (uint64_t{2} << 28) | (uint64_t{md.d} << 27) | (uint64_t{md.e} << 26) |
            (uint64_t{md.m} << 25) | (uint64_t{md.hopMl} << 8) | md.remaining,
        4);
    put(out, md.bitmap, 2);
    put(out, md.dsId, 2);
    put(out, md.dsInstruction, 2);
    put(out, md.dsFlags, 2);
    out.insert(out.end(), md.stack.begin(), md.stack.end());
    out.insert(out.end(), md.payload.begin(), md.payload.end());
    return out;
}

// Bits 0 (node id), 1 (ports), 2 (hop latency): 12 bytes a hop.
constexpr uint16_t kBits = mdBit(0) | mdBit(1) | mdBit(2);
void entry(std::vector<uint8_t>& s, uint32_t node, uint16_t in, uint16_t out, uint32_t lat) {
    put(s, node, 4);
    put(s, in, 2);
    put(s, out, 2);
    put(s, lat, 4);
}

const ParseError& errorOf(const std::variant<IntShimPacket, ParseError>& r) {
    static const ParseError kNone{0, "", "parsed"};
    const auto* e = std::get_if<ParseError>(&r);
    return e != nullptr ? *e : kNone;
}

const IntShimPacket& packetOf(const std::variant<IntShimPacket, ParseError>& r) {
    static const IntShimPacket kNone;
    const auto* p = std::get_if<IntShimPacket>(&r);
    return p != nullptr ? *p : kNone;
}

Md twoHops() {
    Md md;
    md.hopMl = 3;
    md.bitmap = kBits;
    entry(md.stack, 0x20, 3, 4, 700);  // newest first: the last hop pushed is on top
    entry(md.stack, 0x10, 1, 2, 900);
    return md;
}

TEST(IntShim, ParsesAnIntMdStackNewestFirst) {
    Md md = twoHops();
    md.e = true;
    auto bytes = build(md);
    auto r = parseIntShim(bytes);
    ASSERT_TRUE(std::holds_alternative<IntShimPacket>(r)) << errorOf(r).str();
    const auto& p = packetOf(r);
    EXPECT_EQ(p.type, kShimTypeMd);
    EXPECT_EQ(p.npt, 1);
    EXPECT_EQ(p.nptField, 4791);  // NPT 1: the original UDP destination port
    EXPECT_EQ(p.lengthWords, 9);  // 12-byte header + 24-byte stack; the shim not counted
    EXPECT_TRUE(p.maxHopExceeded);
    EXPECT_FALSE(p.discard);
    EXPECT_EQ(p.hopMl, 3);
    EXPECT_EQ(p.remainingHopCount, 5);
    ASSERT_EQ(p.hops.size(), 2u);
    EXPECT_EQ(p.hops[0].nodeId, 0x20u);
    EXPECT_EQ(p.hops[0].egressPort, 4);
    EXPECT_EQ(p.hops[1].nodeId, 0x10u);
    EXPECT_EQ(p.hops[1].hopLatency, 900u);
    EXPECT_FALSE(p.hops[1].queueId);
    EXPECT_EQ(p.payloadOffset, bytes.size() - 2);
}

TEST(IntShim, ChecksumComplementComesAfterDomainSpecificMetadata) {
    Md md;
    md.bitmap = mdBit(0) | mdBit(15);
    md.hopMl = 3;  // node id + 4 bytes of DS metadata + checksum complement
    md.dsId = 0x77;
    md.dsInstruction = 0x8000;
    put(md.stack, 9, 4);
    put(md.stack, 0xdddddddd, 4);
    put(md.stack, 0x1234abcd, 4);
    auto r = parseIntShim(build(md));
    ASSERT_TRUE(std::holds_alternative<IntShimPacket>(r)) << errorOf(r).str();
    const auto& p = packetOf(r);
    EXPECT_EQ(p.dsBytesPerHop, 4u);
    ASSERT_EQ(p.hops.size(), 1u);
    EXPECT_EQ(p.hops[0].nodeId, 9u);
    EXPECT_EQ(p.hops[0].checksumComplement, 0x1234abcdu);
}

TEST(IntShim, SourceOnlyMetadataSitsInTheSourcesEntry) {
    Md md;
    md.bitmap = mdBit(0) | mdBit(15);
    md.hopMl = 2;
    md.dsId = 0x77;
    md.dsInstruction = 0x0001;  // the domain's source-only bit
    put(md.stack, 2, 4);        // transit hop
    put(md.stack, 0xc0, 4);
    put(md.stack, 1, 4);           // the source: node id,
    put(md.stack, 0x55555555, 4);  // 4 bytes of source-only metadata,
    put(md.stack, 0xc1, 4);        // then its checksum complement
    auto r = parseIntShim(build(md));
    ASSERT_TRUE(std::holds_alternative<IntShimPacket>(r)) << errorOf(r).str();
    const auto& p = packetOf(r);
    EXPECT_EQ(p.sourceOnlyBytes, 4u);
    ASSERT_EQ(p.hops.size(), 2u);
    EXPECT_EQ(p.hops[1].nodeId, 1u);
    EXPECT_EQ(p.hops[1].checksumComplement, 0xc1u);
    md.dsInstruction = 0;  // without DS bits the extra word cannot be explained
    EXPECT_EQ(errorOf(parseIntShim(build(md))).field, "shim length");
}

TEST(IntShim, ReservedInstructionBitsAreFourOctets) {
    Md md;
    md.bitmap = mdBit(0) | mdBit(10) | mdBit(1);
    md.hopMl = 3;
    put(md.stack, 5, 4);
    put(md.stack, 0x00070008, 4);  // bit 1 comes before bit 10
    put(md.stack, 0xffffffff, 4);  // what a transit hop inserts for a reserved bit
    auto r = parseIntShim(build(md));
    ASSERT_TRUE(std::holds_alternative<IntShimPacket>(r)) << errorOf(r).str();
    EXPECT_EQ(packetOf(r).hops.at(0).egressPort, 8);
}

TEST(IntShim, ParsesAnIntMxHeader) {
    Md md;
    md.type = kShimTypeMx;
    md.npt = 0;
    md.nptField = 0x5c;  // NPT 0: DSCP in bits 8-13
    md.d = true;
    md.bitmap = 0xfe00;
    auto r = parseIntShim(build(md));
    ASSERT_TRUE(std::holds_alternative<IntShimPacket>(r)) << errorOf(r).str();
    const auto& p = packetOf(r);
    EXPECT_EQ(p.type, kShimTypeMx);
    EXPECT_TRUE(p.discard);
    EXPECT_EQ(p.instructionBitmap, 0xfe00);
    EXPECT_TRUE(p.hops.empty());
    EXPECT_EQ(p.payloadOffset, 16u);
    md.stack = {0, 0, 0, 1};  // source-inserted metadata needs DS bits
    EXPECT_EQ(errorOf(parseIntShim(build(md))).field, "shim length");
}

TEST(IntShim, RejectsWhatDoesNotAddUp) {
    auto bytes = build(twoHops());
    auto check = [](std::vector<uint8_t> b, size_t offset, const std::string& field) {
        auto r = parseIntShim(b);
        EXPECT_EQ(errorOf(r).field, field) << errorOf(r).str();
        EXPECT_EQ(errorOf(r).offset, offset) << errorOf(r).str();
    };
    auto b = bytes;
    b[1] = 40;  // longer than the payload
    check(b, 1, "shim length");
    b[1] = 2;  // cannot hold the 12-byte header
    check(b, 1, "shim length");
    b = bytes;
    b[1] = 8;  // 20-byte stack: not a whole number of 12-byte hops
    check(b, 1, "shim length");
    b = bytes;
    b[6] = 2;  // Hop ML 2 words < the 12 bytes the bitmap asks for
    check(b, 6, "hop_ml");
    b = bytes;
    b[4] = 0x10;  // INT-MD version 1
    check(b, 4, "md ver");
    b = bytes;
    b[0] = 0x20;  // destination-type header: no format in v2.1
    check(b, 0, "shim type");
    b[0] = 0x40;
    check(b, 0, "shim type");
    b[0] = 0x1c;  // NPT 3
    check(b, 0, "shim npt");
    check({0x10, 0}, 0, "shim");
}

TEST(IntShim, RejectsEveryTruncation) {
    Md md = twoHops();
    md.payload.clear();
    auto bytes = build(md);
    for (size_t len = 0; len < bytes.size(); ++len) {
        auto r = parseIntShim(std::span<const uint8_t>(bytes.data(), len));
        EXPECT_TRUE(std::holds_alternative<ParseError>(r)) << "length " << len;
    }
}

TEST(IntShim, GarbageNeverCrashes) {
    uint32_t seed = 777;
    int parsed = 0;
    for (int i = 0; i < 20000; ++i) {
        std::vector<uint8_t> bytes(seed % 160);
        for (auto& b : bytes) {
            seed = seed * 1103515245 + 12345;
            b = static_cast<uint8_t>(seed >> 16);
        }
        if (bytes.size() > 4) {
            bytes[0] = static_cast<uint8_t>(i % 2 == 0 ? 0x10 : 0x30);
            bytes[1] = static_cast<uint8_t>(bytes[1] % 40);
            bytes[4] = static_cast<uint8_t>(0x20 | (bytes[4] & 0x0f));
        }
        auto r = parseIntShim(bytes);
        if (const auto* p = std::get_if<IntShimPacket>(&r)) {
            ++parsed;
            EXPECT_LE(p->payloadOffset, bytes.size());
            EXPECT_LE(p->hops.size() * 4, bytes.size());
        } else {
            EXPECT_LE(std::get<ParseError>(r).offset, bytes.size());
        }
    }
    EXPECT_GT(parsed, 0);  // the shaping above lets some through, so both paths run
    EXPECT_LT(parsed, 20000);
}

}  // namespace
}  // namespace twinrail::telemetry
