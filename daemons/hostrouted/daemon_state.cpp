// hostrouted's side channels: HOST_ROUTE_STATS, and the wiring of the uplink pinner and
// the EVPN-MH module.
#include "daemon.h"
#include "state_rows.h"
#include "twinrail/common/log.h"

namespace twinrail::hostrouted {

PinSettings Daemon::pinSettings() const {
    return PinSettings{cfg_.uplinkPins,    cfg_.pinTableBase,      cfg_.pinRulePriority,
                       cfg_.routeProtocol, cfg_.pinMinWeightRatio, cfg_.ipv4,
                       cfg_.ipv6};
}

void Daemon::startPins() {
    if (cfg_.platform != Platform::Sonic) return startPinner();
    if (!edges_.aclSink) {
        log::error(
            "uplink pins: platform sonic, but no APPL_DB to write aclorch's rules to; "
            "no pins");
        return;
    }
    aclPinner_ =
        std::make_unique<AclPinner>(io_, pinSettings(), edges_.aclSink(), edges_.routeFeed);
    for (const auto& [ifindex, port] : ports_) aclPinner_->onLink(port.link, false);
    aclPinner_->setLocal(localPrefixes());
}

std::vector<IpPrefix> Daemon::localPrefixes() const {
    std::vector<IpPrefix> out;
    for (const auto& [ifindex, port] : ports_) {
        if (!port.managed) continue;
        out.insert(out.end(), port.addresses.begin(), port.addresses.end());
    }
    for (const auto& ip : own_) out.push_back({ip, ip.maxPrefixLen()});
    return out;
}

// A new config's pins: the running pinner takes them, or one starts (the pins may be new).
void Daemon::applyPinConfig() {
    if (aclPinner_) return aclPinner_->setSettings(pinSettings());
    if (pinner_) return pinner_->setSettings(pinSettings());
    if (cfg_.uplinkPins.empty()) return;
    try {
        if (cfg_.platform == Platform::Sonic) {
            startPins();
            if (!aclPinner_) return;
            if (stateDb_ != nullptr)
                aclPinner_->attachStateDb(*stateDb_, options_.stateDbSeparator);
            aclPinner_->start();
            return;
        }
        startPinner();
        for (const auto& [ifindex, port] : ports_) pinner_->onLink(port.link, false);
        pinner_->start();
        if (stateDb_ != nullptr) pinner_->attachStateDb(*stateDb_, options_.stateDbSeparator);
    } catch (const std::exception& e) {
        // Host routes go on; the pins are tried again with the next config.
        log::error("uplink pinning not started: ", e.what());
        pinner_.reset();
        aclPinner_.reset();
        policyWriter_.reset();
    }
}

void Daemon::startPinner() {
    policyWriter_ = edges_.policyWriter();
    pinner_ = std::make_unique<UplinkPinner>(io_, pinSettings(), *policyWriter_, edges_.routeFeed);
}

void Daemon::startHold() {
    if (!edges_.links) {
        log::warning("host-port hold: no link control here; fabric_prefixes ignored");
        return;
    }
    holder_ = std::make_unique<PortHolder>(io_, HoldSettings{cfg_.fabricPrefixes, cfg_.holdMax},
                                           *edges_.links, edges_.routeFeed);
}

void Daemon::applyHoldConfig() {
    HoldSettings next{cfg_.fabricPrefixes, cfg_.holdMax};
    if (holder_) return holder_->setSettings(std::move(next));
    if (next.prefixes.empty()) return;
    try {
        // Turned on while running: judged on the routes the leaf has now, not held as at
        // start-up (port_hold.h).
        startHold();
        if (!holder_) return;
        holder_->start();
        if (stateDb_ != nullptr) {
            holder_->attachStateDb(*stateDb_, options_.stateDbSeparator);
            if (stateDb_->connected()) holder_->stateDbConnected();
        }
        holder_->portsChanged(ports_);
    } catch (const std::exception& e) {
        // Host routes go on; the hold is tried again with the next config.
        log::error("host-port hold not started: ", e.what());
        holder_.reset();
    }
}

void Daemon::startEvpn() {
    EvpnMh::Hooks hooks{
        [this](const IpAddr& ip, int svi, const std::optional<MacAddr>& mac, Source source,
               const std::string& esPort) { return esTrustRefusal(ip, svi, mac, source, esPort); },
        [this](const HostRecord& host) { sendProbe(host); }, [this] { afterWork(); },
        [this](const IpAddr& ip) { hostChanged(ip); }};
    evpn_ = std::make_unique<EvpnMh>(io_, cfg_, frr_, edges_.policyWriter(), registry_, ports_,
                                     own_, bindings_, std::move(hooks));
    evpn_->start(routes_);
}

void Daemon::publishStats() {
    if (stateDb_ == nullptr || !stateDb_->connected()) return;
    StatsView v{
        registry_.stats(),
        registry_.installedCount(),
        registry_.size(),
        registry_.pendingCount(),
        prober_->stats(),
        monitor_->stats(),
        auditor_ ? auditor_->stats() : AuditStats{.state = "off"},
        configRejected_,
        redisErrors_ + hostTable_->errors() + foreignTable_->errors() + claimTable_->errors(),
        foreign_.size(),
        frrStatus_,
        pinner_ ? std::optional(pinner_->stats()) : std::nullopt,
        pinner_ ? std::optional(pinner_->watchStats()) : std::nullopt,
        evpn_ ? std::optional(evpn_->stats()) : std::nullopt,
        evpn_ ? evpn_->ownNeighbors() : 0,
        claims_.total(),
        claims_.size(),
        guard_.applied(),
        guard_.failed()};
    redis::Fields row =
        statsRow(v, wallClock(Clock::now(), Clock::now(), std::chrono::system_clock::now()));
    // How routes reach BGP, and (platform sonic) what SONiC's owners left unlike the plan.
    row.emplace_back("advertise", std::string(advertiseName(cfg_.advertise)));
    row.emplace_back("sonic_settings", sonicSettingsSummary());
    if (networkTable_)
        row.emplace_back("network_table_errors", std::to_string(networkTable_->errors()));
    if (notifier_) {
        for (auto& field : noticeStatsFields(notifier_->counters(), notifier_->guardCounters()))
            row.push_back(std::move(field));
    }
    std::vector<std::string> args{"HSET",
                                  std::string(kStatsTable) + options_.stateDbSeparator + "global"};
    for (auto& [field, value] : row) {
        args.push_back(field);
        args.push_back(value);
    }
    stateDb_->command(args, [this](const redis::Value& r) { countRedisError(r); });
}

void Daemon::countRedisError(const redis::Value& reply) {
    if (!reply.isError() || reply.connectionLost()) return;
    if (redisErrors_++ == 0) log::warning("redis STATE_DB: stats write refused: ", reply.str);
}

}  // namespace twinrail::hostrouted
