#include "daemon.h"

#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include <algorithm>
#include <cmath>

#include "state_rows.h"
#include "twinrail/common/log.h"
#include "twinrail/common/notify.h"
#include "twinrail/netlink/link_stats.h"

namespace twinrail::pathqd {
namespace {

constexpr auto kStatsPeriod = std::chrono::seconds(1);
constexpr int kAuditEverySeconds = 30;
constexpr int kFreshPeriods = 3;  // INT and probe samples older than this are stale
constexpr int kLostPeriods = 10;  // no probe reply for this long: the link is choking

uint32_t toU32(double v) {
    return static_cast<uint32_t>(std::clamp(std::llround(v), 0LL, 0xffffffffLL));
}

}  // namespace

Daemon::Daemon(boost::asio::io_context& io, Config config, DaemonOptions options,
               std::unique_ptr<CounterSource> source)
    : io_(io),
      cfg_(std::move(config)),
      options_(std::move(options)),
      source_(std::move(source)),
      sampleTimer_(io),
      weightsTimer_(io),
      statsTimer_(io),
      frrBurstTimer_(io),
      weightGroups_([this](int ifindex) { return cachedIfName(ifindex); }) {
    rebuildLinks();
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
    if (cfg_.probePort != 0) {
        prober_ = std::make_unique<LinkProber>(io_, cfg_.probePort);
        prober_->start();
    }
    if (cfg_.intPort != 0) {
        int_ = std::make_unique<IntCollector>(io_, cfg_.intPort, intMapping(),
                                              IntTrust{cfg_.intSources, cfg_.intInterface});
        int_->start();
    }
    if (options_.useFrr && cfg_.publish)
        publisher_ = std::make_unique<FrrPublisher>(io_, options_.vtysh);
    if (options_.useFrr) {
        weightAuditor_ = std::make_unique<WeightAuditor>(
            io_, options_.vtysh,
            [this]() -> const std::vector<netlink::RouteWeights>& { return kernelRoutes(); },
            ifName, cfg_.weightAuditRepair);
        weightAuditor_->start(cfg_.weightAuditInterval);
        frrWatcher_ = std::make_unique<frr::RestartWatcher>(
            io_, frr::runDirectory(options_.vtysh),
            [this](const std::string& daemon) { onFrrRestart(daemon); });
        frrWatcher_->start();
    }
    if (options_.stateDb) {
        stateDb_ =
            std::make_unique<redis::Client>(io_, *options_.stateDb, options_.stateDbId, "STATE_DB");
        qualityTable_ = std::make_unique<redis::StateTable>(
            io_, *stateDb_, kQualityTable, options_.stateDbSeparator,
            [this](const std::string& k) { return qualityRow(k); },
            [this] { return qualityKeys(); });
        weightTable_ = std::make_unique<redis::StateTable>(
            io_, *stateDb_, kWeightTable, options_.stateDbSeparator,
            [this](const std::string& k) { return weightRow(k); }, [this] { return weightKeys(); });
        if (options_.useFrr) {
            bgpPeers_ = std::make_unique<BgpPeerMonitor>(
                io_, options_.vtysh, *stateDb_, options_.stateDbSeparator, cfg_.bgpPeersInterval);
            bgpPeers_->start();
        }
        stateDb_->onConnected([this] {
            qualityTable_->resyncAll();
            weightTable_->resyncAll();
            if (bgpPeers_) bgpPeers_->resync();
            publishStats();
        });
        stateDb_->start();
    }
    log::notice("sampling ", links_.size(), " ports every ", cfg_.sampleInterval.count(), " ms",
                publisher_ ? "; publishing through FRR" : "; not publishing");
    try {
        routeWatch_ = std::make_unique<netlink::RouteWatch>(
            io_, std::set<uint32_t>{RT_TABLE_MAIN},
            [this](const std::vector<netlink::RouteKey>& changed, bool done) {
                onRoutes(changed, done);
            });
        routeWatch_->start();
    } catch (const std::exception& e) {
        routeWatch_.reset();
        log::warning("kernel routes cannot be followed, no weights shown: ", e.what());
    }
    nextSample_ = quality::Clock::now();
    armSample();
    armWeights();
    armStats();
    sdNotify("READY=1\nSTATUS=sampling " + std::to_string(links_.size()) + " ports");
}

void Daemon::stop() {
    for (auto* t : {&sampleTimer_, &weightsTimer_, &statsTimer_, &frrBurstTimer_}) t->cancel();
    if (frrWatcher_) frrWatcher_->stop();
    if (routeWatch_) routeWatch_->stop();
    if (weightAuditor_) weightAuditor_->stop();
    if (bgpPeers_) bgpPeers_->stop();
    if (stateDb_) stateDb_->stop();
}

void Daemon::applyConfig(const Config& next) {
    if (next == cfg_) return;
    if (next.probePort != cfg_.probePort || next.intPort != cfg_.intPort ||
        next.source != cfg_.source) {
        ++stats_.configRejected;
        log::error(
            "config rejected, keeping the running config: probe_port, int_port and source "
            "need a restart");
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
    if (cfg_.publish && options_.useFrr && !publisher_)
        publisher_ = std::make_unique<FrrPublisher>(io_, options_.vtysh);
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
            source_->poll(portNames_, [this](const CounterMap& counters, const std::string& error) {
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
    if (changed) publish();
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
        }
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
              link.latencySource, ")");
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

void Daemon::publish() {
    if (!publisher_) return;
    PolicyInput in;
    in.levels = cfg_.model.levels;
    in.ipv4 = cfg_.ipv4;
    in.ipv6 = cfg_.ipv6;
    for (const auto& [name, link] : links_) {
        if (link.config.role != Role::Downlink) continue;
        in.downlinks[name] =
            DownlinkState{std::max(1, link.filter.published()), link.peerLevel, link.snapshot,
                          link.config.neighbor, link.filter.published() > 0};
    }
    publisher_->request(std::move(in));
}

// A restarted bgpd has only its saved config: the route-maps pathqd added at run time are
// gone until they are put back. Re-read and re-apply now, and a few more times while FRR
// loads its config and re-forms its sessions, rather than at the next 30 s audit.
void Daemon::onFrrRestart(const std::string& daemon) {
    if (daemon != "bgpd" && daemon != "zebra") return;
    ++stats_.frrRestarts;
    if (weightAuditor_) weightAuditor_->runSoon();
    frrBurstUntil_ = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    armFrrBurst();
}

void Daemon::armFrrBurst() {
    frrBurstTimer_.expires_after(std::chrono::seconds(1));
    frrBurstTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        if (publisher_) publisher_->audit();
        if (std::chrono::steady_clock::now() < frrBurstUntil_) armFrrBurst();
    });
}

std::optional<redis::Fields> Daemon::qualityRow(const std::string& port) const {
    auto it = links_.find(port);
    if (it == links_.end()) return std::nullopt;
    const Link& l = it->second;
    const auto& s = l.signals;
    redis::Fields f{
        {"role", roleName(l.config.role)},
        {"oper_status", l.present ? (s.up ? "up" : "down") : "absent"},
        {"capacity_bps", formatDouble(s.capacityBps, 0)},
        {"tx_bps", formatDouble(s.txBps, 0)},
        {"util", formatDouble(l.breakdown.util, 3)},
        {"queue_bytes", formatDouble(s.queueBytes, 0)},
        {"queue_source", l.queueSource},
        {"drop_ratio", formatDouble(s.dropRatio, 4)},
        {"latency_ns", l.displayLatency ? formatDouble(*l.displayLatency * 1e9, 0) : ""},
        {"queue_delay_ns", s.latencySeconds ? formatDouble(*s.latencySeconds * 1e9, 0) : ""},
        {"latency_source", l.latencySource},
        {"congestion", formatDouble(l.breakdown.congestion, 3)},
        {"quality_bps", formatDouble(l.breakdown.usableBps, 0)},
        {"level_raw", formatDouble(l.filter.smoothed(), 2)},
        {"level", std::to_string(l.filter.published())},
        {"levels", std::to_string(cfg_.model.levels)},
        {"suppressed", std::to_string(l.filter.suppressed())},
        {"last_change", l.filter.lastChange() ? isoTime(l.lastChangeWall) : ""}};
    if (l.config.role == Role::Downlink) {
        int peer = l.peerLevel > 0 ? l.peerLevel : cfg_.model.levels;
        f.emplace_back("peer_level", std::to_string(l.peerLevel));
        f.emplace_back("published_bandwidth", std::to_string(std::max(1, l.filter.published())));
        f.emplace_back("published_untagged", std::to_string(peer));
    }
    return f;
}

std::vector<std::string> Daemon::qualityKeys() const {
    return portNames_;
}

void Daemon::armStats() {
    statsTimer_.expires_after(kStatsPeriod);
    statsTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        if (qualityTable_)
            for (const auto& name : portNames_) qualityTable_->markDirty(name);
        if (publisher_ && ++auditCountdown_ >= kAuditEverySeconds) {
            auditCountdown_ = 0;
            publisher_->audit();  // puts back anything someone removed by hand
        }
        publishStats();
        armStats();
    });
}

