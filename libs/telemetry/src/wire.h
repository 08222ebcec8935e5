// Internal to libs/telemetry: a bounds-checked big-endian reader and the metadata layout
// that Telemetry Report RepMdBits and the INT-MD instruction bitmap share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "twinrail/telemetry/int_metadata.h"

namespace twinrail::telemetry::wire {

// The parsers check every length before reading, with an error that names the field;
// this reader is the second line: a read past the end returns 0, reads nothing and marks
// the reader bad, so a missed check cannot become an out-of-bounds read.
class Reader {
  public:
    explicit Reader(std::span<const uint8_t> d, size_t base = 0) : d_(d), base_(base) {}
    size_t offset() const { return base_ + off_; }  // in the caller's buffer
    size_t left() const { return d_.size() - off_; }
    bool ok() const { return ok_; }
    uint64_t read(size_t bytes) {
        if (bytes > left()) {
            ok_ = false;
            off_ = d_.size();
            return 0;
        }
        uint64_t v = 0;
        for (size_t i = 0; i < bytes; ++i) v = (v << 8) | d_[off_ + i];
        off_ += bytes;
        return v;
    }
    uint8_t u8() { return static_cast<uint8_t>(read(1)); }
    uint16_t u16() { return static_cast<uint16_t>(read(2)); }
    uint32_t u24() { return static_cast<uint32_t>(read(3)); }
    uint32_t u32() { return static_cast<uint32_t>(read(4)); }
    uint64_t u64() { return read(8); }
    void skip(size_t n) {
        if (n > left()) {
            ok_ = false;
            n = left();
        }
        off_ += n;
    }

  private:
    std::span<const uint8_t> d_;
    size_t base_;
    size_t off_ = 0;
    bool ok_ = true;
};

inline void put(std::vector<uint8_t>& out, uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

inline bool bitSet(uint16_t bits, int bit) {
    return (bits & mdBit(bit)) != 0;
}

// Both specs: "each bit represents 4 octets, except bits 4, 5 and 6 (8 octets)". The
// rule covers reserved bits too, which is what lets a parser step over them.
constexpr size_t fieldBytes(int bit) {
    return bit >= 4 && bit <= 6 ? 8 : 4;
}

inline size_t metadataBytes(uint16_t bits) {
    size_t n = 0;
    for (int bit = 0; bit < 16; ++bit) {
        if (bitSet(bits, bit)) n += fieldBytes(bit);
    }
    return n;
}

inline std::string hex16(uint16_t v) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string s = "0x";
    for (int shift = 12; shift >= 0; shift -= 4) s += kDigits[(v >> shift) & 0xf];
    return s;
}

inline std::string num(size_t v) {
    return std::to_string(v);
}

// Reads bits 1-14, in bit order (the caller handles 0 and 15, whose meaning differs).
// Reserved bits 9-14 are 4 octets each and skipped unread.
void readBits1To14(Reader& r, uint16_t bits, IntHop& h);
// Writes bits 1-14; missing values as all ones, reserved bits as 4 zero bytes.
void writeBits1To14(std::vector<uint8_t>& out, uint16_t bits, const IntHop& h);

}  // namespace twinrail::telemetry::wire
