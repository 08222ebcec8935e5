// UDP collector for INT telemetry reports (libs/telemetry parses them). Each INT report
// of this switch (the group header's node id, when configured) whose egress port id maps
// to a configured port becomes that port's latest INT observation. A datagram that fails
// to parse is counted, logged at most once per second, and dropped whole.
//
// Trust comes first: INT is plain UDP, so anyone who can reach the port could move a
// link's weight or hide real congestion. Each datagram's received source address (and,
// when configured, the interface it arrived on) is checked against IntTrust before a byte
// of it is parsed; a refused one is counted, logged at most once per period, and dropped.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "twinrail/common/ip.h"

namespace twinrail::pathqd {

struct IntObservation {
    std::optional<double> latencySeconds;
    std::optional<double> queueBytes;
    std::optional<double> utilFraction;
    std::chrono::steady_clock::time_point at;
};

struct IntStats {
    uint64_t packets = 0;
    uint64_t bad = 0;
    uint64_t hops = 0;
    uint64_t unmapped = 0;  // hops of other nodes or unknown port ids
    // Datagrams dropped unread: from a source not in IntTrust::sources, or (counted in
    // both) received on another interface than IntTrust::interface. Not in `packets`.
    uint64_t refused = 0;
    uint64_t refusedInterface = 0;
};

struct IntTrust {
    std::vector<IpPrefix> sources;  // empty: nothing is accepted
    std::string interface;          // non-empty: only datagrams received on it
};

// `source` as a sender's address is matched: an IPv4 sender reaches the dual-stack socket
// as ::ffff:a.b.c.d and is matched as a.b.c.d, against IPv4 entries only, so a mapped
// address can neither dodge an IPv4 entry nor slip in under an IPv6 one.
IpAddr unmapV4(const IpAddr& source);
bool intSourceAllowed(const std::vector<IpPrefix>& sources, const IpAddr& source);

enum class IntVerdict { Accept, RefusedSource, RefusedInterface };

struct IntMapping {
    std::optional<uint32_t> nodeId;
    std::map<uint16_t, std::string> ports;  // INT egress port id -> port name
    double latencyUnitNs = 1, queueUnitBytes = 1, utilScale = 1000;
};

// The INT edge: telemetry reports in, the latest observation per port out.
// IntCollector is the real one (a UDP socket); unit tests set observations through a fake.
class IntReports {
  public:
    virtual ~IntReports() = default;
    virtual void start() = 0;  // throws std::runtime_error when the port cannot be bound
    virtual void setMapping(IntMapping mapping) = 0;
    virtual void setTrust(IntTrust trust) = 0;
    virtual const IntObservation* latest(const std::string& port) const = 0;
    virtual const IntStats& stats() const = 0;
};
// A collector on UDP `port`; may throw std::runtime_error (no socket).
using IntReportsFactory =
    std::function<std::unique_ptr<IntReports>(uint16_t port, IntMapping mapping, IntTrust trust)>;

class IntCollector final : public IntReports {
  public:
    IntCollector(boost::asio::io_context& io, uint16_t port, IntMapping mapping, IntTrust trust);
    ~IntCollector() override;
    IntCollector(const IntCollector&) = delete;
    IntCollector& operator=(const IntCollector&) = delete;

    void start() override;
    uint16_t boundPort() const;  // the UDP port after start() (port 0: the kernel's pick)
    void setMapping(IntMapping mapping) override { mapping_ = std::move(mapping); }
    void setTrust(IntTrust trust) override;
    const IntObservation* latest(const std::string& port) const override;
    const IntStats& stats() const override { return stats_; }
    // The trust decision for one datagram: its source as received, and the ifindex it
    // arrived on (0: unknown, refused when an interface is required). Counts and logs a
    // refusal. Pure apart from that, so tests can inject any sender.
    IntVerdict admit(const IpAddr& source, int ifindex);
    // One datagram as received (the socket path, and tests): admitted, then parsed.
    void handleFrom(const IpAddr& source, int ifindex, std::span<const uint8_t> datagram);

  private:
    void armRead();
    void receive();
    void handle(std::span<const uint8_t> datagram);  // only after admit()
    int fd_ = -1;
    uint16_t port_;
    IntMapping mapping_;
    IntTrust trust_;
    int trustIfindex_ = 0;  // trust_.interface resolved; looked up again when it differs
    std::chrono::steady_clock::time_point trustResolvedAt_{};
    std::chrono::steady_clock::time_point lastRefusalLog_{};
    std::unique_ptr<boost::asio::posix::stream_descriptor> descriptor_;
    std::map<std::string, IntObservation> latest_;
    IntStats stats_;
    std::chrono::steady_clock::time_point lastWarning_{};
};

}  // namespace twinrail::pathqd
