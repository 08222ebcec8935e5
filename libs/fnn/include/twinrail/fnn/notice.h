// Fast network notifications (FNN): one authenticated datagram per fabric event, sent by
// the switch that saw it straight to the parties that act on it (planesteer on servers,
// pathqd and arsd on the other leaves), beside BGP. BGP stays the authority: a notice
// that is lost costs BGP's time, never correctness. The format is proto/fnn_wire.md.
//
// Parsing trusts nothing: every length is checked before use, an error names the offset
// and the field, nothing is read outside the buffer, nothing throws. The MAC is checked
// by NoticeGuard (guard.h), never by the parser alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "twinrail/common/ip.h"
#include "twinrail/fnn/keys.h"

namespace twinrail::fnn {

enum class Event : uint8_t {
    HostPortDown = 1,    // a leaf lost a host port: `subjects` are the addresses behind it
    HostPortUp = 2,      // ... and has it back, routed again
    UplinkDown = 3,      // a leaf-spine link is down: `peer` is the other end's loopback
    UplinkDegraded = 4,  // ... carries only `level` of `levels`
    UplinkUp = 5,        // ... is whole again
    LeafCutOff = 6,      // a leaf has no route to the fabric: `subjects` are its subnets
    LeafBack = 7,        // ... and has them again
};
inline constexpr uint8_t kMaxEvent = 7;
const char* eventName(Event e);

inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kHeaderBytes = 64;
inline constexpr size_t kSubjectBytes = 18;
inline constexpr size_t kMacBytes = 16;
// One event names at most the 256 hosts of a leaf's ports or a leaf's subnets, in
// several notices when it must; a datagram stays well under a 1500-byte MTU.
inline constexpr size_t kMaxSubjects = 64;
inline constexpr size_t kMaxBytes = kHeaderBytes + kMaxSubjects * kSubjectBytes + kMacBytes;

struct Notice {
    Event event = Event::HostPortDown;
    uint8_t plane = 1;      // 1..15
    KeyRef key;             // which key the MAC is under
    uint64_t sequence = 0;  // per sender, strictly increasing, also across its restarts
    uint64_t sentNs = 0;    // the sender's wall clock (ns since the Unix epoch)
    IpAddr sender;          // the sending switch's loopback
    IpAddr peer;            // link events: the far end's loopback; unset otherwise
    uint16_t level = 0;     // UplinkDegraded: usable share, in 1/levels
    uint16_t levels = 0;    // UplinkDegraded: the scale of `level`
    std::vector<IpPrefix> subjects;
    bool operator==(const Notice&) const = default;
};

struct ParseError {
    size_t offset = 0;
    std::string what;
};

// The notice and where its MAC starts (the MAC covers every byte before it).
struct Parsed {
    Notice notice;
    size_t macOffset = 0;
};

// The datagram for `n`, its MAC under `key`. Throws std::invalid_argument for a notice
// that cannot be sent (too many subjects, an unset sender, a plane out of range): the
// sender's own bug, never the network's.
std::vector<uint8_t> encode(const Notice& n, const Key& key);
std::variant<Parsed, ParseError> parse(std::span<const uint8_t> datagram);
// Whether the last kMacBytes of `datagram` are the MAC under `key` of what precedes them
// (constant time).
bool macValid(std::span<const uint8_t> datagram, size_t macOffset, const Key& key);

std::string describe(const Notice& n);

}  // namespace twinrail::fnn
