#include "twinrail/service/service.h"

#include <charconv>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <variant>

#include "twinrail/common/sysexits.h"
#include "twinrail/redis/auth.h"
#include "twinrail/service/yang_check.h"

namespace twinrail::service {
namespace {

std::string usage(const ServiceSpec& spec) {
    std::string tables;
    for (const auto& t : spec.tables) tables += (tables.empty() ? "" : ", ") + t;
    return "usage: " + spec.name + " [options]\n" + spec.summary + "\n\n" +
           "Config (SONiC CONFIG_DB tables " + tables + "):\n" +
           R"(  --config FILE          read the config_db.json-shaped FILE instead of CONFIG_DB
                         (SIGHUP re-reads it)
  --check-config         validate the config and exit (0, or 78 with the bad field);
                         then check the daemon's tables against the YANG models, as
                         SONiC's config reload would (skipped, with a notice, when
                         no model of them is installed, as off SONiC)
  --yang-dir DIR         YANG modules for --check-config (repeatable; default
                         /usr/local/yang-models when it exists, /usr/share/twinrail/yang)
Redis:
  --redis-socket PATH    unix socket (default: from database_config.json, else TCP)
  --redis-host HOST      default 127.0.0.1
  --redis-port PORT      default 6379
  --redis-user NAME      ACL user (default: the default user)
  --redis-password-file PATH
                         its password, read once at start; the file must not be
                         readable by group or others (see docs/redis-acl.md)
  --db-config PATH       SONiC database_config.json
                         (default /var/run/redis/sonic-db/database_config.json)
  --no-state-db          do not publish state (implied by --config without --redis-*)
FRR:
  --frr vtysh|docker     vtysh and FRR's unix sockets on this host (default), or
                         vtysh in FRR's container through the Docker Engine API
                         (SONiC: FRR runs in the bgp container)
  --vtysh PATH           default /usr/bin/vtysh
  --frr-pathspace NAME   FRR instance started with -N NAME
  --frr-container NAME   docker: FRR's container (default bgp)
  --docker-socket PATH   docker: the Docker Engine's socket (default
                         /var/run/docker.sock)
  --no-frr-check         do not read or change FRR's configuration
Other:
  --log-level LEVEL      error, warning, notice, info (default) or debug
  --help
)";
}

std::variant<nlohmann::json, std::string> readJsonFile(const std::string& path) {
    std::ifstream in(path);
    if (!in) return path + ": " + std::strerror(errno);
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    if (doc.is_discarded()) return path + ": not valid JSON";
    return doc;
}

}  // namespace

std::optional<int> parsePort(const std::string& v) {
    int port = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), port);
    if (ec != std::errc() || end != v.data() + v.size() || port < 1 || port > 65535)
        return std::nullopt;
    return port;
}

