// pathqd: measured link quality -> link-bandwidth communities in FRR -> weighted ECMP in
// the kernels of the other switches. Options, config source and signals are the shared
// service host's; the logic lives in Daemon and below.
#include <memory>

#include "config.h"
#include "daemon.h"
#include "sonic_counter_source.h"
#include "twinrail/service/service.h"

namespace tr = twinrail;
namespace pq = twinrail::pathqd;

namespace {

std::unique_ptr<pq::CounterSource> makeSource(const pq::Config& cfg,
                                              const tr::service::StartContext& ctx) {
    if (cfg.source == pq::CounterKind::Linux)
        return std::make_unique<pq::LinuxCounterSource>(ctx.io);
    // STATE_DB too: portstat takes the speed from there when the port is oper up.
    auto counters = tr::redis::resolveDb("COUNTERS_DB", ctx.options.redis, ctx.options.dbConfig);
    auto appl = tr::redis::resolveDb("APPL_DB", ctx.options.redis, ctx.options.dbConfig);
    auto state = tr::redis::resolveDb("STATE_DB", ctx.options.redis, ctx.options.dbConfig);
    return std::make_unique<pq::SonicCounterSource>(ctx.io, counters, appl, state);
}

pq::DaemonOptions daemonOptions(const tr::service::StartContext& ctx) {
    pq::DaemonOptions d;
    if (ctx.stateDb) {
        d.stateDb = ctx.stateDb->endpoint;
        d.stateDbId = ctx.stateDb->id;
        d.stateDbSeparator = ctx.stateDb->separator;
    }
    d.vtysh = ctx.options.vtysh;
    d.useFrr = ctx.options.checkFrr;
    return d;
}

class Running final : public tr::service::RunningDaemon {
  public:
    Running(const pq::Config& cfg, const tr::service::StartContext& ctx)
        : daemon_(ctx.io, cfg, daemonOptions(ctx), makeSource(cfg, ctx)) {
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
