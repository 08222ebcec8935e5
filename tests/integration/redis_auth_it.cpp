// Redis AUTH, ACL users and TLS against a private redis-server (no root, no namespaces):
// the CLI's SyncReader and the daemons' async Client authenticate with a password file,
// a wrong password fails with a message that says so, the read-only user of
// docs/redis-acl.md does what show/verify need and cannot write, TLS is verified (CA and
// name), and a table-scoped daemon user without CONFIG, EVAL or channel rights still
// publishes and still sees CONFIG_DB changes (by polling).
//
// One redis-server per test process (ctest runs each test as its own process): a unix
// socket and a TLS port on 127.0.0.1, in /tmp/tr18r-<pid>, removed afterwards.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/process.h"
#include "twinrail/lab/shell.h"
#include "twinrail/redis/auth.h"
#include "twinrail/redis/client.h"
#include "twinrail/redis/config_db.h"
#include "twinrail/redis/sync_reader.h"

namespace {

namespace fs = std::filesystem;
namespace redis = twinrail::redis;
namespace lab = twinrail::lab;
namespace plan = twinrail::plan;
using namespace std::chrono_literals;

constexpr const char* kAdminPass = "tr18r-admin-secret";
constexpr const char* kRoPass = "tr18r-ro-secret";
constexpr const char* kDaemonPass = "tr18r-daemon-secret";
constexpr int kConfigDb = 4;
constexpr int kStateDb = 6;

int freeLoopbackPort() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
        close(fd);
        throw std::runtime_error("no free loopback port");
    }
    close(fd);
    return ntohs(a.sin_port);
}

void writeFile(const std::string& path, const std::string& text, mode_t mode) {
    std::ofstream(path) << text;
    fs::permissions(path, static_cast<fs::perms>(mode), fs::perm_options::replace);
}

