#include "twinrail/fnn/guard.h"

#include <algorithm>

namespace twinrail::fnn {

const char* refusalName(Refusal r) {
    switch (r) {
        case Refusal::Malformed:
            return "malformed";
        case Refusal::WrongPlane:
            return "wrong_plane";
        case Refusal::UnknownSender:
            return "unknown_sender";
        case Refusal::SourceMismatch:
            return "source_mismatch";
        case Refusal::RateLimited:
            return "rate_limited";
        case Refusal::UnknownKey:
            return "unknown_key";
        case Refusal::BadMac:
            return "bad_mac";
        case Refusal::Stale:
            return "stale";
        case Refusal::Replayed:
            return "replayed";
    }
    return "?";
}

NoticeGuard::NoticeGuard(GuardSettings settings) : settings_(std::move(settings)) {}

void NoticeGuard::setSettings(GuardSettings settings) {
    settings_ = std::move(settings);
    // A switch that left the plane: its state goes with it; the others keep theirs.
    std::erase_if(senders_,
                  [this](const auto& kv) { return settings_.senders.count(kv.first) == 0; });
}

std::variant<Notice, Refused> NoticeGuard::refuse(Refusal r, std::string detail) {
    ++counters_.refused[static_cast<size_t>(r)];
    return Refused{r, std::move(detail)};
}

bool NoticeGuard::takeToken(SenderState& s, MonoTime now) const {
    if (s.refilled == MonoTime{}) {
        s.tokens = settings_.burst;
    } else if (now > s.refilled) {
        const double seconds = std::chrono::duration<double>(now - s.refilled).count();
        s.tokens = std::min(settings_.burst, s.tokens + seconds * settings_.ratePerSecond);
    }
    s.refilled = std::max(s.refilled, now);
    if (s.tokens < 1) return false;
    s.tokens -= 1;
    return true;
}

std::variant<Notice, Refused> NoticeGuard::admit(std::span<const uint8_t> datagram,
                                                 const IpAddr& source, uint64_t wallNs,
                                                 MonoTime now) {
    auto parsed = parse(datagram);
    if (const auto* err = std::get_if<ParseError>(&parsed))
        return refuse(Refusal::Malformed, "byte " + std::to_string(err->offset) + ": " + err->what);
    auto& [n, macOffset] = std::get<Parsed>(parsed);
    const std::string from = " (from " + source.str() + ")";
    if (n.plane != settings_.plane)
        return refuse(Refusal::WrongPlane, "plane " + std::to_string(n.plane) + from);
    if (settings_.senders.count(n.sender) == 0)
        return refuse(Refusal::UnknownSender, "sender " + n.sender.str() + from);
    // The sender's own address, in the one form: an IPv4-mapped source is not an IPv4 one.
    if (source != n.sender)
        return refuse(Refusal::SourceMismatch, "sender " + n.sender.str() + from);
    SenderState& state = senders_[n.sender];
    if (!takeToken(state, now)) return refuse(Refusal::RateLimited, "sender " + n.sender.str());
    auto key = settings_.keys.find(n.key.generation);
    if (n.key.kind != settings_.kind || key == settings_.keys.end())
        return refuse(Refusal::UnknownKey, "key " + std::to_string(n.key.byte()) + from);
    if (!macValid(datagram, macOffset, key->second))
        return refuse(Refusal::BadMac, "sender " + n.sender.str());
    const auto window = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(settings_.window).count());
    const uint64_t skew = wallNs > n.sentNs ? wallNs - n.sentNs : n.sentNs - wallNs;
    if (skew > window)
        return refuse(Refusal::Stale, "sent " + std::to_string(skew / 1000000) + " ms from now");
    if (state.lastSequence && n.sequence <= *state.lastSequence) {
        return refuse(Refusal::Replayed, "sequence " + std::to_string(n.sequence) +
                                             " <= " + std::to_string(*state.lastSequence));
    }
    state.lastSequence = n.sequence;
    ++counters_.accepted;
    return std::move(n);
}

}  // namespace twinrail::fnn
