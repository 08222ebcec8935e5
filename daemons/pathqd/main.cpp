// pathqd: measured link quality -> link-bandwidth communities in FRR -> weighted ECMP in
// the kernels of the other switches. Options, config source and signals are the shared
// service host's; the logic lives in Daemon and below.
#include <memory>

#include "config.h"
#include "daemon.h"
#include "twinrail/service/service.h"

namespace tr = twinrail;
namespace pq = twinrail::pathqd;

namespace {

struct Runtime {
    std::unique_ptr<pq::Daemon> daemon;
};

std::unique_ptr<pq::CounterSource> makeSource(const pq::Config& cfg,
                                              const tr::service::StartContext& ctx) {
    if (cfg.source == pq::CounterKind::Linux) return std::make_unique<pq::LinuxCounterSource>();
    auto counters = tr::redis::resolveDb("COUNTERS_DB", ctx.options.redis, ctx.options.dbConfig);
    auto appl = tr::redis::resolveDb("APPL_DB", ctx.options.redis, ctx.options.dbConfig);
    return std::make_unique<pq::SonicCounterSource>(ctx.io, counters.endpoint, counters.id,
                                                    appl.endpoint, appl.id);
}

}  // namespace

int main(int argc, char** argv) {
    auto rt = std::make_shared<Runtime>();
    tr::service::Hooks hooks;
    hooks.check = [](const nlohmann::json& doc) -> std::optional<std::string> {
        auto parsed = pq::parseConfig(doc);
        if (const auto* err = std::get_if<pq::ConfigError>(&parsed)) return err->str();
        return std::nullopt;
    };
    hooks.start = [rt](const nlohmann::json& doc, const tr::service::StartContext& ctx) {
        const auto cfg = std::get<pq::Config>(pq::parseConfig(doc));
        if (cfg.ports.empty()) tr::log::warning("no PATHQD_PORT entries; nothing to measure");
        pq::DaemonOptions d;
        if (ctx.stateDb) {
            d.stateDb = ctx.stateDb->endpoint;
            d.stateDbId = ctx.stateDb->id;
            d.stateDbSeparator = ctx.stateDb->separator;
        }
        d.vtysh = ctx.options.vtysh;
        d.useFrr = ctx.options.checkFrr;
        rt->daemon = std::make_unique<pq::Daemon>(ctx.io, cfg, d, makeSource(cfg, ctx));
        rt->daemon->start();
    };
    hooks.apply = [rt](const nlohmann::json& doc) {
        rt->daemon->applyConfig(std::get<pq::Config>(pq::parseConfig(doc)));
    };
    hooks.stop = [rt] { rt->daemon->stop(); };
    return tr::service::serviceMain(
        {"pathqd",
         "Turns measured link quality into BGP link-bandwidth weights (weighted ECMP).",
         {"PATHQD", "PATHQD_PORT"}},
        argc, argv, hooks);
}