std::string isoNow() {
    char buf[32];
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// The twinrail-verify line of docs/redis-acl.md, read from the document itself (so the
// two cannot drift apart), with a test user name and password.
std::string verifyAclLine() {
    std::ifstream in(TWINRAIL_ACL_DOC);
    const std::string head = "user twinrail-verify on #<sha256> ";
    for (std::string line; std::getline(in, line);)
        if (line.rfind(head, 0) == 0)
            return std::string("user tr18r-ro on >") + kRoPass + " " + line.substr(head.size());
    return "";
}

// The ACL users of docs/redis-acl.md, with test passwords: the twinrail-verify line as
// written, and the hostrouted line without its pub/sub rights (the polling case).
std::string aclLines() {
    return std::string("user default on >") + kAdminPass + " ~* &* +@all\n" + verifyAclLine() +
           "\n" + "user tr18r-hostrouted on >" + kDaemonPass +
           " resetkeys ~HOST_ROUTE* ~HOST_FOREIGN_TABLE* ~UPLINK_PIN_TABLE* %R~HOSTROUTED*"
           " %R~UPLINK_PIN|* resetchannels -@all +@read +@write +@transaction +select +ping"
           " -keys -@dangerous -@scripting\n";
}

class RedisAuth : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        dir_ = fs::temp_directory_path() / ("tr18r-" + std::to_string(getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        const std::string d = dir_.string();
        // One self-signed certificate: the server's, the CA the clients trust, and the
        // client certificate the server checks (tls-ca-cert-file is the same file).
        lab::runOk({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", d + "/key.pem", "-out",
                    d + "/cert.pem", "-days", "1", "-subj", "/CN=tr18r-redis", "-addext",
                    "subjectAltName=DNS:localhost,IP:127.0.0.1"});
        // redis-cli reads the admin's password from its environment (not from argv).
        ::setenv("REDISCLI_AUTH", kAdminPass, 1);
        tlsPort_ = freeLoopbackPort();
        ASSERT_FALSE(verifyAclLine().empty()) << "no twinrail-verify line in " TWINRAIL_ACL_DOC;
        writeFile(d + "/users.acl", aclLines(), 0600);
        writeFile(d + "/redis.conf",
                  "port 0\nbind 127.0.0.1\nunixsocket " + socket() +
                      "\nunixsocketperm 700\n"
                      "tls-port " +
                      std::to_string(tlsPort_) + "\ntls-cert-file " + d +
                      "/cert.pem\ntls-key-file " + d + "/key.pem\ntls-ca-cert-file " + d +
                      "/cert.pem\ntls-auth-clients optional\n"
                      "save \"\"\nappendonly no\ndatabases 16\ndir " +
                      d + "\naclfile " + d + "/users.acl\n",
                  0600);
        server_ = std::make_unique<lab::ChildProcess>(
            std::vector<std::string>{"redis-server", d + "/redis.conf"}, d + "/redis.log");
        bool up = lab::waitUntil(
            [] { return admin(0, {"PING"}).find("PONG") != std::string::npos; }, 10s, 20ms);
        ASSERT_TRUE(up) << "redis-server did not start: " << server_->log();
        writeFile(d + "/ro.pass", std::string(kRoPass) + "\n", 0600);
        writeFile(d + "/daemon.pass", kDaemonPass, 0400);
        writeFile(d + "/wrong.pass", "not-the-password\n", 0600);
        writeFile(d + "/open.pass", std::string(kRoPass) + "\n", 0644);
    }
    static void TearDownTestSuite() {
        server_.reset();  // SIGTERM, reaped
        fs::remove_all(dir_);
        ::unsetenv("REDISCLI_AUTH");
    }

    static std::string socket() { return (dir_ / "redis.sock").string(); }
    static std::string file(const std::string& name) { return (dir_ / name).string(); }
    // redis-cli as the admin (the password in the environment, REDISCLI_AUTH, not on
    // argv), one argument each; its output and errors.
    static std::string admin(int db, const lab::Argv& args) {
        lab::Argv argv{"redis-cli", "-s", socket(), "-n", std::to_string(db)};
        argv.insert(argv.end(), args.begin(), args.end());
        auto r = lab::run(argv);
        return r.out + r.err;
    }
    static redis::Endpoint endpoint(const std::string& user, const std::string& passFile) {
        redis::Endpoint e;
        e.unixSocket = socket();
        e.user = user;
        EXPECT_EQ(redis::readPasswordFile(passFile, e.password), std::nullopt);
        return e;
    }
    static redis::Endpoint tlsEndpoint(const std::string& user, const std::string& passFile) {
        redis::Endpoint e = endpoint(user, passFile);
        e.unixSocket.clear();
        e.host = "127.0.0.1";
        e.port = tlsPort_;
        e.tls.enabled = true;
        e.tls.caFile = file("cert.pem");
        return e;
    }
    // Runs the io_context until `done` holds or `timeout` passes.
    static bool runUntil(boost::asio::io_context& io, const std::function<bool()>& done,
                         std::chrono::milliseconds timeout) {
        auto end = std::chrono::steady_clock::now() + timeout;
        while (!done() && std::chrono::steady_clock::now() < end) {
            io.restart();
            io.run_for(20ms);
        }
        return done();
    }
    // The operator CLI with `args`: options written by this test, split at spaces (no
    // shell; scriptWords refuses anything a shell would read).
    static lab::ShellResult cli(const std::string& args) {
        lab::Argv argv{TWINRAIL_BIN};
        for (auto& word : lab::scriptWords(args)) argv.push_back(std::move(word));
        return lab::run(argv, 10s);
    }

    static inline fs::path dir_;
    static inline int tlsPort_ = 0;
    static inline std::unique_ptr<lab::ChildProcess> server_;
};

TEST_F(RedisAuth, PasswordFileMustBePrivate) {
    std::string pw;
    auto err = redis::readPasswordFile(file("open.pass"), pw);
    ASSERT_TRUE(err.has_value());
    EXPECT_NE(err->find("readable by group or others (mode 0644)"), std::string::npos) << *err;
    EXPECT_TRUE(pw.empty());
    ASSERT_EQ(redis::readPasswordFile(file("ro.pass"), pw), std::nullopt);
    EXPECT_EQ(pw, kRoPass);  // the trailing newline is not part of it
}

TEST_F(RedisAuth, SyncReaderAuthenticatesOverUnixSocketAndTls) {
    admin(kStateDb,
          {"HSET", "HOST_ROUTE_TABLE|10.1.0.2", "ifname", "Ethernet0", "mac", "02:00:00:00:00:01"});
    for (const auto& ep :
         {endpoint("tr18r-ro", file("ro.pass")), tlsEndpoint("tr18r-ro", file("ro.pass"))}) {
        SCOPED_TRACE(ep.describe());
        redis::SyncReader r;
        ASSERT_EQ(r.connect(ep, kStateDb), std::nullopt);
        EXPECT_EQ(r.keys("HOST_ROUTE_TABLE|*"),
                  std::vector<std::string>{"HOST_ROUTE_TABLE|10.1.0.2"});
        EXPECT_EQ(r.hash("HOST_ROUTE_TABLE|10.1.0.2").at("ifname"), "Ethernet0");
        EXPECT_FALSE(r.error().has_value());
    }
    // A client certificate (the server would check it with tls-auth-clients yes).
    redis::Endpoint withCert = tlsEndpoint("tr18r-ro", file("ro.pass"));
    withCert.tls.certFile = file("cert.pem");
    withCert.tls.keyFile = file("key.pem");
    redis::SyncReader r;
    EXPECT_EQ(r.connect(withCert, kStateDb), std::nullopt);
}

TEST_F(RedisAuth, WrongPasswordAndWrongCertificateNameFailClearly) {
    redis::SyncReader wrong;
    auto err = wrong.connect(endpoint("tr18r-ro", file("wrong.pass")), kStateDb);
    ASSERT_TRUE(err.has_value());
    EXPECT_EQ(
        err->rfind("redis at unix:" + socket() + ": AUTH failed for user tr18r-ro: WRONGPASS", 0),
        0u)
        << *err;
    EXPECT_TRUE(wrong.authFailed());
    EXPECT_EQ(err->find("not-the-password"), std::string::npos);  // never the secret

    redis::SyncReader none;  // no password at all: Redis says NOAUTH at SELECT
    redis::Endpoint anon;
    anon.unixSocket = socket();
    err = none.connect(anon, kStateDb);
    ASSERT_TRUE(err.has_value());
    EXPECT_NE(err->find("NOAUTH"), std::string::npos) << *err;
    EXPECT_TRUE(none.authFailed());

    redis::Endpoint misnamed = tlsEndpoint("tr18r-ro", file("ro.pass"));
    misnamed.tls.serverName = "leaf9.example";
    redis::SyncReader tls;
    err = tls.connect(misnamed, kStateDb, 2s);
    ASSERT_TRUE(err.has_value());
    EXPECT_NE(err->find("TLS handshake"), std::string::npos) << *err;
    EXPECT_NE(err->find("leaf9.example"), std::string::npos) << *err;
    EXPECT_FALSE(tls.authFailed());

    // The async client: not connected, and it keeps retrying (no crash, no hot loop).
    boost::asio::io_context io;
    redis::Client client(io, endpoint("tr18r-ro", file("wrong.pass")), kStateDb, "test");
    client.start();
    runUntil(
        io, [] { return false; }, 500ms);
    EXPECT_FALSE(client.connected());
    client.stop();
}

TEST_F(RedisAuth, ReadOnlyUserReadsButCannotWrite) {
    admin(kStateDb, {"HSET", "PATHQD_STATS|global", "updated", isoNow()});
    boost::asio::io_context io;
    redis::Client client(io, endpoint("tr18r-ro", file("ro.pass")), kStateDb, "ro");
    std::optional<redis::Value> read, write, keys;
    client.onConnected([&] {
        client.command({"HGETALL", "PATHQD_STATS|global"},
                       [&](const redis::Value& v) { read = v; });
        client.command({"HSET", "PATHQD_STATS|global", "updated", "x"},
                       [&](const redis::Value& v) { write = v; });
        client.command({"KEYS", "*"}, [&](const redis::Value& v) { keys = v; });
    });
    client.start();
    ASSERT_TRUE(runUntil(
        io, [&] { return read && write && keys; }, 3s));
    EXPECT_EQ(read->type, redis::Value::Type::Array);
    EXPECT_EQ(read->elements.size(), 2u);
    ASSERT_TRUE(write->isError());
    EXPECT_EQ(write->str.rfind("NOPERM", 0), 0u) << write->str;
    EXPECT_TRUE(keys->isError()) << "KEYS blocks Redis: show/verify use SCAN";
    client.stop();
}

TEST_F(RedisAuth, CliShowsStatsWithPasswordAndOverTls) {
    for (const char* table : {"HOST_ROUTE_STATS|global", "PATHQD_STATS|global"})
        admin(kStateDb, {"HSET", table, "updated", isoNow(), "errors", "0"});
    const std::string creds = "--redis-user tr18r-ro --redis-password-file " + file("ro.pass");
    const std::string tls = "--redis-host 127.0.0.1 --redis-port " + std::to_string(tlsPort_) +
                            " --redis-tls --redis-ca " + file("cert.pem");
    for (const std::string& where :
         {"--redis-socket " + socket(), tls,
          tls + " --redis-cert " + file("cert.pem") + " --redis-key " + file("key.pem")}) {
        SCOPED_TRACE(where);
        auto r = cli(where + " " + creds + " --json show stats");
        ASSERT_EQ(r.rc, 0) << r.err;
        auto j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["hostrouted"]["errors"], "0");
        EXPECT_TRUE(j.contains("pathqd"));
    }
    // Refused credentials: 77 (EX_NOPERM), with the server's reason.
    auto r = cli("--redis-socket " + socket() + " --redis-user tr18r-ro --redis-password-file " +
                 file("wrong.pass") + " show stats");
    EXPECT_EQ(r.rc, 77);
    EXPECT_NE(r.err.find("AUTH failed for user tr18r-ro: WRONGPASS"), std::string::npos) << r.err;
    r = cli("--redis-socket " + socket() + " show stats");
    EXPECT_EQ(r.rc, 77) << r.err;
    // A password file others can read: 78, before anything is sent.
    r = cli("--redis-socket " + socket() + " --redis-user tr18r-ro --redis-password-file " +
            file("open.pass") + " show stats");
    EXPECT_EQ(r.rc, 78);
    EXPECT_NE(r.err.find("chmod 600"), std::string::npos) << r.err;
    // TLS with the wrong expected name: unreachable (69), and says why.
    r = cli(tls + " --redis-sni leaf9.example " + creds + " show stats");
    EXPECT_EQ(r.rc, 69);
    EXPECT_NE(r.err.find("TLS handshake"), std::string::npos) << r.err;
}

