// pathqd's modules on one io_context: every sample period the counter source is read,
// INT and probe latencies are overlaid, each port's quality filter decides its level,
// and changed levels go to the FRR publisher (downlinks) and into the probes (uplinks,
// so the spine learns them). Redis is a side channel: nothing waits for it. Every edge
// (counters, FRR, Redis, kernel routes, sockets, interface names) comes in through Edges.
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
#include "edges.h"
#include "frr_publisher.h"
#include "int_collector.h"
#include "link_probe.h"
#include "twinrail/netlink/route_watch.h"
#include "twinrail/quality/quality.h"
#include "twinrail/redis/client.h"
#include "twinrail/redis/state_table.h"
#include "wcmp_watch.h"
#include "weight_auditor.h"
#include "weight_groups.h"

namespace twinrail::pathqd {

// The daemon's own housekeeping periods; unit tests shorten them.
struct DaemonPeriods {
    std::chrono::milliseconds stats{1000};         // PATH_QUALITY_TABLE rewritten, PATHQD_STATS
    int frrAuditEvery = 30;                        // stats periods between re-reads of FRR's config
    std::chrono::milliseconds frrBurst{1000};      // after a bgpd/zebra start, re-apply this often
    std::chrono::milliseconds frrBurstFor{20000};  //   for this long
    std::chrono::milliseconds frrRetry{1000};      // FRR unreachable or refused: try again
    std::chrono::milliseconds auditAfterRestart{10000};  // weight audit after an FRR restart
    std::chrono::milliseconds bgpPeersFirstRead{1000};
    std::chrono::milliseconds wcmpPoll{10000};  // CONFIG_DB wcmp_enabled re-read
};

struct DaemonOptions {
    char stateDbSeparator = '|';
    bool useFrr = true;  // publish route-maps, audit weights and read BGP sessions
    DaemonPeriods periods;
};

// Everything pathqd knows about one configured port.
struct Link {
    PortConfig config;
    int ifindex = 0;
    bool present = false;
    quality::RateTracker rates;
    quality::MarkRatio marks;
    std::string ecnSource = "none";
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

class Daemon {
  public:
    // edges.counters is required; every other edge may be empty (that part is off).
    Daemon(boost::asio::io_context& io, Config config, DaemonOptions options, Edges edges);
    ~Daemon();
    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;

    void start();  // throws when a socket (probes, INT) cannot be opened
    void stop();   // leaves FRR configuration and routes as they are
    // A config that needs a restart (probe_port, int_port, source) is refused: the running
    // one stays. publish off drops the publisher and leaves FRR as it is.
    void applyConfig(const Config& next);
    const DaemonStats& stats() const { return stats_; }

  private:
    void armSample();
    void onCounters(const CounterMap& counters, const std::string& error);
    bool updateLink(const std::string& name, Link& link, const PortCounters* pc,
                    quality::Clock::time_point now);
    void overlayLatency(const std::string& name, Link& link, quality::Signals& s,
                        quality::Clock::time_point now);
    void probeAndExchange(quality::Clock::time_point now, bool& changed);
    bool neighboursHeard() const;
    void publish();
    void rebuildLinks();
    void armWeights();
    void refreshWeights();
    void onRoutes(const std::vector<netlink::RouteKey>& changed, bool snapshotDone);
    const std::vector<netlink::RouteWeights>& kernelRoutes();
    std::string cachedIfName(int ifindex);
    std::unique_ptr<ForwardingWeights> weightsInForce();
    void startPublisher();
    void startStateDb();
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
    Edges edges_;                           // first: every module below may hold a reference
    frr::Channel* frr_ = nullptr;           // edges_.frr when FRR is used
    redis::Connection* stateDb_ = nullptr;  // edges_.stateDb once started
    std::map<std::string, Link> links_;
    std::vector<std::string> portNames_;
    std::unique_ptr<LinkProbes> prober_;
    std::unique_ptr<IntReports> int_;
    std::unique_ptr<FrrPublisher> publisher_;
    std::unique_ptr<WeightAuditor> weightAuditor_;
    // BGP's multipath routes followed by route events (no dump per period: at 100k routes
    // that dump was most of pathqd's CPU); rows rebuilt at most once per weightsInterval,
    // and only when a route changed.
    std::unique_ptr<netlink::RouteFeed> routeWatch_;
    bool weightsDirty_ = true;
    std::vector<netlink::RouteWeights> kernelRoutes_;  // the weight audit's input
    std::unordered_map<int, std::string> ifNames_;
    std::chrono::steady_clock::time_point frrBurstUntil_{};
    std::unique_ptr<redis::StateTable> qualityTable_, weightTable_;
    std::unique_ptr<BgpPeerMonitor> bgpPeers_;
    std::unique_ptr<WcmpWatch> wcmp_;  // on SONiC: bgpcfgd's static W-ECMP knob
    boost::asio::steady_timer sampleTimer_, weightsTimer_, statsTimer_, frrBurstTimer_;
    WeightGroups weightGroups_;
    quality::Clock::time_point nextSample_;
    bool sampling_ = false;
    // The first publish after a start waits for the neighbours' reports (neighboursHeard).
    bool awaitingPeers_ = true;
    bool publishPending_ = false;
    quality::Clock::time_point peerWaitUntil_{};
    int auditCountdown_ = 0;
    DaemonStats stats_;
};

}  // namespace twinrail::pathqd
