#include "sonic_counter_source.h"

#include <algorithm>

#include "twinrail/common/log.h"

namespace twinrail::pathqd {
namespace {

// HMGET order; the first is the one that must exist for the row to count. RX counters
// are read too: a poll moves them on a port that sends nothing, which tells an idle
// egress (rate 0) from a poll that did not happen. Then the pause frames the port
// received (the peer pausing our egress: a congestion signal for this port) and sent
// (shown only: that is the peer's egress, which its own pathqd sees as received), 802.3x
// then PFC priorities 0-7, summed: a port without PFC has none, and any priority paused
// is traffic held back on this link.
constexpr size_t kPauseRxFirst = 6, kPauseTxFirst = 15, kPauseFields = 9;
constexpr std::array<const char*, 24> kPortFields = {
    "SAI_PORT_STAT_IF_OUT_OCTETS",         "SAI_PORT_STAT_IF_OUT_UCAST_PKTS",
    "SAI_PORT_STAT_IF_OUT_NON_UCAST_PKTS", "SAI_PORT_STAT_IF_OUT_DISCARDS",
    "SAI_PORT_STAT_IF_IN_OCTETS",          "SAI_PORT_STAT_IF_IN_UCAST_PKTS",
    "SAI_PORT_STAT_PAUSE_RX_PKTS",         "SAI_PORT_STAT_PFC_0_RX_PKTS",
    "SAI_PORT_STAT_PFC_1_RX_PKTS",         "SAI_PORT_STAT_PFC_2_RX_PKTS",
    "SAI_PORT_STAT_PFC_3_RX_PKTS",         "SAI_PORT_STAT_PFC_4_RX_PKTS",
    "SAI_PORT_STAT_PFC_5_RX_PKTS",         "SAI_PORT_STAT_PFC_6_RX_PKTS",
    "SAI_PORT_STAT_PFC_7_RX_PKTS",         "SAI_PORT_STAT_PAUSE_TX_PKTS",
    "SAI_PORT_STAT_PFC_0_TX_PKTS",         "SAI_PORT_STAT_PFC_1_TX_PKTS",
    "SAI_PORT_STAT_PFC_2_TX_PKTS",         "SAI_PORT_STAT_PFC_3_TX_PKTS",
    "SAI_PORT_STAT_PFC_4_TX_PKTS",         "SAI_PORT_STAT_PFC_5_TX_PKTS",
    "SAI_PORT_STAT_PFC_6_TX_PKTS",         "SAI_PORT_STAT_PFC_7_TX_PKTS"};
static_assert(kPauseTxFirst + kPauseFields == kPortFields.size());
// Per queue, once per slow refresh: occupancy, watermark, and what the ECN input and
// the storm check need (the queue flex counters move every 10 s by default; the ratio of
// marks to packets needs no clock, quality::MarkRatio).
constexpr std::array<const char*, 5> kQueueFields = {
    "SAI_QUEUE_STAT_CURR_OCCUPANCY_BYTES", "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES",
    "SAI_QUEUE_STAT_PACKETS", "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", "PFC_WD_STATUS"};
constexpr const char* kCurrOccupancy = "SAI_QUEUE_STAT_CURR_OCCUPANCY_BYTES";
constexpr std::array<const char*, 4> kMapKeys = {
    "COUNTERS_PORT_NAME_MAP", "COUNTERS_QUEUE_NAME_MAP", "COUNTERS_QUEUE_TYPE_MAP",
    "COUNTERS_QUEUE_PORT_MAP"};
// Replies that stopped coming for this many deadlines: the connection is reopened.
constexpr int kStallDeadlines = 3;

std::optional<double> fieldNumber(const redis::Value& v) {
    if (v.type != redis::Value::Type::String) return std::nullopt;
    return sonic::parseNumber(v.str);
}

std::optional<std::string> fieldString(const redis::Value& v) {
    if (v.type != redis::Value::Type::String) return std::nullopt;
    return v.str;
}

}  // namespace

SonicCounterSource::SonicCounterSource(boost::asio::io_context& io,
                                       const redis::DbLocation& counters,
                                       const redis::DbLocation& appl,
                                       const redis::DbLocation& state, SonicOptions options)
    : countersLoc_(counters),
      applLoc_(appl),
      stateLoc_(state),
      opt_(options),
      counters_(io, counters.endpoint, counters.id, "COUNTERS_DB"),
      appl_(io, appl.endpoint, appl.id, "APPL_DB"),
      state_(io, state.endpoint, state.id, "STATE_DB"),
      deadline_(io) {
    // After a reconnect the oids may be new (syncd restarted with Redis).
    counters_.onConnected([this] { mapsDue_ = true; });
    counters_.start();
    appl_.start();
    state_.start();
}

std::string SonicCounterSource::countersKey(const std::string& table,
                                            const std::string& oid) const {
    return table + countersLoc_.separator + oid;
}

std::optional<SonicPortInfo> SonicCounterSource::info(const std::string& port) const {
    auto it = ports_.find(port);
    if (it == ports_.end()) return std::nullopt;
    return it->second.info;
}

void SonicCounterSource::fail(std::function<void(CounterMap, std::string)>& done,
                              const std::string& error) {
    ++stats_.failed;
    done({}, error);
}

void SonicCounterSource::poll(const std::vector<std::string>& ports,
                              std::function<void(CounterMap, std::string)> done) {
    ++stats_.periods;
    auto now = Clock::now();
    if (current_) return fail(done, "previous COUNTERS_DB read still running");
    if (!counters_.connected()) return fail(done, "COUNTERS_DB not connected");
    if (stalled(now)) return fail(done, "COUNTERS_DB has not answered the previous read");
    pendingMapCommands_ = 0;
    if (!mapLoad_.lock() && (mapsDue_ || now >= nextMapLoad_) &&
        now - lastMapLoad_ >= opt_.mapRetry)
        loadMaps(now);
    if (!maps_) {
        stats_.lastPeriodCommands = pendingMapCommands_;
        return fail(done, "COUNTERS_DB name maps not loaded yet");
    }
    auto p = std::make_shared<Period>();
    p->id = nextId_++;
    p->done = std::move(done);
    p->ports = ports;
    startPeriod(p, now);
}

// A period that timed out may still have replies coming; a new one would queue behind
// them and grow the backlog. Fail fast instead, and reopen the connections when nothing
// came back for a few deadlines (a peer that stopped answering without closing).
bool SonicCounterSource::stalled(Clock::time_point now) {
    auto old = abandoned_.lock();
    if (!old || old->outstanding == 0) {
        abandoned_.reset();
        return false;
    }
    if (now - stalledSince_ < kStallDeadlines * opt_.readDeadline) return true;
    log::warning("redis: no reply to ", old->outstanding, " COUNTERS_DB/APPL_DB reads for ",
                 std::chrono::duration_cast<std::chrono::milliseconds>(now - stalledSince_).count(),
                 " ms; reconnecting");
    restartClients();
    return true;
}

void SonicCounterSource::restartClients() {
    ++stats_.reconnects;
    abandoned_.reset();
    for (auto* c : {&counters_, &appl_, &state_}) {
        c->stop();  // drops every outstanding handler without calling it
        c->start();
    }
    mapsDue_ = true;
}

bool SonicCounterSource::send(const std::shared_ptr<Period>& p, redis::Client& client,
                              const std::vector<std::string>& args, const Handler& handler) {
    ++p->outstanding;
    ++p->commands;
    ++stats_.commands;
    bool sent =
        client.command(args, [this, p, handler](const redis::Value& v) { onReply(p, handler, v); });
    if (!sent) onReply(p, handler, redis::Value::error(redis::Value::kLost));
    return sent;
}

void SonicCounterSource::onReply(const std::shared_ptr<Period>& p, const Handler& handler,
                                 const redis::Value& v) {
    --p->outstanding;
    if (p->finished) return;  // timed out: the daemon has moved on
    handler(*p, v);
    if (p->sent && p->outstanding == 0) finish(p);
}

void SonicCounterSource::startPeriod(const std::shared_ptr<Period>& p, Clock::time_point now) {
    current_ = p;
    deadline_.expires_after(opt_.readDeadline);
    deadline_.async_wait([this, id = p->id](const boost::system::error_code& ec) {
        if (ec) return;
        onDeadline(id);
    });
    for (size_t i = 0; i < p->ports.size(); ++i) readPort(p, p->ports[i], i, p->ports.size(), now);
    p->sent = true;
    if (p->outstanding == 0 && !p->finished) finish(p);
}

void SonicCounterSource::readPort(const std::shared_ptr<Period>& p, const std::string& name,
                                  size_t index, size_t count, Clock::time_point now) {
    Port& st = ports_[name];
    auto oid = maps_->portOid.find(name);
    if (sonic::isPseudoPort(name) || oid == maps_->portOid.end()) {
        st = Port{};
        st.info.skip =
            sonic::isPseudoPort(name) ? "not a front-panel port" : "not in COUNTERS_PORT_NAME_MAP";
        return;
    }
    if (st.oid != oid->second) {  // new, or syncd gave it a new oid: nothing carries over
        st = Port{};
        st.oid = oid->second;
        st.clock = quality::PollClock(opt_.clock);
        st.info.oid = st.oid;
        assignQueues(name, st);
    }
    std::vector<std::string> args{"HMGET", countersKey("COUNTERS", st.oid)};
    args.insert(args.end(), kPortFields.begin(), kPortFields.end());
    send(p, counters_, args, [this, name, portOid = st.oid](Period& per, const redis::Value& v) {
        onPortCounters(per, name, portOid, v);
    });
    // Current occupancy is refreshed by the PFC watchdog every 100 ms: every period.
    for (const auto& q : st.queues) {
        if (!q.reading.currOccupancy) continue;
        send(p, counters_, {"HGET", countersKey("COUNTERS", q.oid), kCurrOccupancy},
             [this, name, portOid = st.oid, qoid = q.oid](Period&, const redis::Value& v) {
                 if (v.isError()) return;
                 if (Queue* mine = findQueue(name, portOid, qoid))
                     mine->reading.currOccupancy = fieldNumber(v);
             });
    }
    if (now < st.slowDue) return;
    // Spread the ports' slow reads over the refresh interval after the first round.
    auto spread = st.slowDone ? Clock::duration::zero()
                              : std::chrono::duration_cast<Clock::duration>(
                                    opt_.slowRefresh * static_cast<double>(index) /
                                    static_cast<double>(std::max<size_t>(1, count)));
    st.slowDue = now + opt_.slowRefresh + spread;
    readSlow(p, name, st);
}

void SonicCounterSource::readSlow(const std::shared_ptr<Period>& p, const std::string& name,
                                  Port& st) {
    send(
        p, appl_,
        {"HMGET", "PORT_TABLE" + std::string(1, applLoc_.separator) + name, "oper_status", "speed"},
        [this, name, portOid = st.oid](Period&, const redis::Value& v) {
            onAppl(name, portOid, v);
        });
    send(p, state_, {"HGET", "PORT_TABLE" + std::string(1, stateLoc_.separator) + name, "speed"},
         [this, name, portOid = st.oid](Period&, const redis::Value& v) {
             auto it = ports_.find(name);
             if (it == ports_.end() || it->second.oid != portOid) return;
             if (v.isError()) it->second.slowDue = {};  // again next period
             if (!v.isError()) it->second.stateSpeed = fieldString(v);
         });
    // Both queue fields at once: this finds current occupancy where the platform has it,
    // and refreshes the watermark, which moves only at the 10-60 s watermark poll.
    bool periodic = std::none_of(st.queues.begin(), st.queues.end(), [](const Queue& q) {
        return q.reading.currOccupancy || q.reading.watermark;
    });
    for (const auto& q : st.queues) {
        std::vector<std::string> args{"HMGET", countersKey("COUNTERS", q.oid)};
        args.insert(args.end(), kQueueFields.begin(), kQueueFields.end());
        send(p, counters_, args,
             [this, name, portOid = st.oid, qoid = q.oid](Period&, const redis::Value& v) {
                 Queue* mine = findQueue(name, portOid, qoid);
                 if (v.isError() || mine == nullptr || v.elements.size() != kQueueFields.size())
                     return;
                 mine->reading.currOccupancy = fieldNumber(v.elements[0]);
                 mine->reading.watermark = fieldNumber(v.elements[1]);
                 mine->reading.packets = sonic::parseCounter(v.elements[2]);
                 mine->reading.ecnMarked = sonic::parseCounter(v.elements[3]);
                 mine->reading.stormed = fieldString(v.elements[4]) == "stormed";
             });
        if (!periodic) continue;  // only the fallback needs PERIODIC_WATERMARKS
        send(p, counters_, {"HGET", countersKey("PERIODIC_WATERMARKS", q.oid), kQueueFields[1]},
             [this, name, portOid = st.oid, qoid = q.oid](Period&, const redis::Value& v) {
                 Queue* mine = findQueue(name, portOid, qoid);
                 if (!v.isError() && mine != nullptr)
                     mine->reading.periodicWatermark = fieldNumber(v);
             });
    }
}

SonicCounterSource::Queue* SonicCounterSource::findQueue(const std::string& port,
                                                         const std::string& portOid,
                                                         const std::string& queueOid) {
    auto it = ports_.find(port);
    if (it == ports_.end() || it->second.oid != portOid) return nullptr;
    for (auto& q : it->second.queues)
        if (q.oid == queueOid) return &q;
    return nullptr;
}

void SonicCounterSource::onAppl(const std::string& name, const std::string& oid,
                                const redis::Value& v) {
    auto it = ports_.find(name);
    if (it == ports_.end() || it->second.oid != oid) return;
    Port& st = it->second;
    if (v.isError() || v.elements.size() != 2) {
        st.slowDue = {};  // try again next period; the cached values stay
        return;
    }
    st.slowDone = true;
    st.applOper = fieldString(v.elements[0]);
    st.applSpeed = fieldString(v.elements[1]);
}

void SonicCounterSource::onPortCounters(Period& p, const std::string& name, const std::string& oid,
                                        const redis::Value& v) {
    if (v.connectionLost()) {
        p.lost = true;
        return;
    }
    auto it = ports_.find(name);
    if (it == ports_.end() || it->second.oid != oid) return;
    Port& st = it->second;
    PortRead& r = p.reads[name];
    r.answered = true;
    if (v.isError() || v.elements.size() != kPortFields.size() ||
        v.elements[0].type != redis::Value::Type::String) {
        // A row that was there is gone: syncd may have restarted with new oids. (One that
        // never was is left to the periodic map refresh.)
        r.rowMissing = true;
        if (st.last) mapsDue_ = true;
        st.last.reset();
        return;
    }
    for (size_t i = 0; i < kPortFields.size(); ++i)
        r.values[i] = sonic::parseCounter(v.elements[i]).value_or(0);
    bool changed = !st.last || *st.last != r.values;
    st.last = r.values;
    r.sampledAt = st.clock.observe(changed, Clock::now());
}

void SonicCounterSource::onDeadline(uint64_t id) {
    if (!current_ || current_->id != id || current_->finished) return;
    auto p = current_;
    current_.reset();
    p->finished = true;
    ++stats_.timeouts;
    if (p->outstanding > 0) {
        abandoned_ = p;
        stalledSince_ = Clock::now();
    }
    stats_.lastPeriodCommands = p->commands + pendingMapCommands_;
    fail(p->done,
         "COUNTERS_DB read timed out after " + std::to_string(opt_.readDeadline.count()) + " ms");
}

void SonicCounterSource::finish(const std::shared_ptr<Period>& p) {
    deadline_.cancel();
    p->finished = true;
    if (current_ == p) current_.reset();
    stats_.lastPeriodCommands = p->commands + pendingMapCommands_;
    stats_.maxPeriodCommands = std::max(stats_.maxPeriodCommands, stats_.lastPeriodCommands);
    if (p->lost) return fail(p->done, "COUNTERS_DB connection lost during the read");
    CounterMap out;
    for (const auto& name : p->ports) {
        auto it = ports_.find(name);
        if (it == ports_.end()) continue;
        auto r = p->reads.find(name);
        if (auto pc = report(it->second, r == p->reads.end() ? nullptr : &r->second))
            out.emplace(name, std::move(*pc));
    }
    p->done(std::move(out), "");
}

// One port's row for the daemon, or nothing, with the reason in `info.skip` (SOURCES.md
// section 5: no COUNTERS row, no speed, pseudo ports).
std::optional<PortCounters> SonicCounterSource::report(Port& st, const PortRead* r) {
    SonicPortInfo& info = st.info;
    if (st.oid.empty()) return std::nullopt;  // readPort said why
    auto speed = sonic::portSpeed(st.applOper, st.applSpeed, st.stateSpeed);
    std::vector<sonic::QueueReading> readings;
    for (const auto& q : st.queues) readings.push_back(q.reading);
    auto queues = sonic::chooseQueueSource(readings);
    info.up = st.applOper && *st.applOper == "up";
    info.speedMbps = speed.mbps;
    info.speedFrom = speed.from;
    info.queueSource = sonic::queueSourceName(queues.source);
    info.unicastQueues = static_cast<int>(st.queues.size());
    info.sourceQueues = queues.queues;
    info.queueBytes = queues.bytes;
    info.pollPeriod = st.clock.period();
    if (r == nullptr || !r->answered || r->rowMissing) {
        info.skip = "no COUNTERS row";
    } else if (!st.slowDone) {
        info.skip = "APPL_DB PORT_TABLE not read yet";
    } else if (!speed.mbps) {
        info.skip = "no speed in APPL_DB PORT_TABLE";
    } else {
        info.skip.clear();
    }
    if (!info.skip.empty()) return std::nullopt;
    PortCounters pc;
    pc.up = info.up;
    pc.counters.txBytes = r->values[0];
    pc.counters.txPackets = r->values[1] + r->values[2];
    pc.counters.drops = r->values[3];
    for (size_t i = 0; i < kPauseFields; ++i) {
        pc.counters.pauseRx += r->values[kPauseRxFirst + i];
        pc.counters.pauseTx += r->values[kPauseTxFirst + i];
    }
    pc.ecn = sonic::queueMarks(readings);
    if (pc.ecn) pc.ecnSource = "queue_counters";
    pc.pfcStorm = std::any_of(readings.begin(), readings.end(),
                              [](const sonic::QueueReading& q) { return q.stormed; });
    pc.sampledAt = r->sampledAt;
    pc.queueBytes = queues.bytes;
    pc.queueSource = info.queueSource;
    pc.capacityBps = *speed.mbps * 1e6;
    return pc;
}

void SonicCounterSource::loadMaps(Clock::time_point now) {
    lastMapLoad_ = now;
    ++stats_.mapLoads;
    auto load = std::make_shared<MapLoad>();
    mapLoad_ = load;
    for (size_t i = 0; i < kMapKeys.size(); ++i) {
        ++pendingMapCommands_;
        ++stats_.commands;
        auto onHash = [this, load, i](const redis::Value& v) {
            // A missing map is an empty hash; an error (WRONGTYPE, lost) fails the load.
            if (v.isError()) load->failed = true;
            load->hashes[i] = sonic::toHash(v);
            if (--load->outstanding == 0) onMaps(*load);
        };
        if (!counters_.command({"HGETALL", kMapKeys[i]}, onHash))
            onHash(redis::Value::error(redis::Value::kLost));
    }
}

void SonicCounterSource::onMaps(const MapLoad& load) {
    mapLoad_.reset();
    if (load.failed) return;  // keep the maps we have; retried after mapRetry
    mapsDue_ = false;
    nextMapLoad_ = Clock::now() + opt_.mapRefresh;
    maps_ = sonic::buildMaps(load.hashes[0], load.hashes[1], load.hashes[2], load.hashes[3]);
    for (auto& [name, st] : ports_) {
        auto oid = maps_->portOid.find(name);
        if (oid != maps_->portOid.end() && oid->second == st.oid) assignQueues(name, st);
        // else readPort starts the port afresh
    }
}

void SonicCounterSource::assignQueues(const std::string& name, Port& st) {
    static const std::vector<sonic::QueueRef> kNone;
    auto it = maps_->queues.find(name);
    const auto& refs = it == maps_->queues.end() ? kNone : it->second;
    bool same = refs.size() == st.queues.size() &&
                std::equal(refs.begin(), refs.end(), st.queues.begin(),
                           [](const sonic::QueueRef& a, const Queue& b) { return a.oid == b.oid; });
    if (same) return;
    st.queues.clear();
    for (const auto& q : refs) st.queues.push_back({q.oid, {}});
    st.slowDue = {};  // find out what the new queues publish
}

}  // namespace twinrail::pathqd
