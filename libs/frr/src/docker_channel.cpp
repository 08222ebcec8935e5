#include "twinrail/frr/docker_channel.h"

#include <boost/asio/post.hpp>
#include <deque>
#include <stdexcept>

#include "twinrail/common/names.h"
#include "twinrail/frr/docker_engine.h"
#include "twinrail/frr/docker_stream.h"

namespace twinrail::frr {
namespace {

namespace asio = boost::asio;

ProcessResult asProcess(docker::ExecResult r) {
    ProcessResult p;
    p.exitCode = r.exitCode;
    p.out = std::move(r.out);
    p.err = r.error.empty() ? std::move(r.err) : r.error + (r.err.empty() ? "" : ": " + r.err);
    p.timedOut = r.timedOut;
    return p;
}

class DockerFrr final : public Channel {
  public:
    DockerFrr(asio::io_context& io, const DockerFrrOptions& options)
        : io_(io), options_(options), engine_(docker::Engine::create(io, engineOptions(options))) {}
    ~DockerFrr() override { engine_->stop(); }
    DockerFrr(const DockerFrr&) = delete;
    DockerFrr& operator=(const DockerFrr&) = delete;

    void run(std::vector<std::string> args, ProcessCallback done) override {
        for (const auto& a : args) {
            if (auto why = checkCommandLine(a)) {
                ProcessResult refused;
                refused.err = "refused to run vtysh: \"" + names::printable(a) + "\" " + *why;
                asio::post(io_, [done = std::move(done), refused] { done(refused); });
                return;
            }
        }
        args.insert(args.begin(), "vtysh");
        engine_->exec(
            options_.container, std::move(args),
            [done = std::move(done)](docker::ExecResult r) { done(asProcess(std::move(r))); });
    }

    void show(const std::string& command, Done done) override {
        run({"-c", command}, [done = std::move(done)](const ProcessResult& r) {
            if (r.timedOut) return done(false, "no answer within 20 s (FRR busy or hung?)");
            if (r.exitCode != 0) return done(false, r.err.empty() ? r.out : r.err);
            done(true, r.out);
        });
    }

    void showRunning(Done done) override {
        run({"-c", "show running-config"}, [done = std::move(done)](const ProcessResult& r) {
            const bool ok = r.exitCode == 0 && r.out.find("frr version") != std::string::npos;
            if (r.timedOut) return done(false, "no answer within 20 s (FRR busy or hung?)");
            done(ok, ok ? r.out : (r.err.empty() ? r.out : r.err));
        });
    }

    // One at a time and in order, as zebra's own vty socket would take them.
    void zebra(std::string command, Done done) override {
        zebraQueue_.push_back({std::move(command), std::move(done)});
        if (zebraQueue_.size() == 1) nextZebra();
    }

    void setZebraSocket(std::string /*path*/) override {}

    void watchRestarts(RestartHandler handler) override {
        engine_->watchStarts(options_.container, [handler = std::move(handler)] {
            handler("zebra");
            handler("bgpd");
        });
    }

    void stopWatching() override { engine_->unwatch(); }

    std::string describe() const override {
        return "vtysh in container " + options_.container + " (Docker at " + options_.socket + ")";
    }

  private:
    struct ZebraCommand {
        std::string command;
        Done done;
    };

    static docker::EngineOptions engineOptions(const DockerFrrOptions& o) {
        docker::EngineOptions e;
        e.socket = o.socket;
        e.timeout = o.timeout;
        return e;
    }

    void nextZebra() {
        const std::string command = zebraQueue_.front().command;
        run({"-d", "zebra", "-c", command}, [this](const ProcessResult& r) {
            // The channel outlives its callbacks: the engine calls none after ~DockerFrr.
            Done done = std::move(zebraQueue_.front().done);
            zebraQueue_.pop_front();
            if (!zebraQueue_.empty()) nextZebra();
            if (r.exitCode != 0) return done(false, r.err.empty() ? r.out : r.err);
            done(true, r.out);
        });
    }

    asio::io_context& io_;
    DockerFrrOptions options_;
    std::shared_ptr<docker::Engine> engine_;
    std::deque<ZebraCommand> zebraQueue_;
};

}  // namespace

std::optional<std::string> checkDockerFrrOptions(const DockerFrrOptions& options) {
    if (auto why = docker::checkContainerName(options.container))
        return "--frr-container \"" + names::printable(options.container) + "\" " + *why;
    if (options.socket.empty() || options.socket.front() != '/' || options.socket.size() > 100) {
        return "--docker-socket \"" + names::printable(options.socket) +
               "\": an absolute path of at most 100 bytes (a unix socket's)";
    }
    if (options.timeout.count() <= 0) return "the command timeout must be positive";
    return std::nullopt;
}

std::unique_ptr<Channel> makeDockerFrr(asio::io_context& io, const DockerFrrOptions& options) {
    if (auto why = checkDockerFrrOptions(options)) throw std::invalid_argument(*why);
    return std::make_unique<DockerFrr>(io, options);
}

}  // namespace twinrail::frr
