// hostrouted's side channels: HOST_ROUTE_STATS and the uplink pinner's wiring.
#include "daemon.h"
#include "state_rows.h"
#include "twinrail/common/log.h"

namespace twinrail::hostrouted {

PinSettings Daemon::pinSettings() const {
    return PinSettings{cfg_.uplinkPins,    cfg_.pinTableBase,      cfg_.pinRulePriority,
                       cfg_.routeProtocol, cfg_.pinMinWeightRatio, cfg_.ipv4,
                       cfg_.ipv6};
}

void Daemon::startPinner() {
    policyWriter_ = std::make_unique<netlink::KernelPolicyWriter>();
    pinner_ = std::make_unique<UplinkPinner>(io_, pinSettings(), *policyWriter_);
}

void Daemon::publishStats() {
    if (!stateDb_ || !stateDb_->connected()) return;
    StatsView v{
        registry_.stats(),
        registry_.installedCount(),
        registry_.size(),
        registry_.pendingCount(),
        prober_.stats(),
        monitor_.stats(),
        auditor_ ? auditor_->stats() : AuditStats{.state = "off"},
        configRejected_,
        redisErrors_ + hostTable_->errors() + foreignTable_->errors() + claimTable_->errors(),
        foreign_.size(),
        frrStatus_,
        pinner_ ? std::optional(pinner_->stats()) : std::nullopt,
        pinner_ ? std::optional(pinner_->watchStats()) : std::nullopt,
        esSync_ ? std::optional(esSync_->stats()) : std::nullopt,
        ownNeighbors_.size(),
        claims_.total(),
        claims_.size(),
        guard_.applied(),
        guard_.failed()};
    redis::Fields row =
        statsRow(v, wallClock(Clock::now(), Clock::now(), std::chrono::system_clock::now()));
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
