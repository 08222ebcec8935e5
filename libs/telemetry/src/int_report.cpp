#include "twinrail/telemetry/int_report.h"

#include <bit>

#include "wire.h"

namespace twinrail::telemetry {
namespace {

using wire::bitSet;
using wire::hex16;
using wire::num;

constexpr size_t kGroupHeaderBytes = 8;
constexpr size_t kReportHeaderBytes = 4;
constexpr size_t kIntMainBytes = 8;  // RepMdBits, Domain Specific ID, DSMdBits, DSMdstatus

ParseError fail(size_t offset, std::string field, std::string what) {
    return ParseError{offset, std::move(field), std::move(what)};
}

// The INT main contents of `rep`, whose body is [bodyStart, bodyStart + body) of `d`.
// Returns an error, or nothing when the report was read.
std::optional<ParseError> readIntBody(std::span<const uint8_t> d, size_t bodyStart, size_t body,
                                      uint32_t nodeId, IntReport& rep) {
    const size_t start = rep.offset;
    if (body < kIntMainBytes) {
        return fail(start + 1, "report_length",
                    num(rep.reportLength) + " words, short of the 8-byte INT main contents");
    }
    const size_t mdBytes = size_t{rep.mdLength} * 4;
    if (mdBytes > body - kIntMainBytes) {
        return fail(start + 2, "md_length",
                    num(rep.mdLength) + " words (" + num(mdBytes) + " bytes) exceed the " +
                        num(body - kIntMainBytes) +
                        " bytes of the report after its 8-byte main contents");
    }
    wire::Reader r(d.subspan(bodyStart, body), bodyStart);
    rep.repMdBits = r.u16();
    rep.domainSpecificId = r.u16();
    rep.dsMdBits = r.u16();
    rep.dsMdStatus = r.u16();
    const size_t baseline = wire::metadataBytes(rep.repMdBits);
    if (baseline > mdBytes) {
        return fail(bodyStart, "rep_md_bits",
                    hex16(rep.repMdBits) + " asks for " + num(baseline) +
                        " bytes of metadata, md_length gives " + num(mdBytes));
    }
    // MD Length "must be derived" from RepMdBits and DSMdBits, and each DSMdBits bit is
    // 4 octets or a multiple: so without DS bits there is no DS metadata, and with them
    // at least 4 octets a bit. Anything else is a length we cannot trust.
    const size_t ds = mdBytes - baseline;
    const size_t dsMin = size_t{4} * static_cast<size_t>(std::popcount(rep.dsMdBits));
    if (rep.dsMdBits == 0 && ds != 0) {
        return fail(start + 2, "md_length",
                    num(mdBytes) + " bytes of metadata, rep_md_bits " + hex16(rep.repMdBits) +
                        " accounts for " + num(baseline) + " and ds_md_bits is 0");
    }
    if (ds < dsMin) {
        return fail(bodyStart + 4, "ds_md_bits",
                    hex16(rep.dsMdBits) + " needs at least " + num(dsMin) +
                        " bytes, md_length leaves " + num(ds) + " after the baseline metadata");
    }
    IntHop& h = rep.metadata;
    h.nodeId = nodeId;  // report bit 0 is reserved: the node is the group header's
    if (bitSet(rep.repMdBits, kBitNodeIdOrReserved)) r.skip(4);
    wire::readBits1To14(r, rep.repMdBits, h);
    if (bitSet(rep.repMdBits, kBitDropOrChecksum)) {
        // One 4-byte word: unavailable only as a whole (all ones), like any INT word.
        uint32_t word = r.u32();
        if (word != 0xffffffffu) {
            h.dropQueueId = static_cast<uint8_t>(word >> 24);
            h.dropReason = static_cast<uint8_t>(word >> 16);
            h.dropPadding = static_cast<uint16_t>(word);
        }
    }
    rep.dsMetadataOffset = r.offset();
    rep.dsMetadataBytes = ds;
    rep.innerOffset = bodyStart + kIntMainBytes + mdBytes;
    rep.innerBytes = body - kIntMainBytes - mdBytes;
    if (!r.ok()) return fail(bodyStart, "rep_md_bits", "metadata overran the report");
    return std::nullopt;
}

}  // namespace

std::variant<ReportGroupHeader, ParseError> parseReportGroupHeader(std::span<const uint8_t> d) {
    if (d.size() < kGroupHeaderBytes) {
        return fail(0, "group header",
                    num(d.size()) + " bytes, shorter than the 8-byte group header");
    }
    wire::Reader r(d.first(kGroupHeaderBytes));
    ReportGroupHeader g;
    uint32_t word = r.u32();
    g.version = static_cast<uint8_t>(word >> 28);
    if (g.version != kReportVersion) {
        return fail(0, "ver", "report version " + num(g.version) + ", expected 2");
    }
    g.hwId = static_cast<uint8_t>((word >> 22) & 0x3f);
    g.sequence = word & 0x3fffff;
    g.nodeId = r.u32();
    return g;
}

std::variant<IntPacket, ParseError> parseTelemetryReport(std::span<const uint8_t> d) {
    if (d.size() > kMaxReportBytes) {
        return fail(0, "datagram",
                    num(d.size()) + " bytes exceeds the limit of " + num(kMaxReportBytes));
    }
    auto group = parseReportGroupHeader(d);
    if (auto* e = std::get_if<ParseError>(&group)) return std::move(*e);
    IntPacket p;
    p.group = std::get<ReportGroupHeader>(group);
    if (d.size() == kGroupHeaderBytes) {
        return fail(kGroupHeaderBytes, "individual report header",
                    "group header without any individual report (at least one is required)");
    }
    size_t off = kGroupHeaderBytes;
    while (off < d.size()) {
        IntReport rep;
        rep.offset = off;
        const size_t left = d.size() - off;
        if (left < kReportHeaderBytes) {
            return fail(off, "individual report header",
                        "truncated: " + num(left) + " of its 4 bytes");
        }
        rep.repType = static_cast<uint8_t>(d[off] >> 4);
        rep.inType = static_cast<uint8_t>(d[off] & 0x0f);
        rep.reportLength = d[off + 1];
        rep.mdLength = d[off + 2];
        rep.dropped = (d[off + 3] & 0x80) != 0;
        rep.congestedQueue = (d[off + 3] & 0x40) != 0;
        rep.trackedFlow = (d[off + 3] & 0x20) != 0;
        rep.intermediate = (d[off + 3] & 0x10) != 0;
        rep.reserved = static_cast<uint8_t>(d[off + 3] & 0x0f);
        const size_t bodyStart = off + kReportHeaderBytes;
        const size_t bodyLeft = d.size() - bodyStart;
        // 0xFF: ">= 0xFF words, to the end of the UDP payload; no further reports". The
        // lower bound is not enforced: the datagram is the authority on where it ends.
        size_t body = bodyLeft;
        if (rep.reportLength != kReportLengthToEnd) {
            body = size_t{rep.reportLength} * 4;
            if (body > bodyLeft) {
                return fail(off + 1, "report_length",
                            num(rep.reportLength) + " words (" + num(body) + " bytes), only " +
                                num(bodyLeft) + " bytes follow the report header");
            }
        }
        if (rep.repType == kRepTypeInt) {
            if (auto e = readIntBody(d, bodyStart, body, p.group.nodeId, rep)) return *e;
        } else {
            // Inner Only: no main contents, MD Length "ignored upon reception". IOAM and
            // reserved types: no main contents format exists yet, so the body stays unread.
            rep.innerOffset = bodyStart;
            rep.innerBytes = body;
        }
        p.reports.push_back(rep);
        off = bodyStart + body;
    }
    return p;
}

std::vector<uint8_t> buildTelemetryReport(uint32_t nodeId, uint32_t sequence, uint16_t mdBits,
                                          const std::vector<IntHop>& hops,
                                          const ReportOptions& options) {
    using wire::put;
    std::vector<uint8_t> out;
    put(out,
        (uint64_t{kReportVersion} << 28) | (uint64_t{options.hwId & 0x3fu} << 22) |
            (sequence & 0x3fffff),
        4);
    put(out, nodeId, 4);
    const uint8_t flags =
        static_cast<uint8_t>((options.dropped ? 0x80 : 0) | (options.congestedQueue ? 0x40 : 0) |
                             (options.trackedFlow ? 0x20 : 0) | (options.intermediate ? 0x10 : 0));
    auto report = [&out, flags](uint16_t bits, const IntHop& h) {
        std::vector<uint8_t> md;
        if (bitSet(bits, kBitNodeIdOrReserved)) put(md, 0, 4);  // reserved in a report
        wire::writeBits1To14(md, bits, h);
        if (bitSet(bits, kBitDropOrChecksum)) {
            if (!h.dropQueueId && !h.dropReason) {
                put(md, 0xffffffffu, 4);  // the word is unavailable as a whole
            } else {
                put(md, h.dropQueueId.value_or(0xff), 1);
                put(md, h.dropReason.value_or(0xff), 1);
                put(md, 0, 2);
            }
        }
        out.push_back(static_cast<uint8_t>((kRepTypeInt << 4) | kInTypeNone));
        out.push_back(static_cast<uint8_t>((kIntMainBytes + md.size()) / 4));
        out.push_back(static_cast<uint8_t>(md.size() / 4));
        out.push_back(flags);
        put(out, bits, 2);
        put(out, 0, 6);  // default domain (0x0000): no DS bits, no DS status
        out.insert(out.end(), md.begin(), md.end());
    };
    if (hops.empty()) report(0, IntHop{});
    for (const auto& h : hops) report(mdBits, h);
    return out;
}

}  // namespace twinrail::telemetry
