#include "twinrail/frr/channel.h"

#include "twinrail/frr/daemon_vty.h"
#include "twinrail/frr/restart_watcher.h"
#include "twinrail/frr/vtysh.h"

namespace twinrail::frr {

void Channel::ensure(const std::vector<ConfigLine>& required, bool apply,
                     std::function<void(EnsureResult)> done) {
    showRunning([this, required, apply, done = std::move(done)](bool ok, const std::string& text) {
        auto result = std::make_shared<EnsureResult>();
        if (!ok) {
            result->error = "FRR (" + describe() + ") failed: " + text;
            return done(*result);
        }
        result->reachable = true;
        RunningConfig running = RunningConfig::parse(text);
        auto missing = missingLines(running, required);
        if (!apply || missing.empty()) {
            result->missing = std::move(missing);
            return done(*result);
        }
        auto todo = std::make_shared<std::vector<ConfigLine>>(std::move(missing));
        applyNext(todo, running, result, required, done);
    });
}

void Channel::applyNext(const std::shared_ptr<std::vector<ConfigLine>>& todo,
                        const RunningConfig& running, const std::shared_ptr<EnsureResult>& result,
                        const std::vector<ConfigLine>& required,
                        const std::function<void(EnsureResult)>& done) {
    if (todo->empty()) {
        // Re-read: what FRR shows, not what we sent, is the truth.
        showRunning([this, result, required, done](bool ok, const std::string& text) {
            if (!ok) {
                result->error = "FRR (" + describe() + ") failed after applying: " + text;
            } else {
                result->missing = missingLines(RunningConfig::parse(text), required);
            }
            done(*result);
        });
        return;
    }
    ConfigLine line = todo->front();
    todo->erase(todo->begin());
    auto args = vtyshAddArgs(running, line);
    if (args.empty()) return applyNext(todo, running, result, required, done);
    run(args, [this, todo, running, result, required, done, line](const ProcessResult& r) {
        if (r.exitCode == 0) {
            result->added.push_back(line);
        } else if (result->error.empty()) {
            std::string why = r.timedOut ? "no answer within 20 s" : r.out + r.err;
            result->error = "FRR (" + describe() + ") rejected '" + line.describe() + "': " + why;
        }
        applyNext(todo, running, result, required, done);
    });
}

namespace {

class LocalFrr final : public Channel {
  public:
    LocalFrr(boost::asio::io_context& io, const VtyshOptions& options,
             std::chrono::milliseconds zebraTimeout)
        : io_(io),
          vtysh_(io, options),
          directory_(runDirectory(options)),
          zebraTimeout_(zebraTimeout),
          zebra_(std::make_unique<DaemonVty>(io, directory_ + "/zebra.vty", zebraTimeout)) {}

    void run(std::vector<std::string> args, ProcessCallback done) override {
        vtysh_.run(std::move(args), std::move(done));
    }
    void show(const std::string& command, Done done) override {
        vtysh_.show(command, std::move(done));
    }
    void showRunning(Done done) override { vtysh_.showRunning(std::move(done)); }
    void zebra(std::string command, Done done) override {
        zebra_->command(std::move(command), std::move(done));
    }
    void setZebraSocket(std::string path) override {
        zebra_ = std::make_unique<DaemonVty>(io_, std::move(path), zebraTimeout_);
    }
    void watchRestarts(RestartHandler handler) override {
        watcher_ = std::make_unique<RestartWatcher>(io_, directory_, std::move(handler));
        watcher_->start();
    }
    void stopWatching() override {
        if (watcher_) watcher_->stop();
    }
    std::string describe() const override { return zebra_->socketPath(); }

  private:
    boost::asio::io_context& io_;
    Vtysh vtysh_;
    std::string directory_;
    std::chrono::milliseconds zebraTimeout_;
    std::unique_ptr<DaemonVty> zebra_;
    std::unique_ptr<RestartWatcher> watcher_;
};

}  // namespace

std::unique_ptr<Channel> makeLocalFrr(boost::asio::io_context& io, const VtyshOptions& options,
                                      std::chrono::milliseconds zebraTimeout) {
    return std::make_unique<LocalFrr>(io, options, zebraTimeout);
}

}  // namespace twinrail::frr
