// twinrail: the operator's front door. `show` reads the daemons' state (STATE_DB) and
// config (CONFIG_DB) from the switch's Redis; `plan` and `lab` run the planner and the lab.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "show_views.h"
#include "sonic_apply.h"
#include "sonic_check.h"
#include "twinrail/common/ip.h"
#include "twinrail/common/sysexits.h"
#include "twinrail/common/tool_main.h"
#include "twinrail/redis/auth.h"
#include "twinrail/redis/sonic_db.h"
#include "twinrail/redis/sync_reader.h"
#include "verify_command.h"

namespace cli = twinrail::cli;
namespace redis = twinrail::redis;
namespace exitcode = twinrail::exitcode;

namespace {

constexpr int kNotRunning = 3;  // as systemctl status: the daemon is not running
using cli::kAuthRefused;

constexpr const char* kUsage = R"(usage: twinrail [REDIS OPTIONS] [--json] show <what> [options]
       twinrail [--json] verify (--plan FILE --inventory FILE | --lab NAME) [--max-pause-pps N]
       twinrail [REDIS OPTIONS] clear host-freeze IP   thaw an address frozen after too
                                                       many moves between ports
       twinrail sonic-check FILE [--base FILE] [--yang-dir DIR]...
                                                  check a config_db.json against
                                                  SONiC's YANG (twinrail sonic-check --help)
       twinrail sonic-apply SWITCH_DIR --running FILE --out DIR [--yang-dir DIR]...
                                                  a switch's plan onto the switch as it
                                                  is, as SONiC CLI steps (--help)
       twinrail plan [twinrail-plan options]      (twinrail plan --help)
       twinrail lab <command> [options]           (twinrail lab --help)

show:
  host-routes [--interface IF] [--family 4|6]   hostrouted's host routes (STATE_DB)
  path-quality                                  pathqd's measured quality per fabric port
  weights                                       kernel WCMP weights of BGP multipath routes
  uplink-pins                                   static smart routing: each downlink's uplink,
                                                pinned or fallen back to multipath
  stats                                         hostrouted's and pathqd's counters
  config                                        the daemons' CONFIG_DB tables

  --json                  JSON for scripts instead of a table

verify: the fabric-wide dual-homing and cabling audit, from the plan and every switch's
  STATE_DB (the planner's inventory.json, or a lab's sockets): every NIC port learned on its
  planned leaf port, missing, or miscabled (where it is seen instead), NICs reachable
  through one plane only, every fabric link's BGP session on its planned ports, with
  the planned switch at the far end, (where switches have RoCE QoS) every port's PFC,
  DSCP maps, ECN and both ends of every cable against the plan, and every port with a
  lossless queue the PFC watchdog found stormed (COUNTERS_DB) or receiving more than
  --max-pause-pps pause frames a second (pathqd's PATH_QUALITY_TABLE; default 100).
  Exit 69 when anything is off.

Redis (as the daemons find it):
  --redis-socket PATH     unix socket
  --redis-host HOST, --redis-port PORT          TCP (default 127.0.0.1:6379)
  --db-config PATH        SONiC database_config.json, used when no socket or host is given
                          (default /var/run/redis/sonic-db/database_config.json)
  --redis-user NAME       ACL user (a read-only one is enough: docs/redis-acl.md)
  --redis-password-file PATH
                          its password (one line; the file must not be readable by group
                          or others)
  --redis-tls             TLS over TCP; the server's certificate is always verified
  --redis-ca FILE         CA certificate(s) (default: the system's trust store)
  --redis-cert FILE, --redis-key FILE           client certificate (tls-auth-clients)
  --redis-sni NAME        the name the server's certificate must carry (default: the host)
  For verify these apply to every switch; the inventory's per-switch "tls", "user" and
  "server_name" are used where the option is not given.

Exit codes: 0 ok; 3 the daemon behind the state is not running (its last state is still
shown); 64 usage; 66 the plan or inventory cannot be read; 69 Redis cannot be reached, or
verify found the fabric degraded; 70 internal error; 77 Redis refused the credentials
(wrong password, no password given, or an ACL without the command or key); 78 the
password file is missing, unreadable or readable by others.
)";

struct Options {
    redis::Endpoint endpoint;  // also the credentials and TLS options verify uses
    bool redisGiven = false;
    bool userGiven = false, tlsGiven = false, sniGiven = false;
    std::string passwordFile;
    std::string dbConfig = redis::kSonicDbConfig;
    bool json = false;
    std::vector<std::string> words;  // command words and their own options
};

using twinrail::UsageError;

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [argc, argv, &i, &a] {
            if (i + 1 >= argc) throw UsageError{a + " needs a value"};
            return std::string(argv[++i]);
        };
        if (a == "--redis-socket") {
            o.endpoint.unixSocket = value();
            o.redisGiven = true;
        } else if (a == "--redis-host") {
            o.endpoint.host = value();
            o.redisGiven = true;
        } else if (a == "--redis-port") {
            o.endpoint.port = std::atoi(value().c_str());
            o.redisGiven = true;
        } else if (a == "--db-config") {
            o.dbConfig = value();
        } else if (a == "--redis-user") {
            o.endpoint.user = value();
            o.userGiven = true;
        } else if (a == "--redis-password-file") {
            o.passwordFile = value();  // read in main: a bad file is exit 78, not usage
        } else if (a == "--redis-tls") {
            o.endpoint.tls.enabled = o.tlsGiven = true;
        } else if (a == "--redis-ca") {
            o.endpoint.tls.caFile = value();
        } else if (a == "--redis-cert") {
            o.endpoint.tls.certFile = value();
        } else if (a == "--redis-key") {
            o.endpoint.tls.keyFile = value();
        } else if (a == "--redis-sni") {
            o.endpoint.tls.serverName = value();
            o.sniGiven = true;
        } else if (a == "--json") {
            o.json = true;
        } else {
            o.words.push_back(a);
        }
    }
    return o;
}