ParsedArgs parseCommonArgs(const ServiceSpec& spec, int argc, char** argv) {
    ParsedArgs bad{std::nullopt, exitcode::kUsage};  // not const: returned by move
    CommonOptions o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::cout << usage(spec);
            return ParsedArgs{std::nullopt, exitcode::kOk};
        }
        if (a == "--check-config") {
            o.checkOnly = true;
            continue;
        }
        if (a == "--no-state-db") {
            o.noStateDb = true;
            continue;
        }
        if (a == "--no-frr-check") {
            o.checkFrr = false;
            continue;
        }
        if (a == "--redis-tls" || a == "--redis-ca" || a == "--redis-cert" || a == "--redis-key" ||
            a == "--redis-sni") {
            // Only the CLI's reader speaks TLS (hiredis 0.14 has none; see client.h).
            std::cerr << spec.name << ": " << a
                      << ": the daemons do not use TLS: they reach their switch-local Redis "
                         "over its unix socket (--redis-socket, or database_config.json); "
                         "use --redis-user/--redis-password-file for AUTH\n";
            return ParsedArgs{std::nullopt, exitcode::kConfig};
        }
        static const std::set<std::string> kValued = {
            "--config",        "--redis-socket",        "--redis-host", "--redis-port",
            "--redis-user",    "--redis-password-file", "--db-config",  "--vtysh",
            "--frr-pathspace", "--log-level",           "--yang-dir",   "--frr",
            "--frr-container", "--docker-socket"};
        if (kValued.count(a) == 0) {
            std::cerr << spec.name << ": unknown option " << a << "\n" << usage(spec);
            return bad;
        }
        if (i + 1 >= argc) {
            std::cerr << spec.name << ": " << a << " needs a value\n";
            return bad;
        }
        std::string v = argv[++i];
        if (a == "--config") {
            o.configFile = v;
        } else if (a == "--redis-socket") {
            o.redis.unixSocket = v, o.redisGiven = true;
        } else if (a == "--redis-host") {
            o.redis.host = v, o.redisGiven = true;
        } else if (a == "--redis-port") {
            auto port = parsePort(v);
            if (!port) {
                std::cerr << spec.name << ": --redis-port " << v << ": not a port (1-65535)\n";
                return bad;
            }
            o.redis.port = *port, o.redisGiven = true;
        } else if (a == "--redis-user") {
            o.redis.user = v;
        } else if (a == "--redis-password-file") {
            // Read now, once: the daemon never re-opens it, and the secret stays off argv.
            if (auto err = redis::readPasswordFile(v, o.redis.password)) {
                std::cerr << spec.name << ": " << *err << "\n";
                return ParsedArgs{std::nullopt, exitcode::kConfig};
            }
        } else if (a == "--yang-dir") {
            o.yangDirs.push_back(v);
        } else if (a == "--db-config") {
            o.dbConfig = v;
        } else if (a == "--vtysh") {
            o.frr.vtysh.binary = v;
        } else if (a == "--frr-pathspace") {
            o.frr.vtysh.pathspace = v;
        } else if (a == "--frr") {
            auto kind = frr::parseAccessKind(v);
            if (!kind) {
                std::cerr << spec.name << ": --frr " << v << ": vtysh or docker\n";
                return bad;
            }
            o.frr.kind = *kind;
        } else if (a == "--frr-container") {
            o.frr.docker.container = v;
        } else if (a == "--docker-socket") {
            o.frr.docker.socket = v;
        } else if (a == "--log-level") {
            static const std::map<std::string, log::Priority> kLevels = {
                {"error", log::Priority::Error},
                {"warning", log::Priority::Warning},
                {"notice", log::Priority::Notice},
                {"info", log::Priority::Info},
                {"debug", log::Priority::Debug}};
            auto it = kLevels.find(v);
            if (it == kLevels.end()) {
                std::cerr << spec.name << ": unknown log level " << v << "\n";
                return bad;
            }
            o.level = it->second;
        }
    }
    if (auto why = frr::checkAccess(o.frr); why && o.checkFrr) {
        std::cerr << spec.name << ": --frr docker: " << *why << "\n";
        return ParsedArgs{std::nullopt, exitcode::kConfig};
    }
    if (!o.redis.user.empty() && o.redis.password.empty()) {
        std::cerr << spec.name << ": --redis-user needs --redis-password-file\n";
        return bad;
    }
    return ParsedArgs{o, exitcode::kOk};
}

ServiceHost::ServiceHost(ServiceSpec spec, CommonOptions options, Hooks hooks)
    : spec_(std::move(spec)),
      opts_(std::move(options)),
      hooks_(std::move(hooks)),
      signals_(io_, SIGTERM, SIGINT, SIGHUP) {}

ServiceHost::~ServiceHost() {
    release();
}

void ServiceHost::release() {
    // Reverse order of creation; all of them were made with io_, which outlives them.
    daemon_.reset();
    watchdog_.reset();
    watcher_.reset();
}

