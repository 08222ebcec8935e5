// Fast notices to a server (proto/fnn_wire.md): a switch of a plane says that peers are
// lost there. Each bond receives them on its own address, under its own receiver key of
// each plane (the planner's notice_keys); a notice that the bond's guard admits names the
// port of that plane and the subjects to steer away from it. Pure: no socket, no clock.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <variant>

#include "config.h"
#include "twinrail/fnn/guard.h"

namespace twinrail::planesteer {

// What an admitted notice asks of one bond: its peers in `notice.subjects` are lost
// through `port` (or, for an event that is not a loss, nothing: lost = false).
struct NoticeForBond {
    std::string bond;
    size_t port = 0;
    bool lost = false;
    fnn::Notice notice;
};

class NoticeIntake {
  public:
    explicit NoticeIntake(const Config& config);

    // A datagram that came to `destination` from `source`; `bondAddresses` are the bonds'
    // current addresses. A datagram to no bond's address is refused as malformed.
    std::variant<NoticeForBond, fnn::Refused> admit(
        std::span<const uint8_t> datagram, const IpAddr& source, const IpAddr& destination,
        const std::map<std::string, IpAddr>& bondAddresses, uint64_t wallNs, fnn::MonoTime now);

    // Every verdict so far, over every bond and plane.
    fnn::GuardCounters counters() const;

  private:
    struct BondGuards {
        std::vector<uint8_t> planes;
        std::map<uint8_t, fnn::NoticeGuard> byPlane;
    };
    std::map<std::string, BondGuards> bonds_;
    fnn::GuardCounters own_;  // refused before any guard: no bond, no plane of it
};

}  // namespace twinrail::planesteer
