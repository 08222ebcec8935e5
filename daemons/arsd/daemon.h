// arsd: the software ARS data path driven from the kernel and the config. It mirrors every
// route of the kernel's main and local tables into the datapath (route_mirror.h), samples
// the eligible ports' load and queue every sampling interval into quality bands, attaches
// the program to every front-panel port's ingress and marks the pinned ones. Every edge
// comes in through Edges; nothing here blocks the loop but one netlink dump per sample.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config.h"
#include "edges.h"
#include "route_mirror.h"
#include "twinrail/ars/quality.h"

namespace twinrail::arsd {

struct DaemonStats {
    uint64_t samples = 0;
    uint64_t sampleErrors = 0;
    uint64_t bandChanges = 0;
    uint64_t routesSet = 0;
    uint64_t routesRemoved = 0;
};

class Daemon {
  public:
    Daemon(boost::asio::io_context& io, Config cfg, Edges edges);
    ~Daemon();
    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;

    void start();  // throws when the datapath cannot be loaded or the routes not read
    // A later good config (SIGHUP): mode, idle time and global are applied with
    // configure(); ports, pins, interfaces and ARS_NEXTHOPS take effect at once; a new
    // max_flows makes a new datapath (the flow table's size is fixed when it is made).
    void applyConfig(const Config& cfg);
    // SIGTERM: every port detached (the kernel forwards alone again), no route touched.
    void stop();
    // One quality sample now (the timer calls it; tests call it directly).
    void sampleNow();

    const DaemonStats& stats() const { return stats_; }
    std::chrono::microseconds samplingPeriod() const;
    const std::map<std::string, int>& attached() const { return attached_; }
    // READY=1 went to systemd: the routes' first snapshot is mirrored (or ARS is off).
    bool ready() const { return ready_; }

  private:
    void ensureDatapath();
    void startFeed();
    void rebuildDatapath();
    void applyPorts();
    void applyPolicy();
    void onRoutes(const std::vector<netlink::RouteKey>& changed, bool snapshotDone);
    void mirror(const IpPrefix& dst);
    void remirrorAll();
    void armTimer();
    void markReady();

    struct PortState {
        std::optional<PortReading> last;
        uint64_t lastNs = 0;
        ars::PortQuality quality;
        std::optional<uint8_t> sentBand;
        std::optional<uint64_t> sentRate;  // bytes per second
        uint64_t sentBacklog = 0;          // bytes
    };

    Config cfg_;
    Edges edges_;
    std::unique_ptr<ars::Datapath> datapath_;
    std::unique_ptr<netlink::RouteFeed> feed_;
    boost::asio::steady_timer timer_;
    std::map<std::string, int> attached_;  // port name -> ifindex
    std::set<int> pinned_;
    MirrorPolicy policy_;
    std::map<int, PortState> quality_;  // eligible ifindex -> its sampler state
    std::map<IpPrefix, std::vector<ars::PathNexthop>> mirrored_;
    DaemonStats stats_;
    bool stopped_ = false;
    bool ready_ = false;
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace twinrail::arsd
