#include "daemon.h"

#include <linux/rtnetlink.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "state_rows.h"
#include "twinrail/common/log.h"
#include "twinrail/common/notify.h"
#include "twinrail/netlink/link_stats.h"
#include "twinrail/redis/warm_restart.h"

namespace twinrail::pathqd {
namespace {

constexpr int kFreshPeriods = 3;      // INT and probe samples older than this are stale
constexpr int kLostPeriods = 10;      // no probe reply for this long: the link is choking
constexpr int kPeerWaitPeriods = 10;  // the longest the first publish waits for neighbours

uint32_t toU32(double v) {
    return static_cast<uint32_t>(std::clamp(std::llround(v), 0LL, 0xffffffffLL));
}

}  // namespace

Daemon::Daemon(boost::asio::io_context& io, Config config, DaemonOptions options, Edges edges)
    : io_(io),
      cfg_(std::move(config)),
      options_(options),
      edges_(std::move(edges)),
      frr_(options_.useFrr ? edges_.frr.get() : nullptr),
      sampleTimer_(io),
      weightsTimer_(io),
      statsTimer_(io),
      frrBurstTimer_(io),
      weightGroups_([this](int ifindex) { return cachedIfName(ifindex); }) {
    if (!edges_.counters) throw std::invalid_argument("pathqd: no counter source");
    if (!edges_.ifName) edges_.ifName = [](int i) { return "if" + std::to_string(i); };
    rebuildLinks();
}

Daemon::~Daemon() {
    try {
        stop();
    } catch (...) {  // NOLINT(bugprone-empty-catch): nothing to do while being destroyed
    }
}

void Daemon::rebuildLinks() {
    std::map<std::string, Link> next;
    for (const auto& [name, pc] : cfg_.ports) {
        auto it = links_.find(name);
        Link link = it != links_.end() ? std::move(it->second) : Link(cfg_.model);
        link.config = pc;
        link.filter.setParams(cfg_.model);
        next.emplace(name, std::move(link));
    }
    links_ = std::move(next);
    portNames_.clear();
    for (const auto& [name, l] : links_) portNames_.push_back(name);
}

IntMapping Daemon::intMapping() const {
    IntMapping m{
        cfg_.intNodeId, {}, cfg_.intLatencyUnitNs, cfg_.intQueueUnitBytes, cfg_.intUtilScale};
    for (const auto& [name, pc] : cfg_.ports)
        if (pc.intPortId) m.ports[*pc.intPortId] = name;
    return m;
}

void Daemon::start() {
    if (cfg_.probePort != 0 && edges_.probes) {
        prober_ = edges_.probes(cfg_.probePort);
        prober_->start();
    }
    if (cfg_.intPort != 0 && edges_.intReports) {
        int_ = edges_.intReports(cfg_.intPort, intMapping(),
                                 IntTrust{cfg_.intSources, cfg_.intInterface});
        int_->start();
    }
    if (cfg_.publish) startPublisher();
    if (frr_ != nullptr) {
        if (auto source = weightsInForce()) {
            weightAuditor_ = std::make_unique<WeightAuditor>(
                io_, *frr_, std::move(source), edges_.routeWriter, cfg_.weightAuditRepair,
                options_.periods.auditAfterRestart);
            weightAuditor_->start(cfg_.weightAuditInterval);
        }
        frr_->watchRestarts([this](const std::string& daemon) { onFrrRestart(daemon); });
    }
    if (edges_.configDb) {
        wcmp_ = std::make_unique<WcmpWatch>(io_, *edges_.configDb, options_.periods.wcmpPoll);
        wcmp_->start();
    }
    if (edges_.stateDb) startStateDb();
    log::notice("sampling ", links_.size(), " ports every ", cfg_.sampleInterval.count(), " ms",
                publisher_ ? "; publishing through FRR" : "; not publishing");
    try {
        if (edges_.routeFeed) {
            routeWatch_ = edges_.routeFeed(std::set<uint32_t>{RT_TABLE_MAIN},
                                           [this](const std::vector<netlink::RouteKey>& changed,
                                                  bool done) { onRoutes(changed, done); });
            routeWatch_->start();
        }
    } catch (const std::exception& e) {
        routeWatch_.reset();
        log::warning("kernel routes cannot be followed, no weights shown: ", e.what());
    }
    nextSample_ = quality::Clock::now();
    peerWaitUntil_ = nextSample_ + kPeerWaitPeriods * cfg_.sampleInterval;
    armSample();
    armWeights();
    armStats();
    sdNotify("READY=1\nSTATUS=sampling " + std::to_string(links_.size()) + " ports");
}

void Daemon::startStateDb() {
    stateDb_ = edges_.stateDb.get();
    qualityTable_ = std::make_unique<redis::StateTable>(
        io_, *stateDb_, kQualityTable, options_.stateDbSeparator,
        [this](const std::string& k) { return qualityRow(k); }, [this] { return qualityKeys(); });
    weightTable_ = std::make_unique<redis::StateTable>(
        io_, *stateDb_, kWeightTable, options_.stateDbSeparator,
        [this](const std::string& k) { return weightRow(k); }, [this] { return weightKeys(); });
    if (frr_ != nullptr) {
        bgpPeers_ = std::make_unique<BgpPeerMonitor>(
            io_, *frr_, *stateDb_, options_.stateDbSeparator, cfg_.bgpPeersInterval,
            options_.periods.bgpPeersFirstRead);
        bgpPeers_->start();
    }
    stateDb_->onConnected([this] {
        qualityTable_->resyncAll();
        weightTable_->resyncAll();
        if (bgpPeers_) bgpPeers_->resync();
        publishStats();
        redis::announceReconciled(*stateDb_, "pathqd", options_.stateDbSeparator);
    });
    stateDb_->start();
}

void Daemon::stop() {
    for (auto* t : {&sampleTimer_, &weightsTimer_, &statsTimer_, &frrBurstTimer_}) t->cancel();
    if (frr_ != nullptr) frr_->stopWatching();
    if (routeWatch_) routeWatch_->stop();
    if (weightAuditor_) weightAuditor_->stop();
    if (bgpPeers_) bgpPeers_->stop();
    if (wcmp_) wcmp_->stop();
    for (auto* db : {edges_.applDb.get(), edges_.asicDb.get(), edges_.countersDb.get()})
        if (db != nullptr) db->stop();
    if (stateDb_ != nullptr) stateDb_->stop();
}

void Daemon::applyConfig(const Config& next) {
    if (next == cfg_) return;
    if (next.probePort != cfg_.probePort || next.intPort != cfg_.intPort ||
        next.source != cfg_.source || next.weightAuditSource != cfg_.weightAuditSource ||
        next.sonicRelease != cfg_.sonicRelease) {
        ++stats_.configRejected;
        log::error(
            "config rejected, keeping the running config: probe_port, int_port, source, "
            "weight_audit_source and sonic_release need a restart");
        return;
    }
    cfg_ = next;
    rebuildLinks();
    if (weightAuditor_) {
        weightAuditor_->setInterval(cfg_.weightAuditInterval);
        weightAuditor_->setRepair(cfg_.weightAuditRepair);
    }
    if (int_) {
        int_->setMapping(intMapping());
        int_->setTrust(IntTrust{cfg_.intSources, cfg_.intInterface});
    }
    if (cfg_.publish) {
        startPublisher();
    } else if (publisher_) {
        // A reply to a call in flight finds the publisher gone and is dropped.
        publisher_.reset();
        log::notice("publish off: FRR's route-maps are left as they are");
    }
    log::notice("config applied: ", links_.size(), " ports");
    publish();  // ports added or removed change the route-maps
}

void Daemon::armSample() {
    // Periods are kept on a fixed grid, so a slow read does not stretch every period.
    nextSample_ += cfg_.sampleInterval;
    auto now = quality::Clock::now();
    if (nextSample_ < now) nextSample_ = now + cfg_.sampleInterval;
    sampleTimer_.expires_at(nextSample_);
    sampleTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        if (sampling_) {
            ++stats_.overruns;
        } else {
            sampling_ = true;
            edges_.counters->poll(portNames_,
                                  [this](const CounterMap& counters, const std::string& error) {
                                      sampling_ = false;
                                      onCounters(counters, error);
                                  });
        }
        armSample();
    });
}

