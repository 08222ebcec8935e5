#include "twinrail/telemetry/int_report.h"

#include <array>

namespace twinrail::telemetry {
namespace {

// Bytes each instruction bit adds per hop; bit 0 is the most significant bit of
// rep_md_bits. 0 marks reserved bits we cannot size, which make a report unparseable.
constexpr std::array<size_t, 16> kFieldBytes = {4, 4, 4, 4, 8, 8, 8, 4, 4, 0, 0, 0, 0, 0, 0, 4};

bool bitSet(uint16_t bits, int bit) {
    return (bits & (0x8000u >> bit)) != 0;
}

class Reader {
  public:
    explicit Reader(std::span<const uint8_t> d) : d_(d) {}
    size_t offset() const { return off_; }
    size_t left() const { return d_.size() - off_; }
    uint8_t u8() { return d_[off_++]; }
    uint16_t u16() { return static_cast<uint16_t>((u8() << 8) | u8()); }
    uint32_t u24() {
        return (static_cast<uint32_t>(u8()) << 16) | (static_cast<uint32_t>(u8()) << 8) | u8();
    }
    uint32_t u32() { return (static_cast<uint32_t>(u16()) << 16) | u16(); }
    uint64_t u64() { return (static_cast<uint64_t>(u32()) << 32) | u32(); }
    void skip(size_t n) { off_ += n; }

