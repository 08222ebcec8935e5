// twinrail: the operator's front door. `show` reads the daemons' state (STATE_DB) and
// config (CONFIG_DB) from the switch's Redis; `plan` and `lab` run the planner and the lab.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "show_views.h"
#include "twinrail/common/sysexits.h"
#include "twinrail/common/tool_main.h"
#include "twinrail/redis/sonic_db.h"
#include "twinrail/redis/sync_reader.h"
#include "verify_command.h"

namespace cli = twinrail::cli;
namespace redis = twinrail::redis;
namespace exitcode = twinrail::exitcode;

namespace {

constexpr int kNotRunning = 3;  // as systemctl status: the daemon is not running

constexpr const char* kUsage = R"(usage: twinrail [REDIS OPTIONS] [--json] show <what> [options]
       twinrail [--json] verify (--plan FILE --inventory FILE | --lab NAME)
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
  through one plane only, and every fabric link's BGP session on its planned ports, with
  the planned switch at the far end. Exit 69 when anything is off.

Redis (as the daemons find it):
  --redis-socket PATH     unix socket
  --redis-host HOST, --redis-port PORT          TCP (default 127.0.0.1:6379)
  --db-config PATH        SONiC database_config.json, used when no socket or host is given
                          (default /var/run/redis/sonic-db/database_config.json)

Exit codes: 0 ok; 3 the daemon behind the state is not running (its last state is still
shown); 64 usage; 66 the plan or inventory cannot be read; 69 Redis cannot be reached, or
verify found the fabric degraded; 70 internal error.
)";

struct Options {
    redis::Endpoint endpoint;
    bool redisGiven = false;
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
    // Installed side by side in /usr/bin; in the build tree, tools/<tool>/<tool>.
    std::filesystem::path dir = std::filesystem::canonical("/proc/self/exe").parent_path();
    std::string path = (dir / tool).string();
    if (!std::filesystem::exists(path)) path = (dir.parent_path() / tool / tool).string();
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

class StateReader {
  public:
    explicit StateReader(const Options& o) : o_(o) {}

    // Connects to a SONiC DB by name; on failure prints why and returns false.
    bool open(const std::string& dbName) {
        redis::DbLocation loc =
            redis::resolveDb(dbName, o_.endpoint, o_.redisGiven ? "" : o_.dbConfig);
        sep_ = loc.separator;
        if (auto err = reader_.connect(loc.endpoint, loc.id)) {
            std::cerr << "twinrail: " << *err << "\n"
                      << "  (is redis-server running? give --redis-socket or "
                         "--redis-host/--redis-port)\n";
            return false;
        }
        return true;
    }
    std::vector<cli::Row> table(const std::string& name) {
        std::vector<cli::Row> out;
        const std::string prefix = name + sep_;
        for (const auto& key : reader_.keys(prefix + "*"))
            out.push_back({key.substr(prefix.size()), reader_.hash(key)});
        return out;
    }
    std::optional<cli::Fields> row(const std::string& key) {
        auto f = reader_.hash(key);
        if (f.empty()) return std::nullopt;
        return f;
    }
    char separator() const { return sep_; }

  private:
    const Options& o_;
    redis::SyncReader reader_;
    char sep_ = '|';
};

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
        if (!r.open("CONFIG_DB")) return exitcode::kUnavailable;
        std::map<std::string, cli::Fields> rows;
        for (const char* t :
             {"HOSTROUTED", "HOSTROUTED_INTERFACE", "UPLINK_PIN", "PATHQD", "PATHQD_PORT"}) {
            for (auto& row : r.table(t))
                rows[std::string(t) + r.separator() + row.key] = row.fields;
        }
        return emit(o, cli::configView(rows));
    }
    if (!r.open("STATE_DB")) return exitcode::kUnavailable;
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
        if (wantsHelp(o.words)) {
            std::cout << kUsage;
            return exitcode::kOk;
        }
        if (o.words.empty()) throw UsageError{"no command"};
        if (o.words[0] == "verify")
            return cli::verifyCommand({o.words.begin() + 1, o.words.end()}, o.json);
        if (o.words[0] != "show") throw UsageError{"unknown command " + o.words[0]};
        return show(o);
    } catch (const UsageError& e) {
        std::cerr << "twinrail: " << e.message << "\n" << kUsage;
        return exitcode::kUsage;
    } catch (const std::exception& e) {
        std::cerr << "twinrail: " << e.what() << "\n";
        return exitcode::kSoftware;
    }
}
