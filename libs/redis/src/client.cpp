#include "twinrail/redis/client.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <boost/asio/posix/stream_descriptor.hpp>

#include "twinrail/common/log.h"
#include "twinrail/redis/auth.h"

namespace twinrail::redis {

std::string Endpoint::describe() const {
    if (!unixSocket.empty()) return "unix:" + unixSocket;
    return host + ":" + std::to_string(port) + (tls.enabled ? " (TLS)" : "");
}

// Bridges hiredis' event hooks to asio readiness waits on the connection's fd. The
// descriptor never owns the fd (hiredis closes it); `ac` is cleared by the cleanup hook
// so handlers that fire after the context is gone do nothing.
struct Client::Adapter : std::enable_shared_from_this<Client::Adapter> {
    Adapter(boost::asio::io_context& io, redisAsyncContext* c) : fd(io, c->c.fd), ac(c) {}
    boost::asio::posix::stream_descriptor fd;
    redisAsyncContext* ac;
    bool reading = false, writing = false;
    std::shared_ptr<Adapter> self;  // kept until hiredis calls cleanup

    void waitRead() {
        fd.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                      [keep = shared_from_this()](const boost::system::error_code& ec) {
                          if (ec || keep->ac == nullptr || !keep->reading) return;
                          redisAsyncHandleRead(keep->ac);
                          if (keep->ac != nullptr && keep->reading) keep->waitRead();
                      });
    }
    void waitWrite() {
        fd.async_wait(boost::asio::posix::stream_descriptor::wait_write,
                      [keep = shared_from_this()](const boost::system::error_code& ec) {
                          if (ec || keep->ac == nullptr || !keep->writing) return;
                          keep->writing = false;
                          redisAsyncHandleWrite(keep->ac);
                      });
    }
    static void addRead(void* p) {
        auto* a = static_cast<Adapter*>(p);
        if (!a->reading) {
            a->reading = true;
            a->waitRead();
        }
    }
    static void delRead(void* p) { static_cast<Adapter*>(p)->reading = false; }
    static void addWrite(void* p) {
        auto* a = static_cast<Adapter*>(p);
        if (!a->writing) {
            a->writing = true;
            a->waitWrite();
        }
    }
    static void delWrite(void* p) { static_cast<Adapter*>(p)->writing = false; }
    static void cleanup(void* p) {
        auto* a = static_cast<Adapter*>(p);
        a->ac = nullptr;
        a->reading = a->writing = false;
        boost::system::error_code ignored;
        a->fd.cancel(ignored);
        a->fd.release();
        a->self.reset();  // may destroy the adapter once pending handlers finish
    }
};

Value valueFromReply(const redisReply* r) {
    Value v;
    if (r == nullptr) return v;
    switch (r->type) {
        case REDIS_REPLY_STRING:
            v.type = Value::Type::String;
            break;
        case REDIS_REPLY_STATUS:
            v.type = Value::Type::Status;
            break;
        case REDIS_REPLY_ERROR:
            v.type = Value::Type::Error;
            break;
        case REDIS_REPLY_INTEGER:
            v.type = Value::Type::Integer;
            break;
        case REDIS_REPLY_ARRAY:
            v.type = Value::Type::Array;
            break;
        default:
            v.type = Value::Type::Nil;
            break;
    }
    if (r->str != nullptr) v.str.assign(r->str, r->len);
    v.integer = r->integer;
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; ++i)
        v.elements.push_back(valueFromReply(r->element[i]));
    return v;
}

namespace {

struct Pending {
    ReplyHandler handler;
    bool persistent;
};
}  // namespace

Client::Client(boost::asio::io_context& io, Endpoint endpoint, int db, std::string name)
    : io_(io),
      endpoint_(std::move(endpoint)),
      db_(db),
      name_(std::move(name)),
      reconnectTimer_(io) {}

Client::~Client() {
    try {
        stop();
    } catch (...) {  // NOLINT(bugprone-empty-catch): nothing to do while being destroyed
    }
}

void Client::start() {
    stopping_ = false;
    connect();
}

void Client::stop() {
    stopping_ = true;
    reconnectTimer_.cancel();
    if (ctx_ != nullptr) {
        redisAsyncContext* c = ctx_;
        ctx_ = nullptr;
        connected_ = announced_ = false;
        c->data = nullptr;
        redisAsyncFree(c);
    }
}

