#include "twinrail/fnn/notice.h"

#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <cstring>
#include <stdexcept>

#include "wire_layout.h"

namespace twinrail::fnn {

namespace {

constexpr std::array<uint8_t, 4> kMagic{'T', 'R', 'F', 'N'};
using wire::kFamily4;
using wire::kFamily6;
using wire::kPeerAt;
using wire::kSenderAt;
using wire::linkEvent;

void put16(std::vector<uint8_t>& out, size_t at, uint16_t v) {
    out[at] = static_cast<uint8_t>(v >> 8);
    out[at + 1] = static_cast<uint8_t>(v);
}
void put64(std::vector<uint8_t>& out, size_t at, uint64_t v) {
    for (size_t i = 0; i < 8; ++i) out[at + i] = static_cast<uint8_t>(v >> (56 - 8 * i));
}
uint8_t familyByte(const IpAddr& a) {
    return a.isV4() ? kFamily4 : a.isV6() ? kFamily6 : 0;
}

bool mappedV4(const IpAddr& a) {
    return a.isV6() && wire::v4Mapped(a.data());
}

// The one spelling the parser takes: no IPv4-mapped IPv6, nothing unspecified or multicast.
bool sendableAddress(const IpAddr& a) {
    return familyByte(a) != 0 && !a.isUnspecified() && !a.isMulticast() && !mappedV4(a);
}

bool hostBitsClear(const IpPrefix& p) {
    return wire::hostBitsClear(p.addr.data(), p.length, p.addr.maxPrefixLen());
}

std::array<uint8_t, 32> hmac(const Key& key, std::span<const uint8_t> data) {
    std::array<uint8_t, 32> out{};
    unsigned int len = 0;
    if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), data.data(), data.size(),
             out.data(), &len) == nullptr ||
        len != out.size())
        throw std::runtime_error("HMAC-SHA256 is not available");
    return out;
}

void checkSendable(const Notice& n) {
    if (n.plane < 1 || n.plane > 15) throw std::invalid_argument("plane out of 1..15");
    if (!sendableAddress(n.sender)) throw std::invalid_argument("notice without a sender");
    if (n.key.generation > 127) throw std::invalid_argument("key generation out of 0..127");
    if (n.subjects.size() > kMaxSubjects) throw std::invalid_argument("too many subjects");
    if (linkEvent(n.event) != (familyByte(n.peer) != 0) ||
        (linkEvent(n.event) && !sendableAddress(n.peer)))
        throw std::invalid_argument("a link event needs a peer, and only a link event has one");
    if (linkEvent(n.event) != n.subjects.empty())
        throw std::invalid_argument("subjects are for host and leaf events, and they need one");
    if (n.event == Event::UplinkDegraded ? n.levels == 0 || n.level > n.levels
                                         : n.level != 0 || n.levels != 0)
        throw std::invalid_argument("level out of its scale");
    for (const auto& s : n.subjects) {
        if (familyByte(s.addr) == 0 || mappedV4(s.addr) || s.length < 0 ||
            s.length > s.addr.maxPrefixLen() || !hostBitsClear(s)) {
            throw std::invalid_argument("subject " + s.str() + " is not a prefix");
        }
    }
}

}  // namespace

const char* eventName(Event e) {
    switch (e) {
        case Event::HostPortDown:
            return "host-port-down";
        case Event::HostPortUp:
            return "host-port-up";
        case Event::UplinkDown:
            return "uplink-down";
        case Event::UplinkDegraded:
            return "uplink-degraded";
        case Event::UplinkUp:
            return "uplink-up";
        case Event::LeafCutOff:
            return "leaf-cut-off";
        case Event::LeafBack:
            return "leaf-back";
    }
    return "?";
}

std::vector<uint8_t> encode(const Notice& n, const Key& key) {
    checkSendable(n);
    std::vector<uint8_t> out(kHeaderBytes + n.subjects.size() * kSubjectBytes, 0);
    std::copy(kMagic.begin(), kMagic.end(), out.begin());
    out[4] = kVersion;
    out[5] = static_cast<uint8_t>(n.event);
    out[6] = n.plane;
    out[7] = n.key.byte();
    put64(out, 8, n.sequence);
    put64(out, 16, n.sentNs);
    put16(out, 24, n.level);
    put16(out, 26, n.levels);
    out[28] = familyByte(n.sender);
    out[29] = familyByte(n.peer);
    out[30] = static_cast<uint8_t>(n.subjects.size());
    std::memcpy(out.data() + kSenderAt, n.sender.data(), n.sender.size());
    if (out[29] != 0) std::memcpy(out.data() + kPeerAt, n.peer.data(), n.peer.size());
    size_t at = kHeaderBytes;
    for (const auto& s : n.subjects) {
        out[at] = familyByte(s.addr);
        out[at + 1] = static_cast<uint8_t>(s.length);
        std::memcpy(out.data() + at + 2, s.addr.data(), s.addr.size());
        at += kSubjectBytes;
    }
    auto mac = hmac(key, out);
    out.insert(out.end(), mac.begin(), mac.begin() + kMacBytes);
    return out;
}

bool macValid(std::span<const uint8_t> datagram, size_t macOffset, const Key& key) {
    if (macOffset + kMacBytes != datagram.size()) return false;
    auto mac = hmac(key, datagram.first(macOffset));
    return CRYPTO_memcmp(mac.data(), datagram.data() + macOffset, kMacBytes) == 0;
}

std::string describe(const Notice& n) {
    std::string out = std::string(eventName(n.event)) + " from " + n.sender.str() + " plane " +
                      std::to_string(n.plane) + " seq " + std::to_string(n.sequence);
    if (n.peer.family() != 0) out += " peer " + n.peer.str();
    if (n.event == Event::UplinkDegraded)
        out += " level " + std::to_string(n.level) + "/" + std::to_string(n.levels);
    if (!n.subjects.empty()) {
        out += " subjects";
        for (const auto& s : n.subjects) out += " " + s.str();
    }
    return out;
}

}  // namespace twinrail::fnn
