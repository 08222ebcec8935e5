// The keys of fast network notifications. Each plane has one fabric key, which the
// planner provisions to that plane's switches only. A notice to a switch carries an
// HMAC-SHA256 under the plane key itself. A notice to a server carries one under that
// server's receiver key, HMAC-SHA256(plane key, "twinrail-fnn receiver " + the address it
// receives on, as text), which is all the server is given: with it a server can check notices meant
// for it, and forge nothing a switch or another server would accept.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "twinrail/common/ip.h"

namespace twinrail::fnn {

inline constexpr size_t kKeyBytes = 32;
using Key = std::array<uint8_t, kKeyBytes>;

enum class KeyKind : uint8_t { Plane = 0, Receiver = 1 };
// Which key a MAC is under: the kind, and the generation (0..127) for rotation.
struct KeyRef {
    KeyKind kind = KeyKind::Plane;
    uint8_t generation = 0;
    bool operator==(const KeyRef&) const = default;
    uint8_t byte() const {
        return static_cast<uint8_t>((kind == KeyKind::Receiver ? 0x80 : 0) | (generation & 0x7f));
    }
    static KeyRef fromByte(uint8_t b) {
        return {(b & 0x80) != 0 ? KeyKind::Receiver : KeyKind::Plane,
                static_cast<uint8_t>(b & 0x7f)};
    }
};

// 64 hexadecimal digits. nullopt names nothing about the text: it may be a secret.
std::optional<Key> parseKeyHex(std::string_view text);
std::string keyHex(const Key& key);
// A fresh random key (the kernel's getrandom); throws std::runtime_error without entropy.
Key randomKey();
// The key of the receiver at `receiver` (a NIC's address) under `planeKey`.
Key receiverKey(const Key& planeKey, const IpAddr& receiver);

}  // namespace twinrail::fnn