// `twinrail plan ...` is twinrail-plan, found next to this binary or on PATH.
int execTool(const std::string& tool, const std::vector<std::string>& args) {
    // Installed side by side in /usr/bin; in the build tree, tools/<tool>/<tool>, and the
    // lab (a tool of the build tree only, never installed) in lab/tool/.
    std::filesystem::path dir = std::filesystem::canonical("/proc/self/exe").parent_path();
    std::string path = (dir / tool).string();
    if (!std::filesystem::exists(path)) path = (dir.parent_path() / tool / tool).string();
    if (!std::filesystem::exists(path))
        path = (dir.parent_path().parent_path() / "lab" / "tool" / tool).string();
    std::vector<std::string> argvStore{tool};
    argvStore.insert(argvStore.end(), args.begin(), args.end());
    std::vector<char*> argvPtr;
    argvPtr.reserve(argvStore.size() + 1);
    for (auto& s : argvStore) argvPtr.push_back(s.data());
    argvPtr.push_back(nullptr);
    if (std::filesystem::exists(path)) execv(path.c_str(), argvPtr.data());
    execvp(tool.c_str(), argvPtr.data());
    std::cerr << "twinrail: cannot run " << tool << ": " << std::strerror(errno) << "\n";
    return exitcode::kUnavailable;
}

struct ReadError {
    std::string message;
    bool auth;
};

class StateReader {
  public:
    explicit StateReader(const Options& o) : o_(o) {}

    // Connects to a SONiC DB by name; on failure prints why and returns the exit code
    // (69 unreachable, 77 credentials refused), else 0.
    int open(const std::string& dbName) {
        redis::DbLocation loc =
            redis::resolveDb(dbName, o_.endpoint, o_.redisGiven ? "" : o_.dbConfig);
        sep_ = loc.separator;
        if (auto err = reader_.connect(loc.endpoint, loc.id)) {
            std::cerr << "twinrail: " << *err << "\n";
            if (reader_.authFailed()) return kAuthRefused;
            std::cerr << "  (is redis-server running? give --redis-socket or "
                         "--redis-host/--redis-port)\n";
            return exitcode::kUnavailable;
        }
        return 0;
    }
    std::vector<cli::Row> table(const std::string& name) {
        std::vector<cli::Row> out;
        const std::string prefix = name + sep_;
        for (const auto& key : reader_.keys(prefix + "*")) {
            out.push_back({key.substr(prefix.size()), reader_.hash(key)});
            check();
        }
        check();
        return out;
    }
    std::optional<cli::Fields> row(const std::string& key) {
        auto f = reader_.hash(key);
        check();
        if (f.empty()) return std::nullopt;
        return f;
    }
    char separator() const { return sep_; }
    void write(const std::string& key, const redis::Fields& fields) {
        reader_.hset(key, fields);
        check();
    }

