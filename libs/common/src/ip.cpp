#include "twinrail/common/ip.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>

namespace twinrail {

IpAddr IpAddr::v4(const uint8_t* bytes) {
    IpAddr ip;
    ip.family_ = AF_INET;
    std::memcpy(ip.bytes_.data(), bytes, 4);
    return ip;
}

IpAddr IpAddr::v6(const uint8_t* bytes) {
    IpAddr ip;
    ip.family_ = AF_INET6;
    std::memcpy(ip.bytes_.data(), bytes, 16);
    return ip;
}

std::optional<IpAddr> IpAddr::parse(std::string_view text) {
    if (text.empty() || text.size() > INET6_ADDRSTRLEN) return std::nullopt;
    std::string s(text);
    std::array<uint8_t, 16> buf{};
    if (inet_pton(AF_INET, s.c_str(), buf.data()) == 1) return v4(buf.data());
    if (inet_pton(AF_INET6, s.c_str(), buf.data()) == 1) return v6(buf.data());
    return std::nullopt;
}

bool IpAddr::isV4() const {
    return family_ == AF_INET;
}
bool IpAddr::isV6() const {
    return family_ == AF_INET6;
}

bool IpAddr::isUnspecified() const {
    for (size_t i = 0; i < size(); ++i)
        if (bytes_[i] != 0) return false;
    return true;
}

bool IpAddr::isLoopback() const {
    if (isV4()) return bytes_[0] == 127;
    static const uint8_t kLoop[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    return std::memcmp(bytes_.data(), kLoop, 16) == 0;
}

bool IpAddr::isMulticast() const {
    if (isV4()) return (bytes_[0] & 0xf0) == 0xe0;
    return bytes_[0] == 0xff;
}

bool IpAddr::isLinkLocal() const {
    if (isV4()) return bytes_[0] == 169 && bytes_[1] == 254;
    return bytes_[0] == 0xfe && (bytes_[1] & 0xc0) == 0x80;
}

bool IpAddr::isLimitedBroadcast() const {
    return isV4() && bytes_[0] == 255 && bytes_[1] == 255 && bytes_[2] == 255 && bytes_[3] == 255;
}

std::string IpAddr::str() const {
    if (family_ == 0) return "unset";
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(family_, bytes_.data(), buf, sizeof(buf));
    return buf;
}

std::optional<IpPrefix> IpPrefix::parse(std::string_view text) {
    auto slash = text.find('/');
    auto ip = IpAddr::parse(text.substr(0, slash));
    if (!ip) return std::nullopt;
    int len = ip->maxPrefixLen();
    if (slash != std::string_view::npos) {
        auto digits = text.substr(slash + 1);
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), len);
        if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
        if (len < 0 || len > ip->maxPrefixLen()) return std::nullopt;
    }
    return IpPrefix{*ip, len};
}

namespace {
bool bitsEqual(const uint8_t* a, const uint8_t* b, int bits) {
    int full = bits / 8;
    if (std::memcmp(a, b, static_cast<size_t>(full)) != 0) return false;
    int rest = bits % 8;
    if (rest == 0) return true;
    auto mask = static_cast<uint8_t>(0xff << (8 - rest));
    return (a[full] & mask) == (b[full] & mask);
}
}  // namespace

bool IpPrefix::contains(const IpAddr& ip) const {
    return ip.family() == addr.family() && bitsEqual(ip.data(), addr.data(), length);
}

bool IpPrefix::isBroadcastOf(const IpAddr& ip) const {
    if (!addr.isV4() || length >= 31 || !contains(ip)) return false;
    for (int bit = length; bit < 32; ++bit)
        if (((ip.data()[bit / 8] >> (7 - bit % 8)) & 1) == 0) return false;
    return true;
}

std::string IpPrefix::str() const {
    return addr.str() + "/" + std::to_string(length);
}

std::string formatMac(const MacAddr& mac) {
    char buf[18];
    std::snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
                  mac[4], mac[5]);
    return buf;
}

std::optional<MacAddr> parseMac(std::string_view text) {
    MacAddr mac{};
    if (text.size() != 17) return std::nullopt;
    for (size_t i = 0; i < 6; ++i) {
        if (i > 0 && text[i * 3 - 1] != ':') return std::nullopt;
        unsigned v = 0;
        for (size_t k = 0; k < 2; ++k) {
            char c = text[i * 3 + k];
            unsigned d = 0;
            if (c >= '0' && c <= '9') {
                d = static_cast<unsigned>(c - '0');
            } else if (c >= 'a' && c <= 'f') {
                d = static_cast<unsigned>(c - 'a' + 10);
            } else if (c >= 'A' && c <= 'F') {
                d = static_cast<unsigned>(c - 'A' + 10);
            } else {
                return std::nullopt;
            }
            v = v * 16 + d;
        }
        mac[i] = static_cast<uint8_t>(v);
    }
    return mac;
}

bool isZeroMac(const MacAddr& mac) {
    for (auto b : mac)
        if (b != 0) return false;
    return true;
}

bool isBroadcastOrMulticastMac(const MacAddr& mac) {
    return (mac[0] & 1) != 0;
}

size_t IpAddrHash::operator()(const IpAddr& ip) const noexcept {
    // FNV-1a over the address bytes: cheap and spreads sequential host addresses well.
    uint64_t h = 1469598103934665603ULL ^ static_cast<uint64_t>(ip.family());
    for (size_t i = 0; i < ip.size(); ++i) {
        h ^= ip.data()[i];
        h *= 1099511628211ULL;
    }
    return static_cast<size_t>(h);
}

}  // namespace twinrail
