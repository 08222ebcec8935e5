// hostrouted: kernel neighbors on host-facing ports -> /32 and /128 host routes that FRR
// advertises. This file only parses options, picks the config source and handles
// signals; the logic lives in Daemon and below.
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>

#include "config.h"
#include "daemon.h"
#include "twinrail/common/log.h"
#include "twinrail/common/notify.h"
#include "twinrail/common/sysexits.h"
#include "twinrail/netlink/route_table.h"
#include "twinrail/redis/config_db.h"
#include "twinrail/redis/sonic_db.h"

namespace tr = twinrail;
namespace hr = twinrail::hostrouted;

namespace {

constexpr const char* kUsage = R"(usage: hostrouted [options]
Turns live hosts on host-facing ports into /32 and /128 routes that FRR advertises.

Config (SONiC CONFIG_DB tables HOSTROUTED|global, HOSTROUTED_INTERFACE|<port>):
  --config FILE          read the config_db.json-shaped FILE instead of CONFIG_DB
                         (SIGHUP re-reads it)
  --check-config         validate the config and exit (0, or 78 with the bad field)
Redis:
  --redis-socket PATH    unix socket (default: from database_config.json, else TCP)
  --redis-host HOST      default 127.0.0.1
  --redis-port PORT      default 6379
  --db-config PATH       SONiC database_config.json
                         (default /var/run/redis/sonic-db/database_config.json)
  --no-state-db          do not publish state (implied by --config without --redis-*)
FRR:
  --vtysh PATH           default /usr/bin/vtysh
  --frr-pathspace NAME   FRR instance started with -N NAME
  --no-frr-check         do not read FRR's running config
Other:
  --log-level LEVEL      error, warning, notice, info (default) or debug
  --help
)";

struct Options {
    std::string configFile;
    bool checkOnly = false;
    bool redisGiven = false;
    bool noStateDb = false;
    tr::redis::Endpoint redis;
    std::string dbConfig = tr::redis::kSonicDbConfig;
    tr::frr::VtyshOptions vtysh;
    bool checkFrr = true;
    tr::log::Priority level = tr::log::Priority::Info;
};

std::optional<Options> parseArgs(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&i, argc, argv, &a]() -> std::optional<std::string> {
            if (i + 1 >= argc) {
                std::cerr << "hostrouted: " << a << " needs a value\n";
                return std::nullopt;
            }
            return std::string(argv[++i]);
        };
        std::optional<std::string> v;
        if (a == "--help" || a == "-h") {
            std::cout << kUsage;
            std::exit(0);
        } else if (a == "--check-config") {
            o.checkOnly = true;
        } else if (a == "--no-state-db") {
            o.noStateDb = true;
        } else if (a == "--no-frr-check") {
            o.checkFrr = false;
        } else if (!(v = value())) {
            return std::nullopt;
        } else if (a == "--config") {
            o.configFile = *v;
        } else if (a == "--redis-socket") {
            o.redis.unixSocket = *v;
            o.redisGiven = true;
        } else if (a == "--redis-host") {
            o.redis.host = *v;
            o.redisGiven = true;
        } else if (a == "--redis-port") {
            o.redis.port = std::atoi(v->c_str());
            o.redisGiven = true;
        } else if (a == "--db-config") {
            o.dbConfig = *v;
        } else if (a == "--vtysh") {
            o.vtysh.binary = *v;
        } else if (a == "--frr-pathspace") {
            o.vtysh.pathspace = *v;
        } else if (a == "--log-level") {
            static const std::map<std::string, tr::log::Priority> kLevels = {
                {"error", tr::log::Priority::Error}, {"warning", tr::log::Priority::Warning},
                {"notice", tr::log::Priority::Notice}, {"info", tr::log::Priority::Info},
                {"debug", tr::log::Priority::Debug}};
            auto it = kLevels.find(*v);
            if (it == kLevels.end()) {
                std::cerr << "hostrouted: unknown log level " << *v << "\n";
                return std::nullopt;
            }
            o.level = it->second;
        } else {
            std::cerr << "hostrouted: unknown option " << a << "\n" << kUsage;
            return std::nullopt;
        }
    }
    return o;
}

std::variant<nlohmann::json, std::string> readJsonFile(const std::string& path) {
    std::ifstream in(path);
    if (!in) return path + ": " + std::strerror(errno);
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    if (doc.is_discarded()) return path + ": not valid JSON";
    return doc;
}

// Owns the long-lived pieces so handlers capture `this`, never locals by reference.
class App {
public:
    explicit App(Options options) : opts_(std::move(options)), signals_(io_, SIGTERM, SIGINT, SIGHUP) {}

