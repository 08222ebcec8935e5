#include "twinrail/frr/vty_tcp_channel.h"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <stdexcept>

#include "twinrail/common/log.h"
#include "twinrail/common/names.h"
#include "twinrail/frr/vty_routing.h"
#include "twinrail/frr/vty_session.h"
#include "twinrail/redis/auth.h"

namespace twinrail::frr {
namespace {
namespace asio = boost::asio;

class VtyTcpFrr final : public Channel {
  public:
    VtyTcpFrr(asio::io_context& io, const VtyTcpOptions& options)
        : io_(io),
          zebra_(VtySession::create(io, settings(options, "zebra", options.zebraPort))),
          bgpd_(VtySession::create(io, settings(options, "bgpd", options.bgpdPort))) {}

    ~VtyTcpFrr() override {
        // No callback after this: the sessions' handlers find them stopped.
        zebra_->shutdown();
        bgpd_->shutdown();
    }
    VtyTcpFrr(const VtyTcpFrr&) = delete;
    VtyTcpFrr& operator=(const VtyTcpFrr&) = delete;

    void run(std::vector<std::string> args, ProcessCallback done) override {
        VtyRunPlan plan = planVtyRun(args);
        if (!plan.error.empty()) {
            ProcessResult refused;
            refused.err = "refused to send to FRR: " + plan.error;
            return later([done = std::move(done), refused = std::move(refused)] { done(refused); });
        }
        if (plan.scripts.empty()) {  // nothing to send ("configure terminal", "end")
            return later([done = std::move(done)] {
                ProcessResult nothing;
                nothing.exitCode = 0;
                done(nothing);
            });
        }
        auto scripts = std::make_shared<std::vector<VtyScript>>(std::move(plan.scripts));
        runScripts(scripts, 0, std::make_shared<ProcessResult>(), std::move(done));
    }

    void show(const std::string& command, Done done) override {
        if (command == "show running-config") return showRunning(std::move(done));
        auto owner = execCommandOwner(command);
        if (auto why = checkVtyLine(command); why || !owner || command.rfind("show", 0) != 0) {
            std::string what = "refused \"" + names::printable(command, 200) +
                               "\": " + (why ? *why : std::string("not a show command"));
            return later([done = std::move(done), what = std::move(what)] { done(false, what); });
        }
        session(*owner).run({command}, [done = std::move(done)](VtyResult r) {
            done(r.ok, r.ok ? std::move(r.output) : std::move(r.error));
        });
    }

    void showRunning(Done done) override {
        // Both daemons at once; merged when both have answered.
        struct Pending {
            int left = 2;
            std::string zebra, bgpd, error;
            Done done;
        };
        auto pending = std::make_shared<Pending>();
        pending->done = std::move(done);
        auto collect = [pending](std::string Pending::*slot) {
            return [pending, slot](VtyResult r) {
                if (!r.ok && pending->error.empty()) pending->error = r.error;
                (*pending).*slot = std::move(r.output);
                if (--pending->left > 0) return;
                if (!pending->error.empty()) return pending->done(false, pending->error);
                std::string merged = mergeRunningConfigs(pending->zebra, pending->bgpd);
                const bool ok = merged.find("frr version") != std::string::npos;
                pending->done(ok, ok ? std::move(merged) : "no running-config in FRR's answer");
            };
        };
        zebra_->run({"show running-config"}, collect(&Pending::zebra));
        bgpd_->run({"show running-config"}, collect(&Pending::bgpd));
    }

    void zebra(std::string command, Done done) override {
        if (auto why = checkVtyLine(command)) {
            std::string what = "refused \"" + names::printable(command, 200) + "\": " + *why;
            return later([done = std::move(done), what = std::move(what)] { done(false, what); });
        }
        zebra_->run({std::move(command)}, [done = std::move(done)](VtyResult r) {
            done(r.ok, r.ok ? std::move(r.output) : std::move(r.error));
        });
    }

    void setZebraSocket(std::string path) override {
        log::info("FRR: zebra is reached over TCP (", zebra_->describe(), "), not at ",
                  names::printable(path, 200));
    }

