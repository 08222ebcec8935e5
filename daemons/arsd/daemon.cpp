#include "daemon.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "twinrail/common/log.h"
#include "twinrail/common/notify.h"

namespace twinrail::arsd {

namespace {

// Sampling errors are logged on the first and then every this many, not every period.
constexpr uint64_t kErrorLogEvery = 1000;

}  // namespace

Daemon::Daemon(boost::asio::io_context& io, Config cfg, Edges edges)
    : cfg_(std::move(cfg)), edges_(std::move(edges)), timer_(io) {}

Daemon::~Daemon() {
    // The timer dies with us; the feed's sockets with it. Nothing here may throw.
    try {
        timer_.cancel();
        if (feed_) feed_->stop();
    } catch (const std::exception& e) {
        log::error("stopping: ", e.what());
    }
}

std::chrono::microseconds Daemon::samplingPeriod() const {
    return std::chrono::microseconds(std::max(cfg_.ars.samplingIntervalUs, kSamplingFloorUs));
}

void Daemon::start() {
    if (!cfg_.ars.enabled)
        log::notice("no ARS tables and no RANDOM hash in the config: nothing attached");
    ensureDatapath();
    applyPolicy();
    applyPorts();
    startFeed();
    if (!datapath_) markReady();  // nothing to mirror
    log::notice("started: ", attached_.size(), " ports attached, mode ",
                ars::assignModeName(cfg_.ars.datapath.mode),
                cfg_.ars.datapath.global ? " (global ARS)" : "", ", selector ",
                ars::nhgSelectorName(policy_.selector), ", ", quality_.size(),
                " ports sampled every ", samplingPeriod().count(), " us");
}

void Daemon::ensureDatapath() {
    if (!cfg_.ars.enabled || datapath_) return;
    datapath_ = edges_.datapath(cfg_.ars.maxFlows);
    datapath_->configure(cfg_.ars.datapath);
    armTimer();
}

// After the ports: the first snapshot's READY=1 then tells what is attached. Until the
// routes are there the program matches none and leaves every packet to the kernel.
void Daemon::startFeed() {
    if (!datapath_ || feed_) return;
    feed_ = edges_.routeFeed({kMainTable, kLocalTable},
                             [this](const std::vector<netlink::RouteKey>& changed, bool done) {
                                 onRoutes(changed, done);
                             });
    feed_->start();
}

void Daemon::applyConfig(const Config& cfg) {
    if (stopped_) return;
    Config old = std::exchange(cfg_, cfg);
    if (datapath_ && cfg_.ars.enabled && old.ars.maxFlows != cfg_.ars.maxFlows) {
        rebuildDatapath();
    } else if (datapath_ && cfg_.ars.enabled && old.ars.datapath != cfg_.ars.datapath) {
        datapath_->configure(cfg_.ars.datapath);
        log::notice("mode ", ars::assignModeName(cfg_.ars.datapath.mode), ", idle time ",
                    cfg_.ars.datapath.idleTimeUs, " us, global ",
                    cfg_.ars.datapath.global ? "on" : "off");
    }
    if (old.ars.pastLoadWeight != cfg_.ars.pastLoadWeight ||
        old.ars.futureLoadWeight != cfg_.ars.futureLoadWeight ||
        old.ars.pastLoad != cfg_.ars.pastLoad || old.ars.futureLoad != cfg_.ars.futureLoad)
        quality_.clear();  // a new EWMA; rebuilt below with the new weights
    ensureDatapath();
    applyPolicy();
    applyPorts();
    startFeed();
}

// The flow table's size is fixed when its map is made: a new max_flows is a new datapath.
// The old one is detached first (a port holds one filter of ours), so for the moment in
// between the kernel forwards alone; routes, pins and bands are given to the new one.
void Daemon::rebuildDatapath() {
    for (const auto& [name, ifindex] : attached_) datapath_->detach(ifindex);
    attached_.clear();
    pinned_.clear();
    mirrored_.clear();
    for (auto& [ifindex, state] : quality_) {
        state.sentBand.reset();
        state.sentRate.reset();
    }
    datapath_.reset();
    datapath_ = edges_.datapath(cfg_.ars.maxFlows);
    datapath_->configure(cfg_.ars.datapath);
    log::notice("max_flows ", cfg_.ars.maxFlows, ": a new flow table; mode ",
                ars::assignModeName(cfg_.ars.datapath.mode), ", idle time ",
                cfg_.ars.datapath.idleTimeUs, " us, global ",
                cfg_.ars.datapath.global ? "on" : "off");
    remirrorAll();
}

void Daemon::applyPorts() {
    if (!datapath_) return;
    std::map<std::string, int> want;
    if (cfg_.ars.enabled) {
        for (const auto& name : cfg_.ports) {
            int ifindex = edges_.ifIndex(name);
            if (ifindex == 0) {
                log::warning("PORT|", name, ": no such interface; not attached");
                continue;
            }
            want[name] = ifindex;
        }
    }
    for (auto it = attached_.begin(); it != attached_.end();) {
        auto w = want.find(it->first);
        if (w != want.end() && w->second == it->second) {
            ++it;
            continue;
        }
        datapath_->detach(it->second);
        log::info("detached from ", it->first);
        it = attached_.erase(it);
    }
    for (const auto& [name, ifindex] : want) {
        if (attached_.count(name) != 0) continue;
        try {
            // A predecessor that crashed left its filter: ours replaces it, never doubles it.
            if (edges_.detachLeftover(ifindex))
                log::notice(name, ": removed the filter a previous arsd left");
            datapath_->attach(ifindex);
            attached_[name] = ifindex;
        } catch (const std::exception& e) {
            log::error("PORT|", name, ": cannot attach: ", e.what());
        }
    }
    std::set<int> pins;
    for (const auto& name : cfg_.pinned)
        if (int ifindex = edges_.ifIndex(name); ifindex != 0) pins.insert(ifindex);
    for (int ifindex : pinned_)
        if (pins.count(ifindex) == 0) datapath_->setPinned(ifindex, false);
    for (int ifindex : pins)
        if (pinned_.count(ifindex) == 0) datapath_->setPinned(ifindex, true);
    pinned_ = std::move(pins);
}

void Daemon::applyPolicy() {
    MirrorPolicy p;
    p.selector = cfg_.ars.selector;
    for (const auto& i : cfg_.ars.interfaces) {
        int ifindex = edges_.ifIndex(i.name);
        if (ifindex == 0) {
            log::warning("ARS_INTERFACES|", i.name, ": no such interface; not eligible");
            continue;
        }
        p.eligible.insert(ifindex);
    }
    p.nexthops = cfg_.ars.nexthops;
    p.ipv4 = cfg_.ars.ipv4;
    p.ipv6 = cfg_.ars.ipv6;
    std::set<int> sampled;
    for (const auto& name : sampledPorts(cfg_))
        if (int ifindex = edges_.ifIndex(name); ifindex != 0) sampled.insert(ifindex);
    for (auto it = quality_.begin(); it != quality_.end();)
        it = sampled.count(it->first) != 0 ? std::next(it) : quality_.erase(it);
    for (int ifindex : sampled) {
        if (quality_.count(ifindex) == 0) {
            quality_.emplace(ifindex,
                             PortState{std::nullopt, 0, ars::PortQuality(cfg_.ars), {}, {}});
        }
    }
    bool changed = !(p == policy_);
    policy_ = std::move(p);
    if (changed) remirrorAll();
}

void Daemon::onRoutes(const std::vector<netlink::RouteKey>& changed, bool snapshotDone) {
    if (snapshotDone) {
        remirrorAll();
        return markReady();
    }
    for (const auto& key : changed) mirror(key.dst);
}

// Ready once the datapath holds the kernel's whole table: before that, a packet might
// match a shorter ARS route than the kernel would use.
void Daemon::markReady() {
    if (ready_) return;
    ready_ = true;
    sdNotify("READY=1\nSTATUS=" + std::to_string(attached_.size()) + " ports, " +
             std::to_string(mirrored_.size()) + " routes mirrored");
}

void Daemon::mirror(const IpPrefix& dst) {
    if (!datapath_ || !feed_) return;
    auto want = mirrorFor(feed_->routes(), dst, policy_);
    auto have = mirrored_.find(dst);
    if (!want) {
        if (have == mirrored_.end()) return;
        datapath_->removeRoute(dst);
        mirrored_.erase(have);
        ++stats_.routesRemoved;
        return;
    }
    if (have != mirrored_.end() && have->second == *want) return;
    datapath_->setRoute(dst, *want);
    mirrored_[dst] = std::move(*want);
    ++stats_.routesSet;
}

void Daemon::remirrorAll() {
    if (!feed_) return;
    std::set<IpPrefix> dsts;
    for (const auto& [key, route] : feed_->routes()) dsts.insert(key.dst);
    for (const auto& [dst, nexthops] : mirrored_) dsts.insert(dst);
    for (const auto& dst : dsts) mirror(dst);
}

void Daemon::sampleNow() {
    if (!datapath_ || quality_.empty()) return;
    std::vector<int> ifindexes;
    ifindexes.reserve(quality_.size());
    for (const auto& [ifindex, state] : quality_) ifindexes.push_back(ifindex);
    std::vector<PortReading> readings;
    try {
        readings = edges_.sample(ifindexes);
    } catch (const std::exception& e) {
        if (stats_.sampleErrors++ % kErrorLogEvery == 0)
            log::warning("port counters: ", e.what(), " (", stats_.sampleErrors, " so far)");
        return;
    }
    uint64_t now = edges_.nowNs();
    ++stats_.samples;
    for (const auto& r : readings) {
        auto it = quality_.find(r.ifindex);
        if (it == quality_.end()) continue;
        PortState& s = it->second;
        if (uint64_t rate = r.capacityBps / 8; s.sentRate != rate) {
            datapath_->setPortRate(r.ifindex, rate);
            s.sentRate = rate;
        }
        // The real queue: a floor under the program's own count, which misses what it did not
        // send. An empty queue is written once, not every period.
        if (r.queuedBytes != 0 || s.sentBacklog != 0) {
            datapath_->setPortBacklog(r.ifindex, r.queuedBytes, now);
            s.sentBacklog = r.queuedBytes;
        }
        if (s.last && now > s.lastNs) {
            ars::PortSample sample;
            // A counter that went backwards was reset (the port was re-created): no load.
            sample.txBytesDelta = r.txBytes >= s.last->txBytes ? r.txBytes - s.last->txBytes : 0;
            sample.intervalNs = now - s.lastNs;
            sample.capacityBps = r.capacityBps;
            sample.queuedBytes = r.queuedBytes;
            uint8_t band = s.quality.update(sample);
            if (s.sentBand != band) {
                datapath_->setPortBand(r.ifindex, band);
                s.sentBand = band;
                ++stats_.bandChanges;
            }
        }
        s.last = r;
        s.lastNs = now;
    }
}

void Daemon::armTimer() {
    timer_.expires_after(samplingPeriod());
    timer_.async_wait([this, alive = std::weak_ptr<int>(alive_)](boost::system::error_code ec) {
        if (ec || alive.expired() || stopped_) return;
        sampleNow();
        armTimer();
    });
}

void Daemon::stop() {
    if (stopped_) return;
    stopped_ = true;
    timer_.cancel();
    if (feed_) feed_->stop();
    if (datapath_) {
        for (const auto& [name, ifindex] : attached_) {
            try {
                datapath_->detach(ifindex);
            } catch (const std::exception& e) {
                log::error(name, ": cannot detach: ", e.what());
            }
        }
    }
    log::notice("stopped: ", attached_.size(), " ports detached; the kernel forwards alone");
    attached_.clear();
}

}  // namespace twinrail::arsd
