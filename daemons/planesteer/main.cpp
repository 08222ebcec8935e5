// planesteer: on a server with bonded NICs (the bond attachment), keeps each peer's
// traffic off the plane that can no longer deliver to it (steer_policy.h). Options,
// config source and signals are the shared service host's; the machine's kernel, packet
// sockets and tc are handed to the daemon as its edges (edges.h).
#include <memory>

#include "config.h"
#include "daemon.h"
#include "edges.h"
#include "twinrail/service/service.h"

namespace tr = twinrail;
namespace ps = twinrail::planesteer;

namespace {

class Running final : public tr::service::RunningDaemon {
  public:
    Running(const ps::Config& cfg, const tr::service::StartContext& ctx)
        : daemon_(ctx.io, cfg, ps::realEdges(ctx.io)) {
        daemon_.start();
    }
    void apply(const nlohmann::json& doc) override {
        daemon_.applyConfig(std::get<ps::Config>(ps::parseConfig(doc)));
    }
    void stop() override { daemon_.stop(); }

  private:
    ps::Daemon daemon_;
};

}  // namespace

int main(int argc, char** argv) {
    tr::service::Hooks hooks;
    hooks.check = [](const nlohmann::json& doc) -> std::optional<std::string> {
        auto parsed = ps::parseConfig(doc);
        if (const auto* err = std::get_if<tr::service::ConfigError>(&parsed)) return err->str();
        return std::nullopt;
    };
    hooks.start = [](const nlohmann::json& doc, const tr::service::StartContext& ctx) {
        return std::make_unique<Running>(std::get<ps::Config>(ps::parseConfig(doc)), ctx);
    };
    return tr::service::serviceMain(
        {"planesteer",
         "Keeps each peer's traffic off the plane of a bonded NIC that no longer reaches it.",
         {"PLANESTEER", "PLANESTEER_BOND", "PLANESTEER_NOTICE"}},
        argc, argv, hooks);
}
