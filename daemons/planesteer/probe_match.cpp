#include "probe_match.h"

#include <cstring>

namespace twinrail::planesteer {
namespace {

uint64_t rotl(uint64_t x, int b) {
    return (x << b) | (x >> (64 - b));
}

void sipRound(uint64_t& v0, uint64_t& v1, uint64_t& v2, uint64_t& v3) {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
}

uint64_t load64le(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
    return v;
}

}  // namespace

uint64_t sipHash24(const NonceKey& key, const uint8_t* data, size_t len) {
    uint64_t v0 = 0x736f6d6570736575ULL ^ key[0], v1 = 0x646f72616e646f6dULL ^ key[1];
    uint64_t v2 = 0x6c7967656e657261ULL ^ key[0], v3 = 0x7465646279746573ULL ^ key[1];
    size_t whole = len - len % 8;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m = load64le(data + i);
        v3 ^= m;
        sipRound(v0, v1, v2, v3);
        sipRound(v0, v1, v2, v3);
        v0 ^= m;
    }
    uint64_t last = static_cast<uint64_t>(len & 0xff) << 56;
    for (size_t i = 0; i < len % 8; ++i) last |= static_cast<uint64_t>(data[whole + i]) << (8 * i);
    v3 ^= last;
    sipRound(v0, v1, v2, v3);
    sipRound(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    for (int i = 0; i < 4; ++i) sipRound(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

EchoMatcher::EchoMatcher(NonceKey key, std::chrono::milliseconds window, size_t capacity)
    : key_(key), window_(window), capacity_(capacity) {}

void EchoMatcher::setLimits(std::chrono::milliseconds window, size_t capacity) {
    window_ = window;
    capacity_ = capacity;
}

uint64_t EchoMatcher::issue(size_t port, const IpAddr& peer, uint16_t seq, Clock::time_point now) {
    // counter (8) | port (1) | peer (16) | seq (2)
    uint8_t in[27]{};
    uint64_t n = counter_++;
    std::memcpy(in, &n, 8);
    in[8] = static_cast<uint8_t>(port);
    std::memcpy(in + 9, peer.data(), 16);
    in[25] = static_cast<uint8_t>(seq >> 8);
    in[26] = static_cast<uint8_t>(seq);
    uint64_t nonce = sipHash24(key_, in, sizeof(in));
    while (!bySendTime_.empty() && byNonce_.size() >= capacity_) {
        if (byNonce_.erase(bySendTime_.front().second) > 0) ++counters_.overflow;
        bySendTime_.pop_front();
    }
    byNonce_[nonce] = Request{port, peer, seq, now};
    bySendTime_.emplace_back(now, nonce);
    return nonce;
}

EchoMatcher::Verdict EchoMatcher::match(std::optional<uint64_t> nonce, const IpAddr& from,
                                        uint16_t seq, Clock::time_point now) {
    auto it = nonce ? byNonce_.find(*nonce) : byNonce_.end();
    if (it == byNonce_.end()) {
        ++counters_.unmatched;
        return {Heard::Unmatched};
    }
    const Request& r = it->second;
    if (r.peer != from || r.seq != seq) {
        // Someone who saw the request answers for another peer or port: not the peer.
        // The request stays outstanding for the peer's own reply.
        ++counters_.mismatched;
        return {Heard::Mismatched};
    }
    Verdict v{now - r.sentAt > window_ ? Heard::Late : Heard::Answer, r.port};
    byNonce_.erase(it);  // one answer per request: a replay is unmatched
    if (v.heard == Heard::Late) ++counters_.late;
    return v;
}

void EchoMatcher::expire(Clock::time_point now) {
    while (!bySendTime_.empty() && now - bySendTime_.front().first > window_) {
        byNonce_.erase(bySendTime_.front().second);
        bySendTime_.pop_front();
    }
}

ArpMatcher::ArpMatcher(std::chrono::milliseconds window, size_t capacity)
    : window_(window), capacity_(capacity) {}

void ArpMatcher::setLimits(std::chrono::milliseconds window, size_t capacity) {
    window_ = window;
    capacity_ = capacity;
}

void ArpMatcher::asked(size_t port, const IpAddr& peer, Clock::time_point now) {
    auto key = std::make_pair(port, peer);
    if (asked_.size() >= capacity_ && asked_.count(key) == 0) {
        ++counters_.overflow;  // its answer will be unmatched: a missed probe, not a pin
        return;
    }
    asked_[key] = now;
}

Heard ArpMatcher::match(size_t port, const IpAddr& sender, const MacAddr& mac,
                        Clock::time_point now) {
    auto it = asked_.find(std::make_pair(port, sender));
    if (it == asked_.end()) {
        ++counters_.unmatched;
        return Heard::Unmatched;
    }
    if (now - it->second > window_) {
        asked_.erase(it);
        ++counters_.late;
        return Heard::Late;
    }
    auto [sticky, first] = stickyMac_.emplace(port, mac);
    if (!first && sticky->second != mac) {
        ++counters_.macChanged;  // the request stays asked: the leaf may still answer
        return Heard::MacChanged;
    }
    asked_.erase(it);
    return Heard::Answer;
}

void ArpMatcher::expire(Clock::time_point now) {
    std::erase_if(asked_, [&](const auto& kv) { return now - kv.second > window_; });
}

}  // namespace twinrail::planesteer