  private:
    // A read that fails half way (an ACL without the key, a dropped connection) is an
    // error, not an empty table.
    void check() const {
        if (reader_.error()) throw ReadError{*reader_.error(), reader_.authFailed()};
    }

    const Options& o_;
    redis::SyncReader reader_;
    char sep_ = '|';
};

// `twinrail clear host-freeze IP`: asks hostrouted to thaw an address it froze after too
// many moves. The request goes to CONFIG_DB (HOSTROUTED_UNFREEZE|IP, requested = now), so it
// is idempotent and thaws only freezes older than itself (binding_config.h).
int clear(const Options& o) {
    const auto& w = o.words;
    if (w.size() != 3 || w[1] != "host-freeze")
        throw UsageError{"usage: twinrail clear host-freeze IP"};
    auto ip = twinrail::IpAddr::parse(w[2]);
    if (!ip || ip->isLinkLocal() || ip->isMulticast() || ip->isUnspecified())
        throw UsageError{"clear host-freeze: not a host address: " + w[2]};
    StateReader r(o);
    if (int rc = r.open("CONFIG_DB")) return rc;
    auto now = std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
    r.write("HOSTROUTED_UNFREEZE" + std::string(1, r.separator()) + ip->str(),
            {{"requested", std::to_string(now)}});
    std::cout << "asked hostrouted to thaw " << ip->str() << "\n";
    return exitcode::kOk;
}

int emit(const Options& o, const cli::View& v) {
    if (o.json) {
        std::cout << v.json.dump(2) << "\n";
    } else {
        std::cout << cli::renderTable(v);
    }
    return exitcode::kOk;
}

// Each daemon's stats row (nullopt when it has none), read once.
using DaemonStats = std::map<std::string, std::optional<cli::Fields>>;

DaemonStats readStats(StateReader& r,
                      const std::vector<std::pair<std::string, std::string>>& daemons) {
    DaemonStats out;
    for (const auto& [daemon, table] : daemons)
        out[daemon] = r.row(table + r.separator() + "global");
    return out;
}

// Prints why each daemon's state cannot be trusted; true when none of them can be.
bool warnStale(const DaemonStats& stats) {
    bool allStale = true;
    for (const auto& [daemon, row] : stats) {
        auto why = cli::staleness(daemon, row, std::chrono::system_clock::now());
        if (why) std::cerr << "twinrail: " << *why << "\n";
        allStale = allStale && why.has_value();
    }
    return allStale;
}