void Client::connect() {
    if (endpoint_.tls.enabled) {
        // The options refuse this already; a config that slips through is not retried.
        if (!loggedTls_) {
            log::error("redis ", name_, ": ", endpoint_.describe(),
                       ": TLS is not supported by the daemons' Redis client; reach the "
                       "switch-local Redis over its unix socket (--redis-socket)");
            loggedTls_ = true;
        }
        return;
    }
    redisAsyncContext* c = endpoint_.unixSocket.empty()
                               ? redisAsyncConnect(endpoint_.host.c_str(), endpoint_.port)
                               : redisAsyncConnectUnix(endpoint_.unixSocket.c_str());
    if (c == nullptr || c->err != 0) {
        if (!loggedDown_) {
            log::warning("redis ", name_, ": cannot connect to ", endpoint_.describe(), ": ",
                         c != nullptr ? c->errstr : "out of memory", "; retrying");
            loggedDown_ = true;
        }
        if (c != nullptr) redisAsyncFree(c);
        scheduleReconnect();
        return;
    }
    ctx_ = c;
    c->data = this;
    auto adapter = std::make_shared<Adapter>(io_, c);
    adapter->self = adapter;
    c->ev.data = adapter.get();
    c->ev.addRead = &Adapter::addRead;
    c->ev.delRead = &Adapter::delRead;
    c->ev.addWrite = &Adapter::addWrite;
    c->ev.delWrite = &Adapter::delWrite;
    c->ev.cleanup = &Adapter::cleanup;
    redisAsyncSetConnectCallback(c, &Client::connectCallback);
    redisAsyncSetDisconnectCallback(c, &Client::disconnectCallback);
    // AUTH, then SELECT, before anything else: the owner hears of the connection (and
    // may send commands) only when both have succeeded, so every command lands in the
    // right DB as the right user.
    std::vector<std::string> auth = authCommand(endpoint_);
    if (auth.empty()) return sendSelect();
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : auth) {
        argv.push_back(a.c_str());
        lens.push_back(a.size());
    }
    redisAsyncCommandArgv(c, &Client::authCallback, nullptr, static_cast<int>(auth.size()),
                          argv.data(), lens.data());
}

void Client::sendSelect() {
    if (ctx_ == nullptr) return;
    std::string dbArg = std::to_string(db_);
    const char* argv[] = {"SELECT", dbArg.c_str()};
    size_t lens[] = {6, dbArg.size()};
    redisAsyncCommandArgv(ctx_, &Client::selectCallback, nullptr, 2, argv, lens);
}

void Client::authCallback(redisAsyncContext* ac, void* reply, void* /*privdata*/) {
    auto* self = static_cast<Client*>(ac->data);
    if (self == nullptr || reply == nullptr) return;  // stopping, or the connection went
    self->handleAuth(valueFromReply(static_cast<redisReply*>(reply)));
}

void Client::handleAuth(const Value& reply) {
    if (reply.isError() || reply.type != Value::Type::Status) {
        return authFailed(
            authFailure(endpoint_, reply.str.empty() ? "unexpected reply" : reply.str));
    }
    sendSelect();
}

void Client::authFailed(const std::string& what) {
    // Logged once per distinct refusal: a wrong password retried every 2 s is one line,
    // and a changed answer (the ACL was edited) is news.
    if (what != loggedAuth_) {
        log::error(what, "; retrying with backoff");
        loggedAuth_ = what;
    }
    if (ctx_ != nullptr) redisAsyncDisconnect(ctx_);  // reconnects with backoff
}

void Client::selectCallback(redisAsyncContext* ac, void* reply, void* /*privdata*/) {
    auto* self = static_cast<Client*>(ac->data);
    if (self == nullptr || reply == nullptr) return;  // stopping, or the connection went
    self->handleSelected(valueFromReply(static_cast<redisReply*>(reply)));
}