// verify reads every switch of a plan through the inventory: here all of them point at
// this Redis, over TLS as the read-only user. Nothing is learned, so the fabric is
// degraded (69), but every switch was read (none unreachable), and a refused claim seeded
// in STATE_DB comes back as a claim. The wrong password: 77, naming the user.
TEST_F(RedisAuth, VerifyReadsEverySwitchOverTlsAsTheReadOnlyUser) {
    auto built = plan::buildPlan(lab::defaultLabRequest());
    ASSERT_TRUE(std::holds_alternative<plan::Plan>(built));
    const auto& p = std::get<plan::Plan>(built);
    std::ofstream(file("plan.json")) << plan::toJson(p).dump();
    nlohmann::json inventory;
    for (const auto& sw : p.switches) {
        inventory["switches"][sw.name]["redis"] = {
            {"host", "127.0.0.1"}, {"port", tlsPort_}, {"tls", true}, {"user", "tr18r-ro"}};
    }
    std::ofstream(file("inventory.json")) << inventory.dump();
    admin(kStateDb, {"HSET", "HOST_CLAIM_TABLE|10.128.0.2|swp2", "mac", "02:00:0a:80:00:03",
                     "reason", "bound-elsewhere", "count", "3", "first", "2026-12-02T07:00:00Z",
                     "last", "2026-12-02T07:00:01Z"});
    // What the lossless checks read beyond STATE_DB: a lossless queue (CONFIG_DB
    // PORT_QOS_MAP) the PFC watchdog found stormed (COUNTERS_DB, through the queue name
    // map), and pathqd's pause rate on a port (STATE_DB PATH_QUALITY_TABLE).
    admin(4, {"HSET", "PORT_QOS_MAP|swp3", "pfc_enable", "3"});
    admin(2, {"HSET", "COUNTERS_QUEUE_NAME_MAP", "swp3:3", "oid:0x15000000000303"});
    admin(2, {"HSET", "COUNTERS:oid:0x15000000000303", "PFC_WD_STATUS", "stormed"});
    admin(kStateDb, {"HSET", "PATH_QUALITY_TABLE|swp1", "pause_rx_pps", "500.0"});
    const std::string args = "--json --redis-ca " + file("cert.pem") + " --redis-password-file " +
                             file("ro.pass") + " verify --plan " + file("plan.json") +
                             " --inventory " + file("inventory.json");
    auto r = cli(args);
    EXPECT_EQ(r.rc, 69) << r.err;
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
    EXPECT_TRUE(j["unreachable"].empty()) << j["unreachable"].dump();
    bool claimed = false;
    for (const auto& c : j["claims"])
        claimed = claimed || (c["address"] == "10.128.0.2" && c["owner"] == "srv1/nic1");
    EXPECT_TRUE(claimed) << j["claims"].dump();
    std::string lossless = j["lossless"].dump();
    EXPECT_EQ(lossless.find("not read"), std::string::npos) << lossless;
    EXPECT_NE(lossless.find("PFC storm on swp3 queue 3"), std::string::npos) << lossless;
    EXPECT_NE(lossless.find("swp1 receives 500.0 pause frames/s"), std::string::npos) << lossless;
    r = cli("--json --redis-ca " + file("cert.pem") + " --redis-password-file " +
            file("wrong.pass") + " verify --plan " + file("plan.json") + " --inventory " +
            file("inventory.json"));
    EXPECT_EQ(r.rc, 77) << r.err;
    EXPECT_NE((r.out + r.err).find("AUTH failed for user tr18r-ro"), std::string::npos)
        << r.out << r.err;
    admin(kStateDb, {"DEL", "HOST_CLAIM_TABLE|10.128.0.2|swp2", "PATH_QUALITY_TABLE|swp1"});
    admin(4, {"DEL", "PORT_QOS_MAP|swp3"});
    admin(2, {"DEL", "COUNTERS_QUEUE_NAME_MAP", "COUNTERS:oid:0x15000000000303"});
}

