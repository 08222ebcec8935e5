#include "twinrail/redis/sync_reader.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <memory>

#include "tls_connection.h"
#include "twinrail/redis/auth.h"

namespace twinrail::redis {
namespace {

struct ReplyDeleter {
    void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

std::string text(const redisReply* r) {
    return r != nullptr && r->str != nullptr ? std::string(r->str, r->len) : std::string();
}

}  // namespace

SyncReader::SyncReader() = default;  // here, where TlsConnection is complete

SyncReader::~SyncReader() {
    if (ctx_ != nullptr) redisFree(ctx_);
}

redisReply* SyncReader::run(const std::vector<std::string>& args) {
    if (tls_) return tls_->roundTrip(args);
    if (ctx_ == nullptr) return nullptr;
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : args) {
        argv.push_back(a.c_str());
        lens.push_back(a.size());
    }
    return static_cast<redisReply*>(
        redisCommandArgv(ctx_, static_cast<int>(args.size()), argv.data(), lens.data()));
}

std::string SyncReader::transportError() const {
    if (tls_) return tls_->error();
    return ctx_ != nullptr && ctx_->err != 0 ? ctx_->errstr : "no reply";
}

// Records why a call failed: the server's error text (and whether it is a refusal of our
// credentials), else the transport's.
void SyncReader::fail(const std::string& what, const redisReply* reply) {
    std::string why = reply != nullptr ? text(reply) : transportError();
    if (reply != nullptr && reply->type != REDIS_REPLY_ERROR) why = "unexpected reply";
    authFailed_ = reply != nullptr && reply->type == REDIS_REPLY_ERROR && isAuthError(why);
    error_ = "Redis at " + where_ + ": " + what + " failed: " + why;
}

std::optional<std::string> SyncReader::connect(const Endpoint& endpoint, int db,
                                               std::chrono::milliseconds timeout) {
    where_ = endpoint.describe();
    authFailed_ = false;
    if (auto bad = checkTls(endpoint)) return "Redis at " + where_ + ": " + *bad;
    if (endpoint.tls.enabled) {
        tls_ = std::make_unique<detail::TlsConnection>();
        if (auto err = tls_->connect(endpoint, timeout)) return err;
    } else {
        timeval tv{static_cast<time_t>(timeout.count() / 1000),
                   static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
        ctx_ = endpoint.unixSocket.empty()
                   ? redisConnectWithTimeout(endpoint.host.c_str(), endpoint.port, tv)
                   : redisConnectUnixWithTimeout(endpoint.unixSocket.c_str(), tv);
        if (ctx_ == nullptr) return "cannot reach Redis at " + where_ + ": out of memory";
        if (ctx_->err != 0) return "cannot reach Redis at " + where_ + ": " + ctx_->errstr;
        redisSetTimeout(ctx_, tv);
    }
    if (auto auth = authCommand(endpoint); !auth.empty()) {
        Reply r(run(auth));
        if (!r) return "Redis at " + where_ + ": AUTH got no answer: " + transportError();
        if (r->type == REDIS_REPLY_ERROR) {
            authFailed_ = true;
            return authFailure(endpoint, text(r.get()));
        }
    }
    Reply r(run({"SELECT", std::to_string(db)}));
    if (!r || r->type == REDIS_REPLY_ERROR) {
        std::string why = r ? text(r.get()) : transportError();
        authFailed_ = r && isAuthError(why);
        std::string hint = !authFailed_ ? ""
                           : endpoint.password.empty()
                               ? " (give --redis-user and --redis-password-file)"
                               : " (check the ACL of user " + endpoint.userName() + ")";
        return "Redis at " + where_ + " refused SELECT " + std::to_string(db) + ": " + why + hint;
    }
    return std::nullopt;
}

std::vector<std::string> SyncReader::keys(const std::string& pattern) {
    error_.reset();
    std::vector<std::string> out;
    std::string cursor = "0";
    do {
        Reply r(run({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"}));
        if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
            fail("SCAN", r.get());
            return {};
        }
        cursor = text(r->element[0]);
        const redisReply* list = r->element[1];
        for (size_t i = 0; i < list->elements; ++i) out.push_back(text(list->element[i]));
    } while (cursor != "0");
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());  // SCAN may repeat keys
    return out;
}

std::map<std::string, std::string> SyncReader::hash(const std::string& key) {
    error_.reset();
    std::map<std::string, std::string> out;
    Reply r(run({"HGETALL", key}));
    if (!r || r->type != REDIS_REPLY_ARRAY) {
        fail("HGETALL " + key, r.get());
        return out;
    }
    for (size_t i = 0; i + 1 < r->elements; i += 2)
        out[text(r->element[i])] = text(r->element[i + 1]);
    return out;
}

bool SyncReader::hset(const std::string& key, const Fields& fields) {
    error_.reset();
    std::vector<std::string> args{"HSET", key};
    for (const auto& [f, v] : fields) {
        args.push_back(f);
        args.push_back(v);
    }
    Reply r(run(args));
    if (!r || r->type != REDIS_REPLY_INTEGER) {
        fail("HSET " + key, r.get());
        return false;
    }
    return true;
}

}  // namespace twinrail::redis