void Client::handleSelected(const Value& reply) {
    if (reply.isError() && isAuthError(reply.str)) {
        return authFailed("redis at " + endpoint_.describe() + " refused SELECT " +
                          std::to_string(db_) + " for user " + endpoint_.userName() + ": " +
                          reply.str + " (check --redis-user/--redis-password-file and the ACL)");
    }
    if (reply.isError() || reply.type != Value::Type::Status) {
        if (!loggedSelect_) {
            log::error("redis ", name_, ": ", endpoint_.describe(), " refused SELECT ", db_, ": ",
                       reply.str.empty() ? "unexpected reply" : reply.str,
                       " (check the DB id in database_config.json); retrying");
            loggedSelect_ = true;
        }
        if (ctx_ != nullptr) redisAsyncDisconnect(ctx_);  // reconnects with backoff
        return;
    }
    connected_ = announced_ = true;
    loggedDown_ = loggedSelect_ = false;
    loggedAuth_.clear();
    lastError_.clear();
    backoff_ = std::chrono::milliseconds(100);
    log::info("redis ", name_, ": connected to ", endpoint_.describe(), " db ", db_);
    if (onConnected_) onConnected_();
}

void Client::scheduleReconnect() {
    if (stopping_) return;
    reconnectTimer_.expires_after(backoff_);
    backoff_ = std::min(backoff_ * 2, std::chrono::milliseconds(2000));
    reconnectTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) connect();
    });
}

void Client::connectCallback(const redisAsyncContext* ac, int status) {
    if (auto* self = static_cast<Client*>(ac->data)) self->handleConnect(status);
}

void Client::disconnectCallback(const redisAsyncContext* ac, int status) {
    auto* self = static_cast<Client*>(ac->data);
    if (self == nullptr) return;
    if (status != REDIS_OK && ac->c.err != 0) self->lastError_ = ac->c.errstr;
    self->handleDisconnect();
}

void Client::handleConnect(int status) {
    if (status != REDIS_OK) {
        // hiredis frees the context after this callback.
        if (!loggedDown_) {
            log::warning("redis ", name_, ": cannot connect to ", endpoint_.describe(), ": ",
                         ctx_ != nullptr ? ctx_->errstr : "", "; retrying");
            loggedDown_ = true;
        }
        ctx_ = nullptr;
        scheduleReconnect();
        return;
    }
    // Connected at the socket level; the SELECT reply (selectCallback) completes it.
}

void Client::handleDisconnect() {
    bool was = announced_;
    announced_ = false;
    connected_ = false;
    ctx_ = nullptr;
    pending_ = 0;
    if (was) {
        log::warning("redis ", name_, ": connection lost",
                     lastError_.empty() ? "" : " (" + lastError_ + ")",
                     "; routing continues, state will be republished on reconnect");
        if (onDisconnected_) onDisconnected_();
    }
    scheduleReconnect();
}

void Client::replyCallback(redisAsyncContext* ac, void* reply, void* privdata) {
    auto* pending = static_cast<Pending*>(privdata);
    auto* self = static_cast<Client*>(ac->data);
    if (reply != nullptr) {
        if (pending->handler) pending->handler(valueFromReply(static_cast<redisReply*>(reply)));
    } else if (self != nullptr) {
        // The connection dropped with this command outstanding. hiredis runs these before
        // the disconnect callback: refuse new commands from here on, then tell the owner.
        // hiredis has already set the reason (e.g. a NOPERM answer to PSUBSCRIBE).
        self->connected_ = false;
        if (ac->c.err != 0) self->lastError_ = ac->c.errstr;
        if (pending->handler) pending->handler(Value::error(Value::kLost));
    }  // else: stop() or the destructor freed the context; the owner is not listening
    bool keep = pending->persistent && reply != nullptr && !(ac->c.flags & REDIS_FREEING);
    if (!keep) {
        if (self != nullptr && self->pending_ > 0 && !pending->persistent) --self->pending_;
        delete pending;  // NOLINT: ownership handed through hiredis' void* privdata
    }
}

bool Client::command(const std::vector<std::string>& args, ReplyHandler handler) {
    if (!connected_ || ctx_ == nullptr || args.empty()) return false;
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : args) {
        argv.push_back(a.c_str());
        lens.push_back(a.size());
    }
    bool subscribe = args[0] == "PSUBSCRIBE" || args[0] == "SUBSCRIBE";
    auto* pending = new Pending{std::move(handler), subscribe};  // NOLINT: see replyCallback
    if (redisAsyncCommandArgv(ctx_, &Client::replyCallback, pending, static_cast<int>(args.size()),
                              argv.data(), lens.data()) != REDIS_OK) {
        delete pending;  // NOLINT
        return false;
    }
    if (!subscribe) ++pending_;
    return true;
}

}  // namespace twinrail::redis