void Daemon::onCounters(const CounterMap& counters, const std::string& error) {
    auto now = quality::Clock::now();
    if (!error.empty()) {
        if (stats_.sampleErrors++ % 100 == 0) log::warning("cannot read counters: ", error);
        return;  // keep every level as it is: no data is not bad data
    }
    ++stats_.samples;
    bool changed = false;
    for (auto& [name, link] : links_) {
        auto it = counters.find(name);
        changed |= updateLink(name, link, it == counters.end() ? nullptr : &it->second, now);
    }
    probeAndExchange(now, changed);
    // After a start FRR still holds what the last pathqd published, which counted the
    // neighbours' reported levels. Publishing before they are heard again would announce
    // full bandwidth toward every leaf and take it back a period later: a restart would
    // churn every peer's weights. So the first publish waits for every up downlink's
    // neighbour, or kPeerWaitPeriods when one has no pathqd.
    if (awaitingPeers_ && (now >= peerWaitUntil_ || neighboursHeard())) awaitingPeers_ = false;
    publishPending_ = publishPending_ || changed;
    if (publishPending_ && !awaitingPeers_) {
        publishPending_ = false;
        publish();
    }
}

bool Daemon::updateLink(const std::string& name, Link& link, const PortCounters* pc,
                        quality::Clock::time_point now) {
    quality::Signals s;
    link.present = pc != nullptr;
    link.queueSource = pc != nullptr ? pc->queueSource : "none";
    if (pc != nullptr) {
        link.ifindex = pc->ifindex != 0 ? pc->ifindex : link.ifindex;
        s.up = pc->up;
        if (auto r = link.rates.update(pc->counters, pc->sampledAt)) link.lastRates = r;
        if (link.lastRates) {
            s.txBps = link.lastRates->txBps;
            s.dropRatio = link.lastRates->dropRatio;
            s.pauseRxPps = link.lastRates->pauseRxPps;
        }
        link.ecnSource = pc->ecnSource;
        if (pc->ecn) s.ecnMarkRatio = link.marks.update(*pc->ecn, now);
        s.pfcStorm = pc->pfcStorm;
        s.queueBytes = pc->queueBytes;
        double cap = link.config.capacityBps.value_or(0);
        if (pc->capacityBps) cap = cap > 0 ? std::min(cap, *pc->capacityBps) : *pc->capacityBps;
        s.capacityBps = cap;
    } else {
        s.up = false;
    }
    overlayLatency(name, link, s, now);
    link.signals = s;
    link.breakdown = quality::evaluate(s, cfg_.model);
    int before = link.filter.published();
    if (!link.filter.update(link.breakdown.level, s.up && s.capacityBps > 0, now)) return false;
    ++stats_.levelChanges;
    link.lastChangeWall = std::chrono::system_clock::now();
    link.snapshot =
        MetricSnapshot{toU32(link.breakdown.util * 1000), toU32(s.queueBytes / 1024),
                       toU32(s.latencySeconds.value_or(0) * 1e6), toU32(s.capacityBps / 1e6)};
    log::info("port ", name, " level ", before, " -> ", link.filter.published(), " (usable ",
              formatDouble(link.breakdown.usableBps / 1e6, 1), " of ",
              formatDouble(s.capacityBps / 1e6, 1), " Mb/s, util ",
              formatDouble(link.breakdown.util, 2), ", queue ", toU32(s.queueBytes), " B, latency ",
              link.latencySource, ", ECN marked ", formatDouble(s.ecnMarkRatio, 3), ", pauses in ",
              formatDouble(s.pauseRxPps, 0), "/s", s.pfcStorm ? ", PFC storm" : "",
              "; worst: ", link.breakdown.cause, ")");
    if (qualityTable_) qualityTable_->markDirty(name);
    return true;
}

