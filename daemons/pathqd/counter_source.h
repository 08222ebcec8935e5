// Where per-port byte counters, queue backlog and capacity come from, behind one
// interface: Linux (netlink link stats64 + root qdisc statistics + ethtool speed) or
// SONiC (COUNTERS_DB through the name maps, speed and status from APPL_DB PORT_TABLE).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "twinrail/quality/quality.h"
#include "twinrail/redis/client.h"

namespace twinrail::pathqd {

struct PortCounters {
    int ifindex = 0;  // 0 when the source does not know it (SONiC)
    bool up = false;
    quality::Counters counters;
    double queueBytes = 0;
    std::optional<double> capacityBps;  // from the hardware: speed or shaper, lowest
};

using CounterMap = std::map<std::string, PortCounters>;

class CounterSource {
  public:
    virtual ~CounterSource() = default;
    // Reads `ports` and calls `done` (possibly later, on the loop). Ports the source
    // cannot see are absent from the map; `error` is set when the read failed whole.
    virtual void poll(const std::vector<std::string>& ports,
                      std::function<void(CounterMap counters, std::string error)> done) = 0;
};

class LinuxCounterSource final : public CounterSource {
  public:
    void poll(const std::vector<std::string>& ports,
              std::function<void(CounterMap, std::string)> done) override;

  private:
    std::map<std::string, std::pair<std::optional<double>, std::chrono::steady_clock::time_point>>
        speeds_;
};

class SonicCounterSource final : public CounterSource {
  public:
    SonicCounterSource(boost::asio::io_context& io, const redis::Endpoint& counters, int countersDb,
                       const redis::Endpoint& appl, int applDb);
    void poll(const std::vector<std::string>& ports,
              std::function<void(CounterMap, std::string)> done) override;

  private:
    struct Oids {
        std::string port;
        std::vector<std::string> queues;
    };
    void resolve(const std::string& port);
    redis::Client counters_, appl_;
    std::map<std::string, Oids> oids_;
    bool busy_ = false;
};

}  // namespace twinrail::pathqd
