#include "service_hooks.h"

#include <memory>
#include <utility>

#include "config.h"
#include "daemon.h"

namespace twinrail::arsd {

namespace {

class Running final : public service::RunningDaemon {
  public:
    Running(boost::asio::io_context& io, Config cfg, Edges edges)
        : daemon_(io, std::move(cfg), std::move(edges)) {
        daemon_.start();
    }
    void apply(const nlohmann::json& doc) override {
        daemon_.applyConfig(std::get<Config>(parseConfig(doc)));
    }
    void stop() override { daemon_.stop(); }

  private:
    Daemon daemon_;
};

}  // namespace

service::ServiceSpec serviceSpec() {
    return {"arsd",
            "Adaptive routing (ARS) in software: flowlets or sprayed packets over the kernel's "
            "multipath routes by port quality.",
            {"ARS_PROFILE", "ARS_OBJECT", "ARS_INTERFACES", "ARS_NEXTHOPS", "SWITCH_HASH",
             "GLOBAL_ARS", "UPLINK_PIN", "PORT", "PATHQD_PORT"}};
}

service::Hooks serviceHooks(EdgesFactory edges) {
    service::Hooks hooks;
    hooks.check = [](const nlohmann::json& doc) -> std::optional<std::string> {
        auto parsed = parseConfig(doc);
        if (const auto* err = std::get_if<std::string>(&parsed)) return *err;
        return std::nullopt;
    };
    hooks.start = [edges = std::move(edges)](
                      const nlohmann::json& doc,
                      const service::StartContext& ctx) -> std::unique_ptr<service::RunningDaemon> {
        return std::make_unique<Running>(ctx.io, std::get<Config>(parseConfig(doc)), edges(ctx.io));
    };
    return hooks;
}

}  // namespace twinrail::arsd
