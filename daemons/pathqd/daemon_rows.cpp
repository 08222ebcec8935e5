// pathqd's STATE_DB rows: PATH_QUALITY_TABLE (one per port) and PATHQD_STATS, rewritten
// every stats period and on every (re)connect.
#include "daemon.h"
#include "state_rows.h"
#include "twinrail/common/log.h"

namespace twinrail::pathqd {

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
        {"ecn_ratio", formatDouble(s.ecnMarkRatio, 4)},
        {"ecn_source", l.ecnSource},
        {"pause_rx_pps", formatDouble(s.pauseRxPps, 1)},
        {"pause_tx_pps", formatDouble(l.lastRates ? l.lastRates->pauseTxPps : 0, 1)},
        {"pfc_storm", s.pfcStorm ? "true" : "false"},
        {"latency_ns", l.displayLatency ? formatDouble(*l.displayLatency * 1e9, 0) : ""},
        {"queue_delay_ns", s.latencySeconds ? formatDouble(*s.latencySeconds * 1e9, 0) : ""},
        {"latency_source", l.latencySource},
        {"congestion", formatDouble(l.breakdown.congestion, 3)},
        {"congestion_cause", l.breakdown.cause},
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
    statsTimer_.expires_after(options_.periods.stats);
    statsTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        if (qualityTable_)
            for (const auto& name : portNames_) qualityTable_->markDirty(name);
        if (publisher_ && ++auditCountdown_ >= options_.periods.frrAuditEvery) {
            auditCountdown_ = 0;
            publisher_->audit();  // puts back anything someone removed by hand
        }
        publishStats();
        armStats();
    });
}

void Daemon::publishStats() {
    if (stateDb_ == nullptr || !stateDb_->connected()) return;
    uint64_t suppressed = 0;
    for (const auto& [n, l] : links_) suppressed += l.filter.suppressed();
    ProbeStats p = prober_ ? prober_->stats() : ProbeStats{};
    IntStats i = int_ ? int_->stats() : IntStats{};
    PublisherStats f = publisher_ ? publisher_->stats() : PublisherStats{};
    WeightAuditStats w =
        weightAuditor_ ? weightAuditor_->stats() : WeightAuditStats{.state = "off"};
    netlink::RouteWatchStats rw = routeWatch_ ? routeWatch_->stats() : netlink::RouteWatchStats{};
    auto n = [](uint64_t v) { return std::to_string(v); };
    const redis::Fields fields{
        {"ports", n(links_.size())},
        {"samples", n(stats_.samples)},
        {"sample_errors", n(stats_.sampleErrors)},
        {"overruns", n(stats_.overruns)},
        {"level_changes", n(stats_.levelChanges)},
        {"suppressed", n(suppressed)},
        {"publishes", n(f.batches)},
        {"publish_lines", n(f.linesSent)},
        {"publish_errors", n(f.errors)},
        {"publish_refused_lines", n(f.refusedLines)},
        {"last_publish_ms", formatDouble(f.lastBatchMs, 1)},
        {"frr_state", publisher_ ? publisher_->state() : "off"},
        {"probes_sent", n(p.sent)},
        {"probe_replies", n(p.replies)},
        {"probes_answered", n(p.answered)},
        {"probe_send_errors", n(p.sendErrors)},
        {"probe_malformed", n(p.malformed)},
        {"probe_refused", n(p.refused)},
        {"int_packets", n(i.packets)},
        {"int_bad", n(i.bad)},
        {"int_hops", n(i.hops)},
        {"int_unmapped", n(i.unmapped)},
        {"int_refused", n(i.refused)},
        {"int_refused_interface", n(i.refusedInterface)},
        {"config_rejected", n(stats_.configRejected)},
        {"frr_restarts", n(stats_.frrRestarts)},
        {"weight_audit", w.state},
        {"weight_audit_diverged_groups", n(w.divergedGroups)},
        {"weight_audit_diverged_routes", n(w.divergedPrefixes)},
        {"weight_audit_repairs", n(w.repairs)},
        {"weight_audit_lookups", n(w.lookups)},
        {"weight_audit_errors", n(w.errors)},
        {"weight_audit_source",
         cfg_.weightAuditSource == WeightAuditSource::Sonic ? "sonic" : "kernel"},
        {"weight_audit_read_errors", n(w.readErrors)},
        {"weight_audit_bad_rows", n(w.badRows)},
        {"sonic_wcmp", wcmp_ ? wcmp_->state() : "unchecked"},
        {"bgp_peer_errors", n(bgpPeers_ ? bgpPeers_->readErrors() : 0)},
        {"route_events", n(rw.messages)},
        {"route_snapshots", n(rw.snapshots)},
        {"route_overflows", n(rw.overflows)},
        {"weight_rebuilds", n(stats_.weightRebuilds)},
        {"redis_errors", n(stats_.redisErrors + qualityTable_->errors() + weightTable_->errors())},
        {"updated", isoTime(std::chrono::system_clock::now())}};
    std::vector<std::string> args{"HSET",
                                  std::string(kStatsTable) + options_.stateDbSeparator + "global"};
    for (const auto& [field, value] : fields) {
        args.push_back(field);
        args.push_back(value);
    }
    stateDb_->command(args, [this](const redis::Value& r) {
        if (!r.isError() || r.connectionLost()) return;
        if (stats_.redisErrors++ == 0) log::warning("redis STATE_DB: stats write refused: ", r.str);
    });
}

}  // namespace twinrail::pathqd
