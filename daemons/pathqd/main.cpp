// pathqd: measured link quality -> link-bandwidth communities in FRR -> weighted ECMP in
// the kernels of the other switches. Options, config source and signals are the shared
// service host's; the logic lives in Daemon and below, and everything it reaches outside
// itself is built here (realEdges) and passed in.
#include <memory>

#include "config.h"
#include "daemon.h"
#include "edges.h"
#include "twinrail/service/service.h"

namespace tr = twinrail;
namespace pq = twinrail::pathqd;

namespace {

pq::DaemonOptions daemonOptions(const tr::service::StartContext& ctx) {
    pq::DaemonOptions d;
    if (ctx.stateDb) d.stateDbSeparator = ctx.stateDb->separator;
    d.useFrr = ctx.options.checkFrr;
    return d;
}

// The machine's counters, FRR, Redis, kernel routes and sockets.
pq::Edges edges(const pq::Config& cfg, const tr::service::StartContext& ctx) {
    pq::RealEdgeOptions e;
    e.source = cfg.source;
    if (cfg.source == pq::CounterKind::Sonic) {
        // STATE_DB too: portstat takes the speed from there when the port is oper up.
        const auto& o = ctx.options;
        e.countersDb = tr::redis::resolveDb("COUNTERS_DB", o.redis, o.dbConfig);
        e.applDb = tr::redis::resolveDb("APPL_DB", o.redis, o.dbConfig);
        e.portStateDb = tr::redis::resolveDb("STATE_DB", o.redis, o.dbConfig);
    }
    if (cfg.weightAuditSource == pq::WeightAuditSource::Sonic ||
        cfg.source == pq::CounterKind::Sonic) {
        const auto& o = ctx.options;  // on SONiC: the weight audit's DBs and the W-ECMP knob
        if (cfg.weightAuditSource == pq::WeightAuditSource::Sonic) {
            e.weightsApplDb = tr::redis::resolveDb("APPL_DB", o.redis, o.dbConfig);
            e.asicDb = tr::redis::resolveDb("ASIC_DB", o.redis, o.dbConfig);
            e.weightsCountersDb = tr::redis::resolveDb("COUNTERS_DB", o.redis, o.dbConfig);
        }
        e.configDb = tr::redis::resolveDb("CONFIG_DB", o.redis, o.dbConfig);
    }
    if (ctx.stateDb) {
        e.stateDb = ctx.stateDb->endpoint;
        e.stateDbId = ctx.stateDb->id;
    }
    e.frr = ctx.options.frr;
    return pq::realEdges(ctx.io, e);
}

class Running final : public tr::service::RunningDaemon {
  public:
    Running(const pq::Config& cfg, const tr::service::StartContext& ctx)
        : daemon_(ctx.io, cfg, daemonOptions(ctx), edges(cfg, ctx)) {
        if (cfg.ports.empty()) tr::log::warning("no PATHQD_PORT entries; nothing to measure");
        daemon_.start();
    }
    void apply(const nlohmann::json& doc) override {
        daemon_.applyConfig(std::get<pq::Config>(pq::parseConfig(doc)));
    }
    void stop() override { daemon_.stop(); }

  private:
    pq::Daemon daemon_;
};

}  // namespace

int main(int argc, char** argv) {
    tr::service::Hooks hooks;
    hooks.check = [](const nlohmann::json& doc) -> std::optional<std::string> {
        auto parsed = pq::parseConfig(doc);
        if (const auto* err = std::get_if<pq::ConfigError>(&parsed)) return err->str();
        return std::nullopt;
    };
    hooks.start = [](const nlohmann::json& doc, const tr::service::StartContext& ctx) {
        return std::make_unique<Running>(std::get<pq::Config>(pq::parseConfig(doc)), ctx);
    };
    return tr::service::serviceMain(
        {"pathqd",
         "Turns measured link quality into BGP link-bandwidth weights (weighted ECMP).",
         {"PATHQD", "PATHQD_PORT"}},
        argc, argv, hooks);
}