void Daemon::publishStats() {
    if (!stateDb_ || !stateDb_->connected()) return;
    uint64_t suppressed = 0;
    for (const auto& [n, l] : links_) suppressed += l.filter.suppressed();
    ProbeStats p = prober_ ? prober_->stats() : ProbeStats{};
    IntStats i = int_ ? int_->stats() : IntStats{};
    PublisherStats f = publisher_ ? publisher_->stats() : PublisherStats{};
    WeightAuditStats w =
        weightAuditor_ ? weightAuditor_->stats() : WeightAuditStats{.state = "off"};
    netlink::RouteWatchStats rw = routeWatch_ ? routeWatch_->stats() : netlink::RouteWatchStats{};
    std::string key = std::string(kStatsTable) + options_.stateDbSeparator + "global";
    stateDb_->command(
        {"HSET",
         key,
         "ports",
         std::to_string(links_.size()),
         "samples",
         std::to_string(stats_.samples),
         "sample_errors",
         std::to_string(stats_.sampleErrors),
         "overruns",
         std::to_string(stats_.overruns),
         "level_changes",
         std::to_string(stats_.levelChanges),
         "suppressed",
         std::to_string(suppressed),
         "publishes",
         std::to_string(f.batches),
         "publish_lines",
         std::to_string(f.linesSent),
         "publish_errors",
         std::to_string(f.errors),
         "publish_refused_lines",
         std::to_string(f.refusedLines),
         "last_publish_ms",
         formatDouble(f.lastBatchMs, 1),
         "frr_state",
         publisher_ ? publisher_->state() : "off",
         "probes_sent",
         std::to_string(p.sent),
         "probe_replies",
         std::to_string(p.replies),
         "probes_answered",
         std::to_string(p.answered),
         "probe_send_errors",
         std::to_string(p.sendErrors),
         "probe_malformed",
         std::to_string(p.malformed),
         "probe_refused",
         std::to_string(p.refused),
         "int_packets",
         std::to_string(i.packets),
         "int_bad",
         std::to_string(i.bad),
         "int_hops",
         std::to_string(i.hops),
         "int_unmapped",
         std::to_string(i.unmapped),
         "int_refused",
         std::to_string(i.refused),
         "int_refused_interface",
         std::to_string(i.refusedInterface),
         "config_rejected",
         std::to_string(stats_.configRejected),
         "frr_restarts",
         std::to_string(stats_.frrRestarts),
         "weight_audit",
         w.state,
         "weight_audit_diverged_groups",
         std::to_string(w.divergedGroups),
         "weight_audit_diverged_routes",
         std::to_string(w.divergedPrefixes),
         "weight_audit_repairs",
         std::to_string(w.repairs),
         "weight_audit_lookups",
         std::to_string(w.lookups),
         "route_events",
         std::to_string(rw.messages),
         "route_snapshots",
         std::to_string(rw.snapshots),
         "route_overflows",
         std::to_string(rw.overflows),
         "weight_rebuilds",
         std::to_string(stats_.weightRebuilds),
         "redis_errors",
         std::to_string(stats_.redisErrors + qualityTable_->errors() + weightTable_->errors()),
         "updated",
         isoTime(std::chrono::system_clock::now())},
        [this](const redis::Value& r) {
            if (!r.isError() || r.connectionLost()) return;
            if (stats_.redisErrors++ == 0)
                log::warning("redis STATE_DB: stats write refused: ", r.str);
        });
}

}  // namespace twinrail::pathqd
