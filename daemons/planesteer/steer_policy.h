// Which port of a bonded NIC may carry the traffic to each peer, from what each plane
// says. A leaf answers an ARP request for a peer (proxy ARP) only while it has a usable
// route to it: when the peer's link into that plane is gone, the peer's /32 is withdrawn
// there, the covering rail subnet is a discard route, and the leaf goes silent. So an
// ARP request sent out one port asks that plane "can you still deliver to this peer?".
// A bond's hash knows nothing of that and keeps sending half of the flows into the plane
// that lost the peer (the bond attachment's gap); this policy pins the peer to the port
// whose plane still answers, and lets it go when both answer again. Pure: time comes in.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "twinrail/common/ip.h"

namespace twinrail::planesteer {

using Clock = std::chrono::steady_clock;
// The time the policy, the budgets and the answer windows see: steady_clock's, or a test's.
using Now = std::function<Clock::time_point()>;

struct SteerParams {
    std::chrono::milliseconds interval{200};  // one probe per port per peer
    int misses = 3;  // a port is silent after this many intervals without an answer
    // The interval of the peers the NIC is sending to (probe_schedule.h): theirs is the
    // detection that stalls a job, `misses` of these.
    std::chrono::milliseconds activeInterval{20};
    bool operator==(const SteerParams&) const = default;
};

class SteerPolicy {
  public:
    explicit SteerPolicy(size_t ports, SteerParams p = {}) : ports_(ports), p_(p) {}
    void setParams(const SteerParams& p) { p_ = p; }  // a new interval or miss count

    void addPeer(const IpAddr& peer, Clock::time_point now);
    void removePeer(const IpAddr& peer);
    void answered(const IpAddr& peer, size_t port, Clock::time_point now);
    void setPortUp(size_t port, bool up, Clock::time_point now);
    // `peer` is probed at the active interval (or no longer): its silence is counted in
    // those from `now` on, so a peer just made active is not silent for its idle past.
    void setActive(const IpAddr& peer, bool active, Clock::time_point now);
    // A switch of `port`'s plane says it lost the peers in `subject` (a fast notice,
    // proto/fnn_wire.md): they are silent there from `now` until the plane answers again,
    // later than an answer already on its way could be. Returns how many peers it named.
    size_t notified(const IpPrefix& subject, size_t port, Clock::time_point now);

    // The port `peer` must be pinned to, or nullopt for the bond's own hash (every port
    // answers, or none does, or only one port is up anyway).
    std::optional<size_t> pinFor(const IpAddr& peer, Clock::time_point now) const;
    std::vector<IpAddr> peers() const;
    bool hasPeer(const IpAddr& peer) const { return peers_.count(peer) > 0; }
    size_t peerCount() const { return peers_.size(); }
    bool portUp(size_t port) const { return up_.count(port) == 0 || up_.at(port); }

  private:
    struct Peer {
        std::vector<Clock::time_point> lastAnswer;  // per port; at first, when added
        std::vector<Clock::time_point> notifiedAt;  // per port: the last notice of its loss
        bool active = false;
        Clock::time_point speedSince{};  // when it last changed interval
    };
    bool silent(const Peer& peer, size_t port, Clock::time_point now) const;
    size_t ports_;
    SteerParams p_;
    std::map<IpAddr, Peer> peers_;
    std::map<size_t, bool> up_;
    std::map<size_t, Clock::time_point> upSince_;
};

// Whether a sampled destination is a peer on another rail, reached through the gateway:
// inside the fabric, outside the bond's own subnet (those are on-link), not the gateway.
bool remotePeer(const IpAddr& dst, const IpPrefix& bondSubnet, const IpPrefix& fabric,
                const IpAddr& gateway);

}  // namespace twinrail::planesteer
