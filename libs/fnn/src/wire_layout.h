// proto/fnn_wire.md's layout and its one-spelling rules, shared by the encoder
// (notice.cpp) and the parser (parse.cpp), so that the two cannot drift apart.
#pragma once

#include <cstdint>
#include <cstring>

#include "twinrail/fnn/notice.h"

namespace twinrail::fnn::wire {

inline constexpr size_t kSenderAt = 32;
inline constexpr size_t kPeerAt = 48;
inline constexpr uint8_t kFamily4 = 4;
inline constexpr uint8_t kFamily6 = 6;

inline bool linkEvent(Event e) {
    return e == Event::UplinkDown || e == Event::UplinkDegraded || e == Event::UplinkUp;
}

// 16 address bytes in ::ffff:0:0/96, the second spelling of an IPv4 address.
inline bool v4Mapped(const uint8_t* b) {
    static constexpr uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return std::memcmp(b, kPrefix, sizeof kPrefix) == 0;
}

inline bool hostBitsClear(const uint8_t* b, int length, int maxLength) {
    for (int bit = length; bit < maxLength; ++bit) {
        if ((b[bit / 8] >> (7 - bit % 8) & 1) != 0) return false;
    }
    return true;
}

}  // namespace twinrail::fnn::wire
