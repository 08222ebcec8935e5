// hostrouted's packet edge as a fake: the probes the daemon sends are recorded, and a
// test plays in the ARP/ND a host sends (heard), as the packet sockets would deliver it.
#pragma once

#include <vector>

#include "prober.h"

namespace twinrail::fakes {

class FakeHostProber final : public hostrouted::HostProber {
  public:
    FakeHostProber(SeenHandler onSeen, std::function<void()> onBatchEnd)
        : onSeen_(std::move(onSeen)), onBatchEnd_(std::move(onBatchEnd)) {}
    void start() override { started = true; }
    bool probe(const hostrouted::ProbeTarget& t) override {
        sent.push_back(t);
        ++stats_.sent;
        return true;
    }
    const hostrouted::ProberStats& stats() const override { return stats_; }

    // One frame from a host: its sender address and source MAC, on a port.
    void heard(int ifindex, const IpAddr& ip, const std::optional<MacAddr>& mac) {
        ++stats_.received;
        onSeen_(ifindex, ip, mac);
        onBatchEnd_();
    }
    size_t probesTo(const IpAddr& ip) const {
        size_t n = 0;
        for (const auto& t : sent) n += t.target == ip ? 1 : 0;
        return n;
    }
    std::vector<hostrouted::ProbeTarget> sent;
    bool started = false;

  private:
    SeenHandler onSeen_;
    std::function<void()> onBatchEnd_;
    hostrouted::ProberStats stats_;
};

}  // namespace twinrail::fakes