void Daemon::overlayLatency(const std::string& name, Link& link, quality::Signals& s,
                            quality::Clock::time_point now) {
    auto fresh = [now, this](quality::Clock::time_point at) {
        return now - at <= kFreshPeriods * cfg_.sampleInterval;
    };
    link.latencySource = "none";
    link.displayLatency.reset();
    if (const IntObservation* o = int_ ? int_->latest(name) : nullptr;
        o != nullptr && fresh(o->at)) {
        if (o->queueBytes) {
            s.queueBytes = *o->queueBytes;
            link.queueSource = "int";
        }
        if (o->utilFraction && s.capacityBps > 0) s.txBps = *o->utilFraction * s.capacityBps;
        if (o->latencySeconds) {
            s.latencySeconds = *o->latencySeconds - link.floor.update(*o->latencySeconds, now);
            link.displayLatency = o->latencySeconds;
            link.latencySource = "int";
            return;
        }
    }
    const LinkProber::PortView* v = prober_ && link.ifindex ? prober_->view(link.ifindex) : nullptr;
    if (v == nullptr || !v->lastReply) return;  // never answered: no pathqd there, no signal
    if (fresh(*v->lastReply) && v->forwardSeconds) {
        s.latencySeconds = *v->forwardSeconds - link.floor.update(*v->forwardSeconds, now);
        link.displayLatency = *v->rttSeconds / 2;
        link.latencySource = "probe";
    } else if (s.up && now - *v->lastReply > kLostPeriods * cfg_.sampleInterval && v->peerLevelAt &&
               now - *v->peerLevelAt <= kLostPeriods * cfg_.sampleInterval) {
        // The neighbour still probes us but our probes or its replies are lost: they are
        // dropped in a full queue. (When nothing arrives at all, its pathqd is down or
        // restarting: that says nothing about the link.)
        s.latencySeconds = cfg_.model.latencyRefSeconds;
        link.latencySource = "lost";
    }
}

bool Daemon::neighboursHeard() const {
    if (!prober_) return true;
    for (const auto& [name, link] : links_) {
        if (link.config.role != Role::Downlink || link.ifindex == 0 || !link.signals.up) continue;
        const LinkProber::PortView* v = prober_->view(link.ifindex);
        if (v == nullptr || !v->peerLevelAt) return false;
    }
    return true;
}

void Daemon::probeAndExchange(quality::Clock::time_point now, bool& changed) {
    if (!prober_) return;
    for (auto& [name, link] : links_) {
        if (link.ifindex == 0) continue;
        prober_->probe(link.ifindex, static_cast<uint8_t>(link.filter.published()));
        if (link.config.role != Role::Downlink) continue;
        const LinkProber::PortView* v = prober_->view(link.ifindex);
        int peer = 0;
        if (v != nullptr && v->peerLevelAt && now - *v->peerLevelAt <= cfg_.peerReportTimeout)
            peer = v->peerLevel;
        if (peer == link.peerLevel) continue;
        log::info("port ", name, ": the neighbour reports its uplink level ", link.peerLevel,
                  " -> ", peer);
        link.peerLevel = peer;
        changed = true;
        if (qualityTable_) qualityTable_->markDirty(name);
    }
}

}  // namespace twinrail::pathqd
