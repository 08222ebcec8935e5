#include "state_rows.h"

#include <ctime>

#include "twinrail/netlink/types.h"

namespace twinrail::hostrouted {

std::string wallClock(TimePoint steady, TimePoint steadyNow,
                      std::chrono::system_clock::time_point wallNow) {
    auto wall = wallNow -
                std::chrono::duration_cast<std::chrono::system_clock::duration>(steadyNow - steady);
    std::time_t t = std::chrono::system_clock::to_time_t(wall);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

redis::Fields hostRow(const HostRecord& rec, const std::string& ifname, const std::string& port,
                      TimePoint now, std::chrono::system_clock::time_point wallNow) {
    return {
        {"ifname", ifname},
        {"port", port},
        {"mac", rec.mac ? formatMac(*rec.mac) : ""},
        {"family", rec.ip.isV4() ? "ipv4" : "ipv6"},
        {"source", std::string(sourceName(rec.source))},
        {"state", std::string(routeStateName(rec.state))},
        {"neigh_state", netlink::nudStateName(rec.nudState)},
        {"since", wallClock(rec.since, now, wallNow)},
        {"moves", std::to_string(rec.moves.size())},
        {"frozen_since", rec.frozenSince ? wallClock(*rec.frozenSince, now, wallNow) : ""},
    };
}

redis::Fields claimRow(const RefusedClaim& c, TimePoint now,
                       std::chrono::system_clock::time_point wallNow) {
    return {{"mac", c.mac ? formatMac(*c.mac) : ""},
            {"reason", c.reason},
            {"count", std::to_string(c.count)},
            {"first", wallClock(c.first, now, wallNow)},
            {"last", wallClock(c.last, now, wallNow)}};
}

redis::Fields statsRow(const StatsView& v, const std::string& updated) {
    auto n = [](auto x) { return std::to_string(x); };
    const auto& s = v.registry;
    const auto& m = v.monitor;
    const auto& a = v.audit;
    redis::Fields pins;
    if (v.pins && v.routeWatch) {
        pins = {{"pin_route_writes", n(v.pins->routeWrites)},
                {"pin_rule_writes", n(v.pins->ruleWrites)},
                {"pin_write_errors", n(v.pins->writeErrors)},
                {"pin_rule_dump_errors", n(v.pins->ruleDumpErrors)},
                {"pin_fallbacks", n(v.pins->fallbacks)},
                {"route_watch_overflows", n(v.routeWatch->overflows)},
                {"route_watch_snapshots", n(v.routeWatch->snapshots)}};
    }
    redis::Fields row{{"routes", n(v.routes)},
                      {"hosts", n(v.hosts)},
                      {"pending", n(v.pending)},
                      {"added", n(s.added)},
                      {"withdrawn", n(s.withdrawn)},
                      {"refused", n(s.refused)},
                      {"rate_limited", n(s.rateLimited)},
                      {"expired", n(s.expired)},
                      {"resyncs", n(s.resyncs)},
                      {"probes", n(s.probes)},
                      {"moves", n(s.moves)},
                      {"duplicates", n(s.duplicates)},
                      {"frozen", n(s.frozen)},
                      {"frozen_refused", n(s.frozenRefused)},
                      {"claims_refused", n(v.claimsRefused)},
                      {"claims", n(v.claims)},
                      {"guard_applied", n(v.guardApplied)},
                      {"guard_failed", n(v.guardFailed)},
                      {"route_errors", n(s.routeErrors)},
                      {"probe_send_errors", n(v.prober.sendErrors)},
                      {"probe_replies", n(v.prober.received)},
                      {"netlink_overflows", n(m.overflows)},
                      {"netlink_malformed", n(m.malformed)},
                      {"netlink_dumps_interrupted", n(m.dumpsInterrupted)},
                      {"netlink_snapshots_aborted", n(m.snapshotsAborted)},
                      {"netlink_queued_during_snapshot", n(m.queuedDuringSnapshot)},
                      {"config_rejected", n(v.configRejected)},
                      {"redis_errors", n(v.redisErrors)},
                      {"foreign_hosts", n(v.foreignHosts)},
                      {"frr_config", v.frrConfig},
                      {"frr_audit", a.state},
                      {"frr_audit_missing", n(a.missing)},
                      {"frr_audit_shadowed", n(a.shadowed)},
                      {"frr_audit_outranked", n(a.outranked)},
                      {"frr_audit_foreign", n(a.foreign)},
                      {"frr_audit_unrepaired", n(a.unrepaired)},
                      {"frr_audit_repairs", n(a.repairs)},
                      {"frr_audits", n(a.audits)},
                      {"frr_restarts", n(a.frrRestarts)},
                      {"updated", updated}};
    row.insert(row.end(), pins.begin(), pins.end());
    if (v.esSync) {
        const auto& e = *v.esSync;
        redis::Fields evpn{{"evpn_polls", n(e.polls)},           {"evpn_poll_errors", n(e.errors)},
                           {"evpn_view_changes", n(e.changes)},  {"evpn_poll_ms", n(e.lastPollMs)},
                           {"evpn_poll_ms_max", n(e.maxPollMs)}, {"evpn_last_error", e.lastError},
                           {"es_peer_hosts", n(v.esPeerHosts)}};
        row.insert(row.end(), evpn.begin(), evpn.end());
    }
    return row;
}

}  // namespace twinrail::hostrouted
