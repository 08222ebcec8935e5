// What a receiver lets through: a notice is acted on only when it parses, is for this
// receiver's plane, names a switch of that plane as its sender and comes from that
// switch's address, carries a valid MAC under a key this receiver holds, is fresh, is
// newer than the last one accepted from that sender, and that sender is within its rate.
// Everything else is refused and counted by reason. Pure code: the caller passes the
// datagram, its source address and both clocks.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <variant>

#include "twinrail/common/ip.h"
#include "twinrail/fnn/keys.h"
#include "twinrail/fnn/notice.h"

namespace twinrail::fnn {

using MonoTime = std::chrono::steady_clock::time_point;

struct GuardSettings {
    uint8_t plane = 1;
    KeyKind kind = KeyKind::Plane;  // a switch holds plane keys, a server its receiver keys
    std::map<uint8_t, Key> keys;    // by generation: more than one while a key rotates
    std::set<IpAddr> senders;       // the loopbacks of the plane's switches
    // How far a notice's send time may be from this receiver's wall clock (the fabric's
    // clocks are PTP- or NTP-synchronised to well under this).
    std::chrono::milliseconds window{2000};
    // Per sender: a token bucket, consulted before the MAC is computed, so that a flood
    // in a switch's name costs one counter per datagram, not one HMAC.
    double ratePerSecond = 1000;
    double burst = 200;
};

enum class Refusal : uint8_t {
    Malformed,
    WrongPlane,
    UnknownSender,
    SourceMismatch,
    RateLimited,
    UnknownKey,
    BadMac,
    Stale,
    Replayed,
};
inline constexpr size_t kRefusals = 9;
const char* refusalName(Refusal r);  // snake_case, as the counter's name

struct Refused {
    Refusal reason = Refusal::Malformed;
    std::string detail;  // for a rate-limited log line: offset, field, sender
};

struct GuardCounters {
    uint64_t accepted = 0;
    std::array<uint64_t, kRefusals> refused{};
    uint64_t of(Refusal r) const { return refused[static_cast<size_t>(r)]; }
};

class NoticeGuard {
  public:
    explicit NoticeGuard(GuardSettings settings);

    std::variant<Notice, Refused> admit(std::span<const uint8_t> datagram, const IpAddr& source,
                                        uint64_t wallNs, MonoTime now);
    // New keys or senders keep each sender's last sequence (a replay stays a replay).
    void setSettings(GuardSettings settings);
    const GuardCounters& counters() const { return counters_; }

  private:
    struct SenderState {
        std::optional<uint64_t> lastSequence;
        double tokens = 0;
        MonoTime refilled{};
    };
    bool takeToken(SenderState& s, MonoTime now) const;
    std::variant<Notice, Refused> refuse(Refusal r, std::string detail);

    GuardSettings settings_;
    std::map<IpAddr, SenderState> senders_;
    GuardCounters counters_;
};

}  // namespace twinrail::fnn
