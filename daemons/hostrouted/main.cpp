// hostrouted: kernel neighbors on host-facing ports -> /32 and /128 host routes that FRR
// advertises. Options, config source and signals are the shared service host's; the
// logic lives in Daemon and below.
#include <memory>

#include "config.h"
#include "daemon.h"
#include "twinrail/redis/sonic_db.h"
#include "twinrail/service/service.h"

namespace tr = twinrail;
namespace hr = twinrail::hostrouted;

namespace {

hr::DaemonOptions daemonOptions(const tr::service::StartContext& ctx) {
    hr::DaemonOptions d;
    if (ctx.stateDb) d.stateDbSeparator = ctx.stateDb->separator;
    d.checkFrr = ctx.options.checkFrr;
    return d;
}

// The machine's kernel, FRR, Redis and tc: everything the daemon reaches outside itself.
hr::Edges edges(const tr::service::StartContext& ctx) {
    hr::RealEdgeOptions e;
    if (ctx.stateDb) {
        e.stateDb = ctx.stateDb->endpoint;
        e.stateDbId = ctx.stateDb->id;
        // APPL_DB beside it (database_config.json names it on SONiC): aclorch's rules of
        // static smart routing. Connected only when the pins need it.
        auto appl = tr::redis::resolveDb("APPL_DB", ctx.options.redis, ctx.options.dbConfig);
        e.applDb = appl.endpoint;
        e.applDbId = appl.id;
    }
    e.frr = ctx.options.frr;
    return hr::realEdges(ctx.io, e);
}

class Running final : public tr::service::RunningDaemon {
  public:
    Running(const hr::Config& cfg, const tr::service::StartContext& ctx)
        : daemon_(ctx.io, cfg, daemonOptions(ctx), edges(ctx)) {
        if (cfg.interfaces.empty())
            tr::log::warning("no HOSTROUTED_INTERFACE entries; no host routes");
        daemon_.start();
    }
    void apply(const nlohmann::json& doc) override {
        daemon_.applyConfig(std::get<hr::Config>(hr::parseConfig(doc)));
    }
    void stop() override { daemon_.stop(); }

  private:
    hr::Daemon daemon_;
};

}  // namespace

int main(int argc, char** argv) {
    tr::service::Hooks hooks;
    hooks.check = [](const nlohmann::json& doc) -> std::optional<std::string> {
        auto parsed = hr::parseConfig(doc);
        if (const auto* err = std::get_if<hr::ConfigError>(&parsed)) return err->str();
        return std::nullopt;
    };
    hooks.start = [](const nlohmann::json& doc, const tr::service::StartContext& ctx) {
        return std::make_unique<Running>(std::get<hr::Config>(hr::parseConfig(doc)), ctx);
    };
    return tr::service::serviceMain(
        {"hostrouted",
         "Turns live hosts on host-facing ports into /32 and /128 routes that FRR advertises.",
         {"HOSTROUTED", "HOSTROUTED_INTERFACE", "UPLINK_PIN", "HOSTROUTED_BINDING",
          "HOSTROUTED_UNFREEZE", "HOSTROUTED_NOTICE"}},
        argc, argv, hooks);
}
