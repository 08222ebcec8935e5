// What every twinrail daemon's main does, once: parse the common options, pick the
// config source (a config_db.json-shaped file re-read on SIGHUP, or live CONFIG_DB
// tables), refuse bad config with exit code 78 at start and keep the last good config
// afterwards, handle SIGTERM/SIGINT, and ping the systemd watchdog. A daemon supplies
// its config check and a start hook that returns the running daemon.
//
// Lifetime: the host owns the running daemon and destroys it after its io_context has
// stopped and before the io_context itself goes, so no timer, socket or Redis client of
// the daemon ever outlives the io_context it was made with.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "twinrail/common/log.h"
#include "twinrail/common/notify.h"
#include "twinrail/frr/access.h"
#include "twinrail/redis/client.h"
#include "twinrail/redis/config_db.h"
#include "twinrail/redis/sonic_db.h"

namespace twinrail::service {

struct ServiceSpec {
    std::string name;                 // "hostrouted"
    std::string summary;              // one line: what the daemon does
    std::vector<std::string> tables;  // CONFIG_DB tables it reads
};

struct CommonOptions {
    std::string configFile;
    bool checkOnly = false;
    std::vector<std::string> yangDirs;  // --yang-dir (repeatable); empty: the defaults
    bool redisGiven = false;
    bool noStateDb = false;
    redis::Endpoint redis;
    std::string dbConfig = redis::kSonicDbConfig;
    frr::Access frr;  // --frr, --vtysh, --frr-pathspace, --frr-container, --docker-socket
    bool checkFrr = true;
    log::Priority level = log::Priority::Info;
};

struct ParsedArgs {
    std::optional<CommonOptions> options;  // empty: usage was printed (help, or a bad option)
    int exitCode = 0;  // when empty: 0 after --help, 64 after a bad option, 78 after a
                       // bad password file or a TLS option (daemons use no TLS)
};
ParsedArgs parseCommonArgs(const ServiceSpec& spec, int argc, char** argv);

// Where the running daemon publishes state; empty when it should not.
struct StartContext {
    boost::asio::io_context& io;
    const CommonOptions& options;
    std::optional<redis::DbLocation> stateDb;
};

// A started daemon, as the host holds it.
class RunningDaemon {
  public:
    virtual ~RunningDaemon() = default;
    virtual void apply(const nlohmann::json& doc) = 0;  // a later good config
    virtual void stop() = 0;                            // SIGTERM: leave routes in place
};

struct Hooks {
    // Parses `doc`; returns "where: what" for bad config. Must not change anything.
    std::function<std::optional<std::string>(const nlohmann::json& doc)> check;
    // First good config: build and start the daemon on ctx.io; throw std::exception on
    // failure. The host owns what it returns (see Lifetime above).
    std::function<std::unique_ptr<RunningDaemon>(const nlohmann::json& doc,
                                                 const StartContext& ctx)>
        start;
};

class ServiceHost {
  public:
    ServiceHost(ServiceSpec spec, CommonOptions options, Hooks hooks);
    ~ServiceHost();
    ServiceHost(const ServiceHost&) = delete;
    ServiceHost& operator=(const ServiceHost&) = delete;
    int run();  // returns the process exit code

  private:
    void waitSignal();
    void loadFile();
    void configFailed(const std::string& what);
    void onConfig(const nlohmann::json& doc, const std::string& origin);
    void shutdown(int code);
    void release();  // destroys the daemon and the helpers while io_ is still alive

    ServiceSpec spec_;
    CommonOptions opts_;
    Hooks hooks_;
    boost::asio::io_context io_;
    boost::asio::signal_set signals_;
    redis::DbLocation configDb_, stateDb_;
    std::unique_ptr<redis::ConfigDbWatcher> watcher_;
    std::unique_ptr<WatchdogPinger> watchdog_;
    std::unique_ptr<RunningDaemon> daemon_;  // declared last: destroyed first
    bool started_ = false;
    int exitCode_ = 0;
};

// main() for a daemon: parse options, run the host, map exceptions to exit codes.
int serviceMain(const ServiceSpec& spec, int argc, char** argv, const Hooks& hooks);

}  // namespace twinrail::service