    int run() {
        try {
            routes_ = std::make_unique<tr::netlink::KernelRouteTable>();
            configDb_ = tr::redis::resolveDb("CONFIG_DB", opts_.redis, opts_.dbConfig);
            stateDb_ = tr::redis::resolveDb("STATE_DB", opts_.redis, opts_.dbConfig);
        } catch (const std::exception& e) {
            tr::log::error(e.what());
            return tr::exitcode::kOsErr;
        }
        waitSignal();
        if (!opts_.configFile.empty()) {
            io_.post([this] { loadFile(); });
        } else {
            watcher_ = std::make_unique<tr::redis::ConfigDbWatcher>(
                io_, configDb_.endpoint, configDb_.id, configDb_.separator,
                std::vector<std::string>{"HOSTROUTED", "HOSTROUTED_INTERFACE"},
                [this](const nlohmann::json& doc) { onConfig(doc, "CONFIG_DB"); });
            watcher_->start();
        }
        io_.run();
        return exitCode_;
    }

private:
    void waitSignal() {
        signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
            if (ec) return;
            if (sig == SIGHUP) {
                tr::log::notice("SIGHUP: reloading config");
                if (watcher_) watcher_->reload();
                else loadFile();
                return waitSignal();
            }
            tr::log::notice("signal ", sig, ": exiting; host routes stay in the kernel");
            tr::sdNotify("STOPPING=1");
            shutdown(tr::exitcode::kOk);
        });
    }

    void loadFile() {
        auto doc = readJsonFile(opts_.configFile);
        if (auto* err = std::get_if<std::string>(&doc)) return configFailed(*err);
        onConfig(std::get<nlohmann::json>(doc), opts_.configFile);
    }

    void configFailed(const std::string& what) {
        if (!daemon_) {
            tr::log::error("bad config: ", what);
            return shutdown(tr::exitcode::kConfig);
        }
        tr::log::error("bad config, keeping the running config: ", what);
    }

    void onConfig(const nlohmann::json& doc, const std::string& origin) {
        auto parsed = hr::parseConfig(doc);
        if (auto* err = std::get_if<hr::ConfigError>(&parsed))
            return configFailed(origin + ": " + err->str());
        const auto& cfg = std::get<hr::Config>(parsed);
        if (opts_.checkOnly) {
            tr::log::notice("config OK: ", cfg.interfaces.size(), " interface patterns");
            return shutdown(tr::exitcode::kOk);
        }
        if (daemon_) return daemon_->applyConfig(cfg);
        if (cfg.interfaces.empty())
            tr::log::warning(origin, ": no HOSTROUTED_INTERFACE entries; no host routes");
        hr::DaemonOptions d;
        if (!(opts_.noStateDb || (!opts_.configFile.empty() && !opts_.redisGiven))) {
            d.stateDb = stateDb_.endpoint;
            d.stateDbId = stateDb_.id;
            d.stateDbSeparator = stateDb_.separator;
        }
        d.vtysh = opts_.vtysh;
        d.checkFrr = opts_.checkFrr;
        try {
            daemon_ = std::make_unique<hr::Daemon>(io_, cfg, d, *routes_);
            daemon_->start();
        } catch (const std::exception& e) {
            tr::log::error("cannot start: ", e.what());
            return shutdown(tr::exitcode::kOsErr);
        }
        watchdog_ = std::make_unique<tr::WatchdogPinger>(io_);
        watchdog_->start();
    }

    void shutdown(int code) {
        exitCode_ = code;
        if (watchdog_) watchdog_->stop();
        if (daemon_) daemon_->stop();
        if (watcher_) watcher_->stop();
        io_.stop();
    }

    Options opts_;
    boost::asio::io_context io_;
    boost::asio::signal_set signals_;
    tr::redis::DbLocation configDb_, stateDb_;
    std::unique_ptr<tr::netlink::KernelRouteTable> routes_;
    std::unique_ptr<tr::redis::ConfigDbWatcher> watcher_;
    std::unique_ptr<hr::Daemon> daemon_;
    std::unique_ptr<tr::WatchdogPinger> watchdog_;
    int exitCode_ = tr::exitcode::kOk;
};

}  // namespace

int main(int argc, char** argv) {
    auto opts = parseArgs(argc, argv);
    if (!opts) return tr::exitcode::kUsage;
    tr::log::setMaxPriority(opts->level);
    try {
        App app(std::move(*opts));
        return app.run();
    } catch (const std::exception& e) {
        tr::log::error("fatal: ", e.what());
        return tr::exitcode::kSoftware;
    }
}