    void watchRestarts(RestartHandler handler) override {
        handler_ = std::move(handler);
        // The sessions call back only while this object owns them (see the destructor).
        zebra_->watch([this] { handler_("zebra"); });
        bgpd_->watch([this] { handler_("bgpd"); });
    }

    void stopWatching() override {
        zebra_->unwatch();
        bgpd_->unwatch();
    }

    std::string describe() const override {
        return "FRR over TCP vty (" + zebra_->describe() + ", " + bgpd_->describe() + ")";
    }

  private:
    static VtySessionSettings settings(const VtyTcpOptions& o, std::string name, uint16_t port) {
        VtySessionSettings s;
        s.name = std::move(name);
        s.endpoint = asio::ip::tcp::endpoint(asio::ip::make_address(o.address), port);
        s.password = o.password;
        s.enablePassword = o.enablePassword;
        s.timeout = o.timeout;
        s.keepalive = o.keepalive;
        s.reconnectMin = o.reconnectMin;
        s.reconnectMax = o.reconnectMax;
        s.maxReply = o.maxReply;
        return s;
    }

    VtySession& session(FrrDaemon daemon) { return daemon == FrrDaemon::Zebra ? *zebra_ : *bgpd_; }

    template <typename F>
    void later(F&& f) {
        // Asynchronous as a real answer is: callers may hold state across the call.
        asio::post(io_, std::forward<F>(f));
    }

    // The scripts run one after another (each on its daemon's connection); the first
    // failure ends the call, as vtysh stops at the first failing -c.
    void runScripts(const std::shared_ptr<std::vector<VtyScript>>& scripts, size_t index,
                    const std::shared_ptr<ProcessResult>& result, ProcessCallback done) {
        if (index == scripts->size()) {
            result->exitCode = 0;
            return done(*result);
        }
        VtyScript& script = (*scripts)[index];
        session(script.daemon)
            .run(script.lines,
                 [this, scripts, index, result, done = std::move(done)](const VtyResult& r) {
                     result->out += r.output;
                     if (!r.ok) {
                         result->exitCode = 1;
                         result->err = r.error;
                         result->timedOut = r.timedOut;
                         return done(*result);
                     }
                     runScripts(scripts, index + 1, result, done);
                 });
    }

    asio::io_context& io_;
    std::shared_ptr<VtySession> zebra_;
    std::shared_ptr<VtySession> bgpd_;
    RestartHandler handler_;
};

}  // namespace

std::optional<std::string> readVtyPasswordFile(const std::string& path, std::string& password) {
    std::string text;
    if (auto error = redis::readPasswordFile(path, text)) return error;
    for (size_t i = 0; i < text.size(); ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if (byte <= 0x20 || byte >= 0x7f) {
            return "password file " + path + ": byte " + std::to_string(i + 1) +
                   " is a space, a control character or not ASCII; FRR's vty password is one "
                   "word of printable ASCII";
        }
    }
    password = std::move(text);
    return std::nullopt;
}

std::optional<std::string> checkVtyTcpOptions(const VtyTcpOptions& options) {
    boost::system::error_code ec;
    asio::ip::make_address(options.address, ec);
    if (ec)
        return "FRR vty address \"" + names::printable(options.address) + "\" is not an IP address";
    if (options.zebraPort == 0 || options.bgpdPort == 0) return "FRR vty ports must not be 0";
    if (options.password.empty()) return "FRR vty over TCP needs a password (--frr-password-file)";
    if (options.timeout.count() <= 0 || options.keepalive.count() <= 0 ||
        options.reconnectMin.count() <= 0 || options.reconnectMax < options.reconnectMin ||
        options.maxReply < 4096)
        return "FRR vty timeouts must be positive, reconnectMax >= reconnectMin, maxReply >= 4096";
    return std::nullopt;
}

std::unique_ptr<Channel> makeVtyTcpFrr(asio::io_context& io, const VtyTcpOptions& options) {
    if (auto why = checkVtyTcpOptions(options)) throw std::invalid_argument(*why);
    return std::make_unique<VtyTcpFrr>(io, options);
}

}  // namespace twinrail::frr