int ServiceHost::run() {
    try {
        configDb_ = redis::resolveDb("CONFIG_DB", opts_.redis, opts_.dbConfig);
        stateDb_ = redis::resolveDb("STATE_DB", opts_.redis, opts_.dbConfig);
    } catch (const std::exception& e) {
        log::error(e.what());
        return exitcode::kOsErr;
    }
    waitSignal();
    if (!opts_.configFile.empty()) {
        io_.post([this] { loadFile(); });
    } else {
        watcher_ = std::make_unique<redis::ConfigDbWatcher>(
            io_, configDb_.endpoint, configDb_.id, configDb_.separator, spec_.tables,
            [this](const nlohmann::json& doc) { onConfig(doc, "CONFIG_DB"); });
        watcher_->start();
    }
    io_.run();
    release();
    return exitCode_;
}

void ServiceHost::waitSignal() {
    signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
        if (ec) return;
        if (sig == SIGHUP) {
            log::notice("SIGHUP: reloading config");
            if (watcher_) {
                watcher_->reload();
            } else {
                loadFile();
            }
            return waitSignal();
        }
        log::notice("signal ", sig, ": exiting; routes and FRR configuration stay in place");
        sdNotify("STOPPING=1");
        shutdown(exitcode::kOk);
    });
}

void ServiceHost::loadFile() {
    auto doc = readJsonFile(opts_.configFile);
    if (auto* err = std::get_if<std::string>(&doc)) return configFailed(*err);
    onConfig(std::get<nlohmann::json>(doc), opts_.configFile);
}

void ServiceHost::configFailed(const std::string& what) {
    if (!started_) {
        log::error("bad config: ", what);
        return shutdown(exitcode::kConfig);
    }
    log::error("bad config, keeping the running config: ", what);
}

void ServiceHost::onConfig(const nlohmann::json& doc, const std::string& origin) {
    if (auto err = hooks_.check(doc)) return configFailed(origin + ": " + *err);
    if (opts_.checkOnly) {
        auto yang = checkConfigYang(spec_.tables, opts_.yangDirs, doc);
        for (const auto& n : yang.notices) log::notice(n);
        if (yang.error) return configFailed(origin + ": " + *yang.error);
        log::notice("config OK");
        return shutdown(exitcode::kOk);
    }
    if (started_) {
        // A daemon's apply handles its own failures; one that still throws must not end a
        // daemon whose routes and state are fine (it keeps what it had).
        try {
            daemon_->apply(doc);
        } catch (const std::exception& e) {
            log::error(origin, ": config not applied: ", e.what());
        }
        return;
    }
    StartContext ctx{io_, opts_, std::nullopt};
    if (!(opts_.noStateDb || (!opts_.configFile.empty() && !opts_.redisGiven)))
        ctx.stateDb = stateDb_;
    try {
        daemon_ = hooks_.start(doc, ctx);
    } catch (const std::exception& e) {
        log::error("cannot start: ", e.what());
        return shutdown(exitcode::kOsErr);
    }
    started_ = true;
    watchdog_ = std::make_unique<WatchdogPinger>(io_);
    watchdog_->start();
}

void ServiceHost::shutdown(int code) {
    exitCode_ = code;
    if (watchdog_) watchdog_->stop();
    if (daemon_) daemon_->stop();
    if (watcher_) watcher_->stop();
    io_.stop();
}

int serviceMain(const ServiceSpec& spec, int argc, char** argv, const Hooks& hooks) {
    auto parsed = parseCommonArgs(spec, argc, argv);
    if (!parsed.options) return parsed.exitCode;
    log::setMaxPriority(parsed.options->level);
    try {
        ServiceHost host(spec, std::move(*parsed.options), hooks);
        return host.run();
    } catch (const std::exception& e) {
        log::error("fatal: ", e.what());
        return exitcode::kSoftware;
    }
}

}  // namespace twinrail::service
