// The parser of proto/fnn_wire.md. Every field is checked against the one form the
// sender writes: a datagram is taken whole or refused whole, with the offset and field.
#include <algorithm>
#include <array>
#include <cstring>

#include "twinrail/fnn/notice.h"
#include "wire_layout.h"

namespace twinrail::fnn {

namespace {

using wire::hostBitsClear;
using wire::kFamily4;
using wire::kFamily6;
using wire::kPeerAt;
using wire::kSenderAt;
using wire::linkEvent;
using wire::v4Mapped;

uint16_t get16(std::span<const uint8_t> in, size_t at) {
    return static_cast<uint16_t>(in[at] << 8 | in[at + 1]);
}
uint64_t get64(std::span<const uint8_t> in, size_t at) {
    uint64_t v = 0;
    for (size_t i = 0; i < 8; ++i) v = v << 8 | in[at + i];
    return v;
}

bool namesSubjects(Event e) {
    return !linkEvent(e);
}

// An address field: 16 bytes, an IPv4 address in the first 4 and zeros after. One form
// per address: an IPv4-mapped IPv6 address is refused, so that no comparison downstream
// can be fooled by a second spelling of an IPv4 address.
std::optional<std::string> readAddress(const uint8_t* b, uint8_t family, IpAddr& out) {
    if (family == kFamily4) {
        for (size_t i = 4; i < 16; ++i)
            if (b[i] != 0) return "an IPv4 address with bytes after its 4";
        out = IpAddr::v4(b);
    } else if (family == kFamily6) {
        if (v4Mapped(b)) return "an IPv4-mapped IPv6 address (IPv4 is family 4)";
        out = IpAddr::v6(b);
    } else {
        return "address family " + std::to_string(family) + " (4 or 6)";
    }
    if (out.isUnspecified() || out.isMulticast()) return "an unspecified or multicast address";
    return std::nullopt;
}

std::variant<Parsed, ParseError> fail(size_t offset, std::string what) {
    return ParseError{offset, std::move(what)};
}

std::optional<ParseError> readSubject(std::span<const uint8_t> in, size_t at, IpPrefix& out) {
    const uint8_t family = in[at];
    const int length = in[at + 1];
    if (family != kFamily4 && family != kFamily6)
        return ParseError{at, "subject: address family " + std::to_string(family) + " (4 or 6)"};
    const int max = family == kFamily4 ? 32 : 128;
    if (length > max) {
        return ParseError{at + 1, "subject: prefix length " + std::to_string(length) + " > " +
                                      std::to_string(max)};
    }
    IpAddr addr;
    const uint8_t* b = in.data() + at + 2;
    if (family == kFamily4) {
        if (std::any_of(b + 4, b + 16, [](uint8_t x) { return x != 0; }))
            return ParseError{at + 2, "subject: an IPv4 address with bytes after its 4"};
        addr = IpAddr::v4(b);
    } else {
        if (v4Mapped(b)) return ParseError{at + 2, "subject: an IPv4-mapped IPv6 address"};
        addr = IpAddr::v6(b);
    }
    if (!hostBitsClear(b, length, max)) return ParseError{at + 2, "subject: host bits set"};
    out = IpPrefix{addr, length};
    return std::nullopt;
}

}  // namespace

std::variant<Parsed, ParseError> parse(std::span<const uint8_t> in) {
    if (in.size() < kHeaderBytes + kMacBytes) {
        return fail(in.size(), "shorter than a header and a MAC (" +
                                   std::to_string(kHeaderBytes + kMacBytes) + " bytes)");
    }
    if (in.size() > kMaxBytes) return fail(kMaxBytes, "longer than " + std::to_string(kMaxBytes));
    if (std::memcmp(in.data(), "TRFN", 4) != 0) return fail(0, "magic is not TRFN");
    if (in[4] != kVersion) return fail(4, "version " + std::to_string(in[4]) + " (1)");
    if (in[5] < 1 || in[5] > kMaxEvent) return fail(5, "unknown event " + std::to_string(in[5]));
    if (in[6] < 1 || in[6] > 15) return fail(6, "plane " + std::to_string(in[6]) + " (1..15)");
    if (in[31] != 0) return fail(31, "reserved byte not zero");
    Parsed p;
    Notice& n = p.notice;
    n.event = static_cast<Event>(in[5]);
    n.plane = in[6];
    n.key = KeyRef::fromByte(in[7]);
    n.sequence = get64(in, 8);
    n.sentNs = get64(in, 16);
    n.level = get16(in, 24);
    n.levels = get16(in, 26);
    if (auto err = readAddress(in.data() + kSenderAt, in[28], n.sender))
        return fail(kSenderAt, "sender: " + *err);
    if (linkEvent(n.event)) {
        if (auto err = readAddress(in.data() + kPeerAt, in[29], n.peer))
            return fail(kPeerAt, "peer: " + *err);
    } else if (in[29] != 0 || std::any_of(in.begin() + kPeerAt, in.begin() + kPeerAt + 16,
                                          [](uint8_t b) { return b != 0; })) {
        return fail(29, "a peer on an event that has none");
    }
    if (n.event == Event::UplinkDegraded ? n.levels == 0 || n.level > n.levels
                                         : n.level != 0 || n.levels != 0)
        return fail(24, "level " + std::to_string(n.level) + " of " + std::to_string(n.levels));
    const size_t count = in[30];
    if (count > kMaxSubjects)
        return fail(30, "more than " + std::to_string(kMaxSubjects) + " subjects");
    if (namesSubjects(n.event) != (count > 0)) {
        return fail(30, std::string(eventName(n.event)) +
                            (count > 0 ? " names no subjects" : " needs its subjects"));
    }
    p.macOffset = kHeaderBytes + count * kSubjectBytes;
    if (in.size() != p.macOffset + kMacBytes) {
        return fail(std::min(in.size(), p.macOffset),
                    "length is not the header, " + std::to_string(count) + " subjects and a MAC");
    }
    for (size_t i = 0; i < count; ++i) {
        IpPrefix s;
        if (auto err = readSubject(in, kHeaderBytes + i * kSubjectBytes, s)) {
            return std::move(*err);
        }
        n.subjects.push_back(s);
    }
    return p;
}

}  // namespace twinrail::fnn
