// UDP collector for INT telemetry reports (libs/telemetry parses them). Each INT report
// of this switch (the group header's node id, when configured) whose egress port id maps
// to a configured port becomes that port's latest INT observation. A datagram that fails
// to parse is counted, logged at most once per second, and dropped whole.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>

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
};

struct IntMapping {
    std::optional<uint32_t> nodeId;
    std::map<uint16_t, std::string> ports;  // INT egress port id -> port name
    double latencyUnitNs = 1, queueUnitBytes = 1, utilScale = 1000;
};

class IntCollector {
  public:
    IntCollector(boost::asio::io_context& io, uint16_t port, IntMapping mapping);
    ~IntCollector();
    IntCollector(const IntCollector&) = delete;
    IntCollector& operator=(const IntCollector&) = delete;

    void start();  // throws std::runtime_error when the port cannot be bound
    void setMapping(IntMapping mapping) { mapping_ = std::move(mapping); }
    const IntObservation* latest(const std::string& port) const;
    const IntStats& stats() const { return stats_; }
    // Feeds one datagram (the socket path, and tests).
    void handle(std::span<const uint8_t> datagram);

  private:
    void armRead();
    void receive();
    int fd_ = -1;
    uint16_t port_;
    IntMapping mapping_;
    std::unique_ptr<boost::asio::posix::stream_descriptor> descriptor_;
    std::map<std::string, IntObservation> latest_;
    IntStats stats_;
    std::chrono::steady_clock::time_point lastWarning_{};
};

}  // namespace twinrail::pathqd
