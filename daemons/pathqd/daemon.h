// pathqd's modules on one io_context: every sample period the counter source is read,
// INT and probe latencies are overlaid, each port's quality filter decides its level,
// and changed levels go to the FRR publisher (downlinks) and into the probes (uplinks,
// so the spine learns them). Redis is a side channel: nothing waits for it.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "bgp_peers.h"
#include "config.h"
#include "counter_source.h"
#include "frr_publisher.h"
#include "int_collector.h"
#include "link_probe.h"
#include "twinrail/frr/restart_watcher.h"
#include "twinrail/netlink/route_watch.h"
#include "twinrail/quality/quality.h"
#include "twinrail/redis/client.h"
#include "twinrail/redis/state_table.h"
#include "weight_auditor.h"
#include "weight_groups.h"

namespace twinrail::pathqd {

struct DaemonOptions {
    std::optional<redis::Endpoint> stateDb;
    int stateDbId = 6;
    char stateDbSeparator = '|';
    frr::VtyshOptions vtysh;
    bool useFrr = true;
};

// Everything pathqd knows about one configured port.
struct Link {
    PortConfig config;
    int ifindex = 0;
    bool present = false;
    quality::RateTracker rates;
    quality::LatencyFloor floor;
    quality::Filter filter;
    quality::Signals signals;
    quality::Breakdown breakdown;
    std::optional<quality::RateTracker::Rates> lastRates;
    MetricSnapshot snapshot;  // taken when the level last changed; what BGP carries
    int peerLevel = 0;        // downlinks: the leaf's reported uplink level (0 unknown)
    std::string latencySource = "none";
    std::string queueSource = "none";      // which SONiC counter (or INT) gave queue_bytes
    std::optional<double> displayLatency;  // RTT/2 or INT hop latency, for operators
    std::chrono::system_clock::time_point lastChangeWall{};
    explicit Link(const quality::Params& p) : filter(p) {}
};

struct DaemonStats {
    uint64_t samples = 0;
    uint64_t sampleErrors = 0;
    uint64_t overruns = 0;  // a period started while the last read was still running
    uint64_t levelChanges = 0;
    uint64_t configRejected = 0;
    uint64_t redisErrors = 0;     // STATE_DB writes refused
    uint64_t frrRestarts = 0;     // bgpd/zebra starts seen
    uint64_t weightRebuilds = 0;  // PATH_WEIGHT_TABLE recomputed (a route changed)
};

// The interface name of `ifindex`, or "if<n>" when it is gone.
std::string ifName(int ifindex);

class Daemon {
  public:
    Daemon(boost::asio::io_context& io, Config config, DaemonOptions options,
           std::unique_ptr<CounterSource> source);
    void start();
    void stop();  // leaves FRR configuration and routes as they are
    void applyConfig(const Config& next);

  private:
    void armSample();
    void onCounters(const CounterMap& counters, const std::string& error);
    bool updateLink(const std::string& name, Link& link, const PortCounters* pc,
                    quality::Clock::time_point now);
    void overlayLatency(const std::string& name, Link& link, quality::Signals& s,
                        quality::Clock::time_point now);
    void probeAndExchange(quality::Clock::time_point now, bool& changed);
    void publish();
    void rebuildLinks();
    void armWeights();
    void refreshWeights();
    void onRoutes(const std::vector<netlink::RouteKey>& changed, bool snapshotDone);
    const std::vector<netlink::RouteWeights>& kernelRoutes();
    std::string cachedIfName(int ifindex);
    void armStats();
    void publishStats();
    void onFrrRestart(const std::string& daemon);
    void armFrrBurst();
    std::optional<redis::Fields> qualityRow(const std::string& port) const;
    std::vector<std::string> qualityKeys() const;
    std::optional<redis::Fields> weightRow(const std::string& key) const;
    std::vector<std::string> weightKeys() const;
    IntMapping intMapping() const;

    boost::asio::io_context& io_;
    Config cfg_;
    DaemonOptions options_;
    std::unique_ptr<CounterSource> source_;
    std::map<std::string, Link> links_;
    std::vector<std::string> portNames_;
    std::unique_ptr<LinkProber> prober_;
    std::unique_ptr<IntCollector> int_;
    std::unique_ptr<FrrPublisher> publisher_;
    std::unique_ptr<frr::RestartWatcher> frrWatcher_;
    std::unique_ptr<WeightAuditor> weightAuditor_;
    // BGP's multipath routes followed by route events (no dump per period: at 100k routes
    // that dump was most of pathqd's CPU); rows rebuilt at most once per weightsInterval,
    // and only when a route changed.
    std::unique_ptr<netlink::RouteWatch> routeWatch_;
    bool weightsDirty_ = true;
    std::vector<netlink::RouteWeights> kernelRoutes_;  // the weight audit's input
    std::unordered_map<int, std::string> ifNames_;
    std::chrono::steady_clock::time_point frrBurstUntil_{};
    std::unique_ptr<redis::Client> stateDb_;
    std::unique_ptr<redis::StateTable> qualityTable_, weightTable_;
    std::unique_ptr<BgpPeerMonitor> bgpPeers_;  // after stateDb_: goes first
    boost::asio::steady_timer sampleTimer_, weightsTimer_, statsTimer_, frrBurstTimer_;
    WeightGroups weightGroups_;
    quality::Clock::time_point nextSample_;
    bool sampling_ = false;
    int auditCountdown_ = 0;
    DaemonStats stats_;
};

}  // namespace twinrail::pathqd
