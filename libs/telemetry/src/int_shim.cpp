#include "twinrail/telemetry/int_shim.h"

#include "wire.h"

namespace twinrail::telemetry {
namespace {

using wire::bitSet;
using wire::hex16;
using wire::num;

constexpr size_t kShimBytes = 4;

ParseError fail(size_t offset, std::string field, std::string what) {
    return ParseError{offset, std::move(field), std::move(what)};
}

// One stack entry of `entryBytes` (>= the baseline size the bitmap asks for): bits 0-14,
// then domain specific metadata, then the checksum complement, which INT v2.1 puts last.
IntHop readEntry(wire::Reader& r, uint16_t bitmap, size_t entryBytes) {
    IntHop h;
    if (bitSet(bitmap, kBitNodeIdOrReserved)) {
        uint32_t id = r.u32();
        if (id != 0xffffffffu) h.nodeId = id;
    }
    wire::readBits1To14(r, bitmap, h);
    r.skip(entryBytes - wire::metadataBytes(bitmap));  // DS metadata: per domain, not decoded
    if (bitSet(bitmap, kBitDropOrChecksum)) h.checksumComplement = r.u32();
    return h;
}

}  // namespace

std::variant<IntShimPacket, ParseError> parseIntShim(std::span<const uint8_t> d) {
    if (d.size() < kShimBytes) {
        return fail(0, "shim", num(d.size()) + " bytes, shorter than the 4-byte INT shim header");
    }
    IntShimPacket p;
    p.type = static_cast<uint8_t>(d[0] >> 4);
    p.npt = static_cast<uint8_t>((d[0] >> 2) & 0x3);
    p.lengthWords = d[1];
    p.nptField = static_cast<uint16_t>((d[2] << 8) | d[3]);
    if (p.type == kShimTypeDestination) {
        return fail(0, "shim type", "2 (destination-type) has no format in INT v2.1");
    }
    if (p.type != kShimTypeMd && p.type != kShimTypeMx) {
        return fail(0, "shim type", num(p.type) + " is neither INT-MD (1) nor INT-MX (3)");
    }
    if (p.npt == 3) return fail(0, "shim npt", "3 is not defined (0, 1 or 2)");
    const size_t length = size_t{p.lengthWords} * 4;  // excludes the shim since INT 2.0
    if (length > d.size() - kShimBytes) {
        return fail(1, "shim length",
                    num(p.lengthWords) + " words (" + num(length) + " bytes), only " +
                        num(d.size() - kShimBytes) + " bytes follow the shim");
    }
    const char* header = p.type == kShimTypeMd ? "INT-MD" : "INT-MX";
    if (length < kIntHeaderBytes) {
        return fail(1, "shim length",
                    num(p.lengthWords) + " words cannot hold the 12-byte " + header + " header");
    }
    wire::Reader r(d.subspan(kShimBytes, length), kShimBytes);
    const uint32_t word = r.u32();
    p.version = static_cast<uint8_t>(word >> 28);
    if (p.version != kIntVersion) {
        return fail(kShimBytes, p.type == kShimTypeMd ? "md ver" : "mx ver",
                    std::string(header) + " version " + num(p.version) + ", expected 2");
    }
    p.discard = ((word >> 27) & 1) != 0;
    if (p.type == kShimTypeMd) {
        p.maxHopExceeded = ((word >> 26) & 1) != 0;
        p.mtuExceeded = ((word >> 25) & 1) != 0;
        p.hopMl = static_cast<uint8_t>((word >> 8) & 0x1f);
        p.remainingHopCount = static_cast<uint8_t>(word & 0xff);
    }
    p.instructionBitmap = r.u16();
    p.domainSpecificId = r.u16();
    p.dsInstruction = r.u16();
    p.dsFlags = r.u16();
    p.payloadOffset = kShimBytes + length;
    const size_t stack = length - kIntHeaderBytes;

    // Extra bytes that no hop length explains can only be 'source-only' (INT-MD) or
    // 'source-inserted' (INT-MX) domain specific metadata, which the source announces with
    // DS Instruction bits; without any, the lengths disagree.
    auto unexplained = [](const std::string& what) {
        return fail(1, "shim length",
                    what + ", and ds_instruction is 0 (no source-only metadata to explain it)");
    };
    if (p.type == kShimTypeMx) {
        if (stack != 0 && p.dsInstruction == 0) {
            return unexplained(num(stack) + " bytes follow the INT-MX header");
        }
        p.sourceOnlyBytes = stack;
        return p;
    }

    const size_t perHop = size_t{p.hopMl} * 4;
    const size_t baseline = wire::metadataBytes(p.instructionBitmap);
    if (perHop < baseline) {
        return fail(kShimBytes + 2, "hop_ml",
                    num(p.hopMl) + " words per hop, instruction bitmap " +
                        hex16(p.instructionBitmap) + " needs " + num(baseline) + " bytes");
    }
    // Hop ML above the bitmap's needs is domain specific metadata (or the padding a node
    // that does not know the domain must insert): sized by Hop ML, so still parseable.
    p.dsBytesPerHop = perHop - baseline;
    const size_t hops = perHop == 0 ? 0 : stack / perHop;
    const size_t rest = perHop == 0 ? stack : stack % perHop;
    if (rest != 0 && p.dsInstruction == 0) {
        return unexplained("a stack of " + num(stack) + " bytes is not a whole number of " +
                           num(perHop) + "-byte hops");
    }
    if (rest != 0 && hops == 0 && perHop != 0) {
        return fail(
            1, "shim length",
            "a stack of " + num(stack) + " bytes is shorter than one " + num(perHop) + "-byte hop");
    }
    // The source's entry (the oldest, at the bottom) carries the source-only metadata.
    // That this is all of `rest` assumes it is shorter than one hop; without knowing the
    // domain, a longer one cannot be told from one more hop.
    p.sourceOnlyBytes = rest;
    for (size_t i = 0; i < hops; ++i) {
        size_t entry = perHop + (i + 1 == hops ? rest : 0);
        p.hops.push_back(readEntry(r, p.instructionBitmap, entry));
    }
    if (!r.ok()) return fail(kShimBytes + kIntHeaderBytes, "stack", "metadata overran the stack");
    return p;
}

}  // namespace twinrail::telemetry
