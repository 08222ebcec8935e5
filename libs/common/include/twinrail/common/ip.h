// Value types for addresses: small, hashable, ordered, parse/format through inet_pton.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace twinrail {

class IpAddr {
  public:
    IpAddr() = default;
    static IpAddr v4(const uint8_t* bytes);
    static IpAddr v6(const uint8_t* bytes);
    static std::optional<IpAddr> parse(std::string_view text);

    int family() const { return family_; }  // AF_INET, AF_INET6, or 0 when unset
    bool isV4() const;
    bool isV6() const;
    const uint8_t* data() const { return bytes_.data(); }
    size_t size() const { return isV4() ? 4 : 16; }
    int maxPrefixLen() const { return isV4() ? 32 : 128; }

    bool isUnspecified() const;
    bool isLoopback() const;
    bool isMulticast() const;
    bool isLinkLocal() const;  // 169.254.0.0/16 and fe80::/10
    bool isLimitedBroadcast() const;

    std::string str() const;
    // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads defaulted <=>
    auto operator<=>(const IpAddr&) const = default;

  private:
    int family_ = 0;
    std::array<uint8_t, 16> bytes_{};
};

struct IpPrefix {
    IpAddr addr;
    int length = 0;

    static std::optional<IpPrefix> parse(std::string_view text);
    bool contains(const IpAddr& ip) const;
    bool isBroadcastOf(const IpAddr& ip) const;  // IPv4 directed broadcast of this subnet
    std::string str() const;
    // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads defaulted <=>
    auto operator<=>(const IpPrefix&) const = default;
};

using MacAddr = std::array<uint8_t, 6>;
std::string formatMac(const MacAddr& mac);
std::optional<MacAddr> parseMac(std::string_view text);  // aa:bb:cc:dd:ee:ff
bool isZeroMac(const MacAddr& mac);
bool isBroadcastOrMulticastMac(const MacAddr& mac);

struct IpAddrHash {
    size_t operator()(const IpAddr& ip) const noexcept;
};

}  // namespace twinrail
