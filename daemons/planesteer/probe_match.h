// Which heard answers are answers to planesteer's own probes. Without this, any host that
// can reach the NIC could keep a dead plane in use by sending echo replies with our fixed
// identifier. Pure (time and randomness come in), so the forged cases are unit-tested.
//
// Echo: every request carries a 64-bit nonce, SipHash-2-4 under a 128-bit key drawn once
// from getrandom() at start, over (a counter, port, peer, seq). SipHash is a PRF for
// short inputs: without the key, a nonce cannot be predicted from the ones seen, and the
// counter makes each one distinct, so no syscall is needed per probe. A reply counts
// only if its nonce is outstanding, it comes from the peer the request went to with the
// same sequence number, and arrives within the window; it counts for the port the table
// recorded, never for a port the packet claims. The port a reply arrives on is NOT
// checked: the reply takes whichever plane the peer's bond hashes it into, so a healthy
// plane's answer often arrives on the other port (echo_prober.h).
//
// ARP: the leaf on a port answers for the peer asked on that port, so an ARP reply must
// arrive on the port it was asked on, from the IP asked, within the window, one reply
// per request; the answering MAC is sticky per port until the port loses carrier (one
// leaf per link; a leaf swapped for another has the cable pulled first).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>

#include "steer_policy.h"
#include "twinrail/common/ip.h"

namespace twinrail::planesteer {

using NonceKey = std::array<uint64_t, 2>;

// SipHash-2-4 (Aumasson, Bernstein) of `len` bytes.
uint64_t sipHash24(const NonceKey& key, const uint8_t* data, size_t len);

enum class Heard { Answer, Unmatched, Mismatched, Late, MacChanged };

struct MatchCounters {
    uint64_t unmatched = 0;   // no outstanding request: forged, replayed, or unsolicited
    uint64_t mismatched = 0;  // a known nonce from another address or with another seq
    uint64_t late = 0;        // after the window
    uint64_t macChanged = 0;  // ARP: another MAC than the port's sticky one
    uint64_t overflow = 0;    // outstanding requests dropped unanswered to stay bounded
};

class EchoMatcher {
  public:
    // `capacity` bounds the outstanding table (peers x ports x rounds in a window).
    EchoMatcher(NonceKey key, std::chrono::milliseconds window, size_t capacity);
    void setLimits(std::chrono::milliseconds window, size_t capacity);

    // A request about to leave by `port`: the nonce to carry in it.
    uint64_t issue(size_t port, const IpAddr& peer, uint16_t seq, Clock::time_point now);

    struct Verdict {
        Heard heard;
        size_t port = 0;  // for Answer: the port the request left by
    };
    // A reply with nonce `nonce` (nullopt: none in the payload) from `from`.
    Verdict match(std::optional<uint64_t> nonce, const IpAddr& from, uint16_t seq,
                  Clock::time_point now);
    void expire(Clock::time_point now);  // forgets requests past the window

    size_t outstanding() const { return byNonce_.size(); }
    const MatchCounters& counters() const { return counters_; }

  private:
    struct Request {
        size_t port;
        IpAddr peer;
        uint16_t seq;
        Clock::time_point sentAt;
    };
    NonceKey key_;
    std::chrono::milliseconds window_;
    size_t capacity_;
    uint64_t counter_ = 0;
    std::unordered_map<uint64_t, Request> byNonce_;
    std::deque<std::pair<Clock::time_point, uint64_t>> bySendTime_;  // oldest first
    MatchCounters counters_;
};

class ArpMatcher {
  public:
    ArpMatcher(std::chrono::milliseconds window, size_t capacity);
    void setLimits(std::chrono::milliseconds window, size_t capacity);

    void asked(size_t port, const IpAddr& peer, Clock::time_point now);
    Heard match(size_t port, const IpAddr& sender, const MacAddr& mac, Clock::time_point now);
    void portDown(size_t port) { stickyMac_.erase(port); }
    void expire(Clock::time_point now);

    size_t outstanding() const { return asked_.size(); }
    const MatchCounters& counters() const { return counters_; }

  private:
    std::chrono::milliseconds window_;
    size_t capacity_;
    std::map<std::pair<size_t, IpAddr>, Clock::time_point> asked_;  // latest ask
    std::map<size_t, MacAddr> stickyMac_;
    MatchCounters counters_;
};

}  // namespace twinrail::planesteer