int show(const Options& o) {
    const auto& w = o.words;
    if (w.size() < 2) throw UsageError{"show what?"};
    const std::string what = w[1];
    if (what != "config" && what != "host-routes" && what != "path-quality" && what != "weights" &&
        what != "stats" && what != "uplink-pins") {
        throw UsageError{"unknown: show " + what};
    }
    StateReader r(o);
    if (what == "config") {
        if (int rc = r.open("CONFIG_DB")) return rc;
        std::map<std::string, cli::Fields> rows;
        for (const char* t :
             {"HOSTROUTED", "HOSTROUTED_INTERFACE", "UPLINK_PIN", "HOSTROUTED_BINDING",
              "HOSTROUTED_UNFREEZE", "PATHQD", "PATHQD_PORT"}) {
            for (auto& row : r.table(t))
                rows[std::string(t) + r.separator() + row.key] = row.fields;
        }
        return emit(o, cli::configView(rows));
    }
    if (int rc = r.open("STATE_DB")) return rc;
    if (what == "host-routes") {
        cli::HostFilter f;
        for (size_t i = 2; i < w.size(); ++i) {
            if (w[i] == "--interface" && i + 1 < w.size()) {
                f.interface = w[++i];
            } else if (w[i] == "--family" && i + 1 < w.size() &&
                       (w[i + 1] == "4" || w[i + 1] == "6")) {
                f.family = std::stoi(w[++i]);
            } else {
                throw UsageError{"show host-routes: unknown option " + w[i]};
            }
        }
        bool stale = warnStale(readStats(r, {{"hostrouted", "HOST_ROUTE_STATS"}}));
        emit(o, cli::hostRoutesView(r.table("HOST_ROUTE_TABLE"), f));
        return stale ? kNotRunning : exitcode::kOk;
    }
    if (w.size() > 2) throw UsageError{"show " + what + " takes no options"};
    if (what == "uplink-pins") {
        bool stale = warnStale(readStats(r, {{"hostrouted", "HOST_ROUTE_STATS"}}));
        emit(o, cli::uplinkPinsView(r.table("UPLINK_PIN_TABLE")));
        return stale ? kNotRunning : exitcode::kOk;
    }
    if (what == "path-quality" || what == "weights") {
        bool stale = warnStale(readStats(r, {{"pathqd", "PATHQD_STATS"}}));
        emit(o, what == "weights" ? cli::weightsView(r.table("PATH_WEIGHT_TABLE"))
                                  : cli::pathQualityView(r.table("PATH_QUALITY_TABLE")));
        return stale ? kNotRunning : exitcode::kOk;
    }
    if (what == "stats") {
        auto rows = readStats(r, {{"hostrouted", "HOST_ROUTE_STATS"}, {"pathqd", "PATHQD_STATS"}});
        std::map<std::string, cli::Fields> stats;
        for (const auto& [daemon, row] : rows) {
            if (row) stats[daemon] = *row;
        }
        // A spine runs no hostrouted: only when neither daemon publishes is it an error.
        bool stale = warnStale(rows);
        emit(o, cli::statsView(stats));
        return stale ? kNotRunning : exitcode::kOk;
    }
    throw UsageError{"unknown: show " + what};
}

bool wantsHelp(const std::vector<std::string>& words) {
    for (const auto& w : words)
        if (w == "--help" || w == "-h") return true;
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        Options o = parse(argc, argv);
        if (!o.words.empty() && (o.words[0] == "plan" || o.words[0] == "lab"))
            return execTool("twinrail-" + o.words[0], {o.words.begin() + 1, o.words.end()});
        if (!o.words.empty() && o.words[0] == "sonic-check")
            return cli::sonicCheckCommand({o.words.begin() + 1, o.words.end()});
        if (!o.words.empty() && o.words[0] == "sonic-apply")
            return cli::sonicApplyCommand({o.words.begin() + 1, o.words.end()});
        if (wantsHelp(o.words)) {
            std::cout << kUsage;
            return exitcode::kOk;
        }
        if (o.words.empty()) throw UsageError{"no command"};
        if (!o.endpoint.user.empty() && o.passwordFile.empty())
            throw UsageError{"--redis-user needs --redis-password-file"};
        if (!o.passwordFile.empty()) {
            if (auto err = redis::readPasswordFile(o.passwordFile, o.endpoint.password)) {
                std::cerr << "twinrail: " << *err << "\n";
                return exitcode::kConfig;
            }
        }
        if (o.words[0] == "verify") {
            cli::VerifyCredentials creds{o.endpoint, o.userGiven, o.tlsGiven, o.sniGiven};
            return cli::verifyCommand({o.words.begin() + 1, o.words.end()}, o.json, creds);
        }
        if (o.words[0] == "clear") return clear(o);
        if (o.words[0] != "show") throw UsageError{"unknown command " + o.words[0]};
        return show(o);
    } catch (const ReadError& e) {
        std::cerr << "twinrail: " << e.message << "\n";
        return e.auth ? kAuthRefused : exitcode::kUnavailable;
    } catch (const UsageError& e) {
        std::cerr << "twinrail: " << e.message << "\n" << kUsage;
        return exitcode::kUsage;
    } catch (const std::exception& e) {
        std::cerr << "twinrail: " << e.what() << "\n";
        return exitcode::kSoftware;
    }
}
