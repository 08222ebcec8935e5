// hostrouted: kernel neighbors on host-facing ports -> /32 and /128 host routes that FRR
// advertises. Options, config source and signals are the shared service host's; the
// logic lives in Daemon and below.
#include <memory>

#include "config.h"
#include "daemon.h"
#include "twinrail/netlink/route_table.h"
#include "twinrail/service/service.h"

namespace tr = twinrail;
namespace hr = twinrail::hostrouted;

namespace {

// Owns the daemon so the hooks capture one pointer, never locals by reference.
struct Runtime {
    std::unique_ptr<tr::netlink::KernelRouteTable> routes;
    std::unique_ptr<hr::Daemon> daemon;
};

}  // namespace

int main(int argc, char** argv) {
    auto rt = std::make_shared<Runtime>();
    tr::service::Hooks hooks;
    hooks.check = [](const nlohmann::json& doc) -> std::optional<std::string> {
        auto parsed = hr::parseConfig(doc);
        if (const auto* err = std::get_if<hr::ConfigError>(&parsed)) return err->str();
        return std::nullopt;
    };
    hooks.start = [rt](const nlohmann::json& doc, const tr::service::StartContext& ctx) {
        const auto cfg = std::get<hr::Config>(hr::parseConfig(doc));
        if (cfg.interfaces.empty())
            tr::log::warning("no HOSTROUTED_INTERFACE entries; no host routes");
        hr::DaemonOptions d;
        if (ctx.stateDb) {
            d.stateDb = ctx.stateDb->endpoint;
            d.stateDbId = ctx.stateDb->id;
            d.stateDbSeparator = ctx.stateDb->separator;
        }
        d.vtysh = ctx.options.vtysh;
        d.checkFrr = ctx.options.checkFrr;
        rt->routes = std::make_unique<tr::netlink::KernelRouteTable>();
        rt->daemon = std::make_unique<hr::Daemon>(ctx.io, cfg, d, *rt->routes);
        rt->daemon->start();
    };
    hooks.apply = [rt](const nlohmann::json& doc) {
        rt->daemon->applyConfig(std::get<hr::Config>(hr::parseConfig(doc)));
    };
    hooks.stop = [rt] { rt->daemon->stop(); };
    return tr::service::serviceMain(
        {"hostrouted",
         "Turns live hosts on host-facing ports into /32 and /128 routes that FRR advertises.",
         {"HOSTROUTED", "HOSTROUTED_INTERFACE"}},
        argc, argv, hooks);
}
