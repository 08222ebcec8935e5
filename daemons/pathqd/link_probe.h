// Latency probes over each fabric link, and the in-band exchange of uplink levels.
//
// Every sample period pathqd sends a 32-byte UDP probe to ff02::1 on each configured
// port (hop limit 1, so only the neighbour on that link hears it), and answers the
// neighbour's probes the same way. Each port has its own socket connected to
// ff02::1%port, so the kernel looks the route up once, not once per packet (with 64
// ports the per-packet lookups were most of pathqd's CPU). The neighbour's
// pathqd echoes our send time and adds its own receive time. RTT/2 is shown to
// operators; the quality model uses the one-way delay (peer receive - our send). It
// carries the unknown offset between the two clocks, which the model's latency floor
// cancels, and unlike the RTT it does not include the neighbour's own egress queue: a
// leaf whose spine is congested toward it must not think its own uplink is. Each probe and reply
// also carries the sender's published egress level on that link: this is how a spine learns its
// leaves' uplink levels (see frr_policy.h for why the spine, not the leaf, applies them).
//
// Wire format (network order): magic "TRPQ" | version 1 | type (1 probe, 2 reply) |
// level (0 unknown) | reserved | sequence u32 | sender's send time u64 (echoed in the
// reply) | replier's receive time u64 (0 in probes) | reserved u32.
#pragma once

#include <netinet/in.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>

namespace twinrail::pathqd {

struct ProbeMessage {
    uint8_t type = 1;
    uint8_t level = 0;
    uint32_t sequence = 0;
    uint64_t timestampNs = 0;
    uint64_t peerReceiveNs = 0;
};

inline constexpr size_t kProbeBytes = 32;
std::array<uint8_t, kProbeBytes> encodeProbe(const ProbeMessage& m);
std::optional<ProbeMessage> decodeProbe(std::span<const uint8_t> bytes);

struct ProbeStats {
    uint64_t sent = 0;
    uint64_t sendErrors = 0;
    uint64_t replies = 0;
    uint64_t answered = 0;  // probes from neighbours we replied to
    uint64_t malformed = 0;
    uint64_t refused = 0;  // not from a link-local neighbour on a port we probe
};

// Whether a probe or reply may be believed: from a link-local source (a router never
// forwards one, so only a host on that link can send it) and on a port pathqd probes (a
// fabric link; a server on a host port is never on one). Anything else could set a link's
// latency or its peer's level from afar.
bool trustedProbe(const in6_addr& source, bool probedPort);

// The probe edge: probes out on each port, the neighbours' probes and replies in.
// LinkProber is the real one (UDP sockets); unit tests set what each port has heard
// through a fake.
class LinkProbes {
  public:
    using Clock = std::chrono::steady_clock;
    struct PortView {
        std::optional<double> rttSeconds;
        std::optional<double> forwardSeconds;        // one-way, plus the clock offset
        std::optional<Clock::time_point> lastReply;  // for loss detection
        int peerLevel = 0;
        std::optional<Clock::time_point> peerLevelAt;
    };
    virtual ~LinkProbes() = default;
    virtual void start() = 0;  // throws std::runtime_error when the socket cannot be bound
    // Sends one probe on `ifindex`, carrying our current level on that link.
    virtual void probe(int ifindex, uint8_t ourLevel) = 0;
    virtual const PortView* view(int ifindex) const = 0;
    virtual const ProbeStats& stats() const = 0;
};
// Probes on UDP `port`; may throw std::runtime_error (no socket).
using LinkProbesFactory = std::function<std::unique_ptr<LinkProbes>(uint16_t port)>;

class LinkProber final : public LinkProbes {
  public:
    LinkProber(boost::asio::io_context& io, uint16_t port);
    ~LinkProber() override;
    LinkProber(const LinkProber&) = delete;
    LinkProber& operator=(const LinkProber&) = delete;

    void start() override;
    void probe(int ifindex, uint8_t ourLevel) override;
    const PortView* view(int ifindex) const override;
    const ProbeStats& stats() const override { return stats_; }

  private:
    void armRead();
    void receive();
    int portSocket(int ifindex);  // connected to ff02::1%ifindex; -1 on failure
    int fd_ = -1;
    std::unordered_map<int, int> portFds_;
    uint16_t port_;
    uint32_t sequence_ = 0;
    std::unique_ptr<boost::asio::posix::stream_descriptor> descriptor_;
    std::unordered_map<int, PortView> ports_;
    std::unordered_map<int, uint8_t> levels_;  // what we tell each neighbour in replies
    ProbeStats stats_;
};

}  // namespace twinrail::pathqd
