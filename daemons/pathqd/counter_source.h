// Where per-port byte counters, queue backlog and capacity come from, behind one
// interface: Linux (netlink link stats64 + root qdisc statistics + ethtool speed) or
// SONiC (sonic_counter_source.h: COUNTERS_DB through the name maps, speed and status the
// way portstat reads them).
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "twinrail/quality/quality.h"

namespace twinrail::pathqd {

struct PortCounters {
    int ifindex = 0;  // 0 when the source does not know it (SONiC)
    bool up = false;
    quality::Counters counters;
    // When the hardware took `counters`: the read time for live counters (Linux); for
    // SONiC the flex-counter poll that wrote them, inferred from when they changed. The
    // same instant as last period means nothing new was polled. Unset: not known yet
    // (no rate from this read). Rates are taken between these instants.
    std::optional<quality::Clock::time_point> sampledAt;
    double queueBytes = 0;
    // Where queueBytes comes from: "qdisc" (Linux root qdisc backlog), "curr_occupancy",
    // "watermark", "periodic_watermark" (SONiC, see sonic_rules.h) or "none".
    std::string queueSource = "none";
    std::optional<double> capacityBps;  // from the hardware: speed or shaper, lowest
    // ECN marks and the packets they are a share of: Linux, the port's qdiscs' mark
    // counters over its tx packets; SONiC, the port's unicast queues' WRED_ECN_MARKED
    // over their packets. Unset: nothing on this port counts marks.
    std::optional<quality::MarkCounters> ecn;
    std::string ecnSource = "none";  // "qdisc", "queue_counters" or "none"
    bool pfcStorm = false;           // SONiC: PFC_WD_STATUS stormed on a queue of the port
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

// The kernel reads (two netlink dumps and an ethtool ioctl per port every period) run on a
// worker thread of their own, never on the event loop; `done` is posted back to the loop.
// One read at a time: the daemon does not poll again before `done` (it counts an overrun).
class LinuxCounterSource final : public CounterSource {
  public:
    explicit LinuxCounterSource(boost::asio::io_context& io);
    ~LinuxCounterSource() override;  // joins the worker; a read still posted is dropped
    LinuxCounterSource(const LinuxCounterSource&) = delete;
    LinuxCounterSource& operator=(const LinuxCounterSource&) = delete;
    void poll(const std::vector<std::string>& ports,
              std::function<void(CounterMap, std::string)> done) override;

  private:
    struct Request {
        std::vector<std::string> ports;
        std::function<void(CounterMap, std::string)> done;
    };
    void work();
    CounterMap read(const std::vector<std::string>& ports);  // on the worker; throws

    boost::asio::io_context& io_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::optional<Request> request_;
    bool stopping_ = false;
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // posted results check it
    // Worker only.
    std::map<std::string, std::pair<std::optional<double>, std::chrono::steady_clock::time_point>>
        speeds_;
    std::thread worker_;  // last: started once everything above exists
};

}  // namespace twinrail::pathqd