TEST_F(RedisAuth, ScopedDaemonUserPublishesAndPollsConfigWithoutConfigSetOrEval) {
    // The user really lacks what the daemons used to need.
    EXPECT_NE(admin(0, {"ACL", "DRYRUN", "tr18r-hostrouted", "EVAL", "return 1", "0"})
                  .find("no permissions"),
              std::string::npos);
    EXPECT_NE(admin(0, {"ACL", "DRYRUN", "tr18r-hostrouted", "CONFIG", "SET",
                        "notify-keyspace-events", "KA"})
                  .find("no permissions"),
              std::string::npos);
    admin(kConfigDb, {"HSET", "HOSTROUTED|global", "proxy_arp", "true"});
    admin(kConfigDb, {"HSET", "HOSTROUTED_INTERFACE|Ethernet4", "mtu", "9100"});
    admin(kConfigDb, {"HSET", "PATHQD|global", "interval", "1"});  // not its table

    boost::asio::io_context io;
    redis::Endpoint ep = endpoint("tr18r-hostrouted", file("daemon.pass"));
    std::optional<nlohmann::json> config;
    int reads = 0;
    redis::ConfigDbWatcher watcher(
        io, ep, kConfigDb, '|', {"HOSTROUTED", "HOSTROUTED_INTERFACE"},
        [&](const nlohmann::json& doc) {
            config = doc;
            ++reads;
        },
        200ms);
    redis::Client state(io, ep, kStateDb, "STATE_DB");
    std::optional<redis::Value> published, outside;
    state.onConnected([&] {
        state.command({"HSET", "HOST_ROUTE_TABLE|10.1.0.9", "ifname", "Ethernet4"},
                      [&](const redis::Value& v) { published = v; });
        state.command({"HSET", "PATH_QUALITY_TABLE|Ethernet0", "level", "1"},
                      [&](const redis::Value& v) { outside = v; });
    });
    watcher.start();
    state.start();
    ASSERT_TRUE(runUntil(
        io, [&] { return config && published && outside; }, 3s));
    EXPECT_EQ((*config)["HOSTROUTED"]["global"]["proxy_arp"], "true");
    EXPECT_EQ((*config)["HOSTROUTED_INTERFACE"]["Ethernet4"]["mtu"], "9100");
    EXPECT_FALSE(config->contains("PATHQD"));
    EXPECT_FALSE(published->isError()) << published->str;
    EXPECT_NE(admin(kStateDb, {"HGET", "HOST_ROUTE_TABLE|10.1.0.9", "ifname"}).find("Ethernet4"),
              std::string::npos);
    ASSERT_TRUE(outside->isError());  // scoped to its own tables
    EXPECT_EQ(outside->str.rfind("NOPERM", 0), 0u);

    // A change is seen by polling (no notifications: CONFIG SET and PSUBSCRIBE refused),
    // and the refused subscriber does not reconnect in a loop.
    auto connections = [] {
        auto info = admin(0, {"INFO", "stats"});
        auto at = info.find("total_connections_received:");
        return std::stol(info.substr(at + 27));
    };
    long before = connections();
    admin(kConfigDb, {"HSET", "HOSTROUTED|global", "proxy_arp", "false"});
    ASSERT_TRUE(runUntil(
        io, [&] { return (*config)["HOSTROUTED"]["global"]["proxy_arp"] == "false"; }, 3s));
    runUntil(
        io, [] { return false; }, 600ms);
    EXPECT_GE(reads, 3);
    // Only our own redis-cli calls (connections() and the HSET) connect meanwhile.
    EXPECT_LE(connections() - before, 3);
    watcher.stop();
    state.stop();
}

}  // namespace