  private:
    std::span<const uint8_t> d_;
    size_t off_ = 0;
};

template <typename T>
std::optional<T> avail(T v, T allOnes) {
    return v == allOnes ? std::nullopt : std::optional<T>(v);
}

IntHop readHop(Reader& r, uint16_t bits) {
    IntHop h;
    if (bitSet(bits, 0)) h.nodeId = avail(r.u32(), 0xffffffffu);
    if (bitSet(bits, 1)) {
        h.ingressPort = avail(r.u16(), uint16_t{0xffff});
        h.egressPort = avail(r.u16(), uint16_t{0xffff});
    }
    if (bitSet(bits, 2)) h.hopLatency = avail(r.u32(), 0xffffffffu);
    if (bitSet(bits, 3)) {
        h.queueId = avail(r.u8(), uint8_t{0xff});
        h.queueOccupancy = avail(r.u24(), 0xffffffu);
    }
    if (bitSet(bits, 4)) h.ingressTimestamp = avail(r.u64(), ~uint64_t{0});
    if (bitSet(bits, 5)) h.egressTimestamp = avail(r.u64(), ~uint64_t{0});
    if (bitSet(bits, 6)) r.skip(8);  // L2 interface ids: not used
    if (bitSet(bits, 7)) h.egressTxUtil = avail(r.u32(), 0xffffffffu);
    if (bitSet(bits, 8)) {
        r.skip(1);
        h.bufferOccupancy = avail(r.u24(), 0xffffffu);
    }
    if (bitSet(bits, 15)) r.skip(4);  // checksum complement
    return h;
}

}  // namespace

std::variant<IntPacket, ParseError> parseTelemetryReport(std::span<const uint8_t> d) {
    if (d.size() > kMaxReportBytes) {
        return ParseError{0, "datagram of " + std::to_string(d.size()) + " bytes exceeds " +
                                 std::to_string(kMaxReportBytes)};
    }
    Reader r(d);
    if (r.left() < 8) return ParseError{0, "shorter than the 8-byte group header"};
    IntPacket p;
    uint32_t word = r.u32();
    uint8_t version = static_cast<uint8_t>(word >> 28);
    if (version != kReportVersion)
        return ParseError{0, "report version " + std::to_string(version) + ", expected 2"};
    p.hwId = static_cast<uint8_t>((word >> 22) & 0x3f);
    p.sequence = word & 0x3fffff;
    p.nodeId = r.u32();
    if (r.left() == 0) return ParseError{8, "group header without any report"};
    while (r.left() > 0) {
        size_t start = r.offset();
        if (r.left() < 4) return ParseError{start, "truncated individual report header"};
        uint8_t b0 = r.u8();
        size_t bodyBytes = size_t{r.u8()} * 4;
        size_t mdBytes = size_t{r.u8()} * 4;
        r.u8();  // D Q F I flags
        if (bodyBytes > r.left()) {
            return ParseError{start, "report length " + std::to_string(bodyBytes) +
                                         " bytes, only " + std::to_string(r.left()) + " left"};
        }
        if ((b0 >> 4) != kRepTypeInt) {
            ++p.otherReports;
            r.skip(bodyBytes);
            continue;
        }
        if (bodyBytes < 8 + mdBytes) {
            return ParseError{start, "INT report of " + std::to_string(bodyBytes) +
                                         " bytes cannot hold 8 + " + std::to_string(mdBytes) +
                                         " bytes of metadata"};
        }
        size_t bodyEnd = r.offset() + bodyBytes;
        uint16_t bits = r.u16();
        r.skip(6);  // domain-specific id, bits and status: not used
        size_t hopBytes = 0;
        for (int bit = 0; bit < 16; ++bit) {
            if (!bitSet(bits, bit)) continue;
            if (kFieldBytes[bit] == 0) {
                return ParseError{start + 4, "instruction bit " + std::to_string(bit) +
                                                 " is reserved; cannot size the metadata"};
            }
            hopBytes += kFieldBytes[bit];
        }
        if (mdBytes > 0 && (hopBytes == 0 || mdBytes % hopBytes != 0)) {
            return ParseError{start + 2, "metadata of " + std::to_string(mdBytes) +
                                             " bytes is not a whole number of " +
                                             std::to_string(hopBytes) + "-byte hops"};
        }
        for (size_t n = 0; hopBytes > 0 && n < mdBytes / hopBytes; ++n)
            p.hops.push_back(readHop(r, bits));
        r.skip(bodyEnd - r.offset());  // the rest is the truncated packet: not used
    }
    return p;
}

namespace {
void put(std::vector<uint8_t>& out, uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
}  // namespace

std::vector<uint8_t> buildTelemetryReport(uint32_t nodeId, uint32_t sequence, uint16_t mdBits,
                                          const std::vector<IntHop>& hops) {
    std::vector<uint8_t> md;
    for (const auto& h : hops) {
        if (bitSet(mdBits, 0)) put(md, h.nodeId.value_or(0xffffffffu), 4);
        if (bitSet(mdBits, 1)) {
            put(md, h.ingressPort.value_or(0xffff), 2);
            put(md, h.egressPort.value_or(0xffff), 2);
        }
        if (bitSet(mdBits, 2)) put(md, h.hopLatency.value_or(0xffffffffu), 4);
        if (bitSet(mdBits, 3)) {
            put(md, h.queueId.value_or(0xff), 1);
            put(md, h.queueOccupancy.value_or(0xffffff), 3);
        }
        if (bitSet(mdBits, 4)) put(md, h.ingressTimestamp.value_or(~uint64_t{0}), 8);
        if (bitSet(mdBits, 5)) put(md, h.egressTimestamp.value_or(~uint64_t{0}), 8);
        if (bitSet(mdBits, 6)) put(md, 0, 8);
        if (bitSet(mdBits, 7)) put(md, h.egressTxUtil.value_or(0xffffffffu), 4);
        if (bitSet(mdBits, 8)) put(md, h.bufferOccupancy.value_or(0xffffff), 4);
        if (bitSet(mdBits, 15)) put(md, 0, 4);
    }
    std::vector<uint8_t> out;
    put(out, (uint64_t{kReportVersion} << 28) | (sequence & 0x3fffff), 4);
    put(out, nodeId, 4);
    out.push_back(static_cast<uint8_t>(kRepTypeInt << 4));
    out.push_back(static_cast<uint8_t>((8 + md.size()) / 4));
    out.push_back(static_cast<uint8_t>(md.size() / 4));
    out.push_back(0);
    put(out, mdBits, 2);
    put(out, 0, 6);
    out.insert(out.end(), md.begin(), md.end());
    return out;
}

}  // namespace twinrail::telemetry
