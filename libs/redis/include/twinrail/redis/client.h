// One asynchronous Redis connection on the daemon's io_context (hiredis + an asio
// adapter), reconnecting with backoff. Nothing here blocks: while Redis is down,
// commands are refused and the owner republishes after onConnected.
//
// Every accepted command completes: its handler gets the reply, or an error Value for
// which connectionLost() is true when the connection drops first. Owners that count
// outstanding replies can rely on that. After stop() no handler is called any more.
// The connection counts as up only once AUTH (when the endpoint has a password) and
// SELECT of the configured DB have succeeded. A refused AUTH is logged once per distinct
// server answer and retried with the usual backoff (an operator may fix the ACL live).
// This client speaks plain TCP or a unix socket only: TLS is for remote readers
// (SyncReader); a daemon reaches its switch-local Redis over the unix socket.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

struct redisAsyncContext;

struct redisReply;

namespace twinrail::redis {

struct TlsOptions {
    bool enabled = false;
    std::string caFile;    // empty: the system's trust store
    std::string certFile;  // client certificate (with keyFile), for tls-auth-clients
    std::string keyFile;
    std::string serverName;  // the name the certificate must carry; empty: the host
};

struct Endpoint {
    std::string unixSocket;  // preferred when set
    std::string host = "127.0.0.1";
    int port = 6379;
    std::string user;      // ACL user; empty: "default" (AUTH with the password only)
    std::string password;  // read from a password file; never logged, never on argv
    TlsOptions tls;
    // Where it is, for messages: never the password.
    std::string describe() const;
    std::string userName() const { return user.empty() ? "default" : user; }
};

struct Value {
    enum class Type { Nil, String, Integer, Array, Status, Error } type = Type::Nil;
    std::string str;
    long long integer = 0;
    std::vector<Value> elements;
    bool isError() const { return type == Type::Error; }
    bool connectionLost() const { return isError() && str == kLost; }
    static Value error(std::string what) {
        Value v;
        v.type = Type::Error;
        v.str = std::move(what);
        return v;
    }
    static constexpr const char* kLost = "connection lost";
};

// A hiredis reply as a Value (nullptr: Nil); for every hiredis user, sync or async.
Value valueFromReply(const redisReply* reply);

using ReplyHandler = std::function<void(const Value&)>;
using Fields = std::vector<std::pair<std::string, std::string>>;

// What a daemon needs of one Redis database: the edge its tables are written through.
// Client is the real one; unit tests put an in-memory fake (tests/unit/fakes) behind it.
class Connection {
  public:
    virtual ~Connection() = default;
    virtual void start() = 0;
    virtual void stop() = 0;
    virtual bool connected() const = 0;
    virtual void onConnected(std::function<void()> fn) = 0;
    virtual void onDisconnected(std::function<void()> fn) = 0;
    // Returns false (and drops the command) when not connected. In subscribe mode the
    // handler stays registered and is called for every message.
    virtual bool command(const std::vector<std::string>& args, ReplyHandler handler) = 0;
    bool command(const std::vector<std::string>& args) { return command(args, ReplyHandler{}); }
    virtual size_t pendingReplies() const = 0;
};

class Client final : public Connection {
  public:
    Client(boost::asio::io_context& io, Endpoint endpoint, int db, std::string name);
    ~Client() override;
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    void start() override;
    void stop() override;
    bool connected() const override { return connected_; }
    void onConnected(std::function<void()> fn) override { onConnected_ = std::move(fn); }
    void onDisconnected(std::function<void()> fn) override { onDisconnected_ = std::move(fn); }

    using Connection::command;
    bool command(const std::vector<std::string>& args, ReplyHandler handler) override;
    size_t pendingReplies() const override { return pending_; }
    // Why the last connection ended (hiredis' text, e.g. a NOPERM reply), or "".
    const std::string& lastError() const { return lastError_; }

  private:
    struct Adapter;
    void connect();
    void scheduleReconnect();
    void handleConnect(int status);
    void sendSelect();
    void handleAuth(const Value& reply);
    void handleSelected(const Value& reply);
    void authFailed(const std::string& what);
    void handleDisconnect();
    static void connectCallback(const redisAsyncContext* ac, int status);
    static void disconnectCallback(const redisAsyncContext* ac, int status);
    static void replyCallback(redisAsyncContext* ac, void* reply, void* privdata);
    static void selectCallback(redisAsyncContext* ac, void* reply, void* privdata);
    static void authCallback(redisAsyncContext* ac, void* reply, void* privdata);

    boost::asio::io_context& io_;
    Endpoint endpoint_;
    int db_;
    std::string name_;
    redisAsyncContext* ctx_ = nullptr;
    bool connected_ = false;  // commands are accepted
    bool announced_ = false;  // the owner was told (onConnected) and not yet told otherwise
    bool stopping_ = false;
    bool loggedDown_ = false;
    bool loggedSelect_ = false;
    bool loggedTls_ = false;
    std::string loggedAuth_;  // the refusal last logged; "" once authenticated
    std::string lastError_;
    size_t pending_ = 0;
    std::chrono::milliseconds backoff_{100};
    boost::asio::steady_timer reconnectTimer_;
    std::function<void()> onConnected_, onDisconnected_;
};

}  // namespace twinrail::redis
