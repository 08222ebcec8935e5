// Sends an ARP request for a peer out one given port of a bond, bypassing the bond, and
// hears who answers on which port. A classic BPF filter in the kernel keeps everything
// but ARP replies out of user space, so a port carrying 200G costs nothing here. A reply
// counts only when it answers a request of ours on that port (probe_match.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "packet_port.h"
#include "probe_match.h"
#include "twinrail/common/ip.h"

namespace twinrail::planesteer {

struct ProberCounters {
    uint64_t sent = 0, sendErrors = 0, answers = 0;
};

class ArpProber {
  public:
    using Answer = std::function<void(size_t port, const IpAddr& peer, const MacAddr& mac)>;
    ArpProber(const PacketPortFactory& open, const std::vector<std::string>& ports, Now now,
              Answer onAnswer);
    void start();  // throws std::system_error when a port cannot be opened
    // `ourMac`/`ourIp`: the bond's; returns false when the kernel refused to send.
    bool probe(size_t port, const MacAddr& ourMac, const IpAddr& ourIp, const IpAddr& peer);
    void setLimits(std::chrono::milliseconds window, size_t capacity) {
        matcher_.setLimits(window, capacity);
    }
    void expire() { matcher_.expire(now_()); }
    void portDown(size_t port) { matcher_.portDown(port); }  // its next leaf may differ
    const ProberCounters& counters() const { return counters_; }
    const MatchCounters& matchCounters() const { return matcher_.counters(); }

  private:
    void heard(size_t port, const uint8_t* data, size_t len, int pkttype);

    std::vector<std::unique_ptr<PacketPort>> ports_;
    Now now_;
    Answer onAnswer_;
    ProberCounters counters_;
    ArpMatcher matcher_;
    IpAddr ourIp_;
};

}  // namespace twinrail::planesteer
