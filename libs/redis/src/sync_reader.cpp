#include "twinrail/redis/sync_reader.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <memory>

namespace twinrail::redis {
namespace {

struct ReplyDeleter {
    void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

Reply run(redisContext* ctx, const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : args) {
        argv.push_back(a.c_str());
        lens.push_back(a.size());
    }
    return Reply(static_cast<redisReply*>(
        redisCommandArgv(ctx, static_cast<int>(args.size()), argv.data(), lens.data())));
}

}  // namespace

SyncReader::~SyncReader() {
    if (ctx_ != nullptr) redisFree(ctx_);
}

std::optional<std::string> SyncReader::connect(const Endpoint& endpoint, int db,
                                               std::chrono::milliseconds timeout) {
    where_ = endpoint.describe();
    timeval tv{static_cast<time_t>(timeout.count() / 1000),
               static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
    ctx_ = endpoint.unixSocket.empty()
               ? redisConnectWithTimeout(endpoint.host.c_str(), endpoint.port, tv)
               : redisConnectUnixWithTimeout(endpoint.unixSocket.c_str(), tv);
    if (ctx_ == nullptr) return "cannot reach Redis at " + where_ + ": out of memory";
    if (ctx_->err != 0) return "cannot reach Redis at " + where_ + ": " + ctx_->errstr;
    redisSetTimeout(ctx_, tv);
    Reply r = run(ctx_, {"SELECT", std::to_string(db)});
    if (!r || r->type == REDIS_REPLY_ERROR) {
        return "Redis at " + where_ + " refused SELECT " + std::to_string(db) + ": " +
               (r ? std::string(r->str, r->len) : std::string(ctx_->errstr));
    }
    return std::nullopt;
}

std::vector<std::string> SyncReader::keys(const std::string& pattern) {
    error_.reset();
    std::vector<std::string> out;
    std::string cursor = "0";
    do {
        Reply r = run(ctx_, {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
        if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
            error_ = "Redis at " + where_ + ": SCAN failed" +
                     (ctx_->err ? std::string(": ") + ctx_->errstr : "");
            return {};
        }
        cursor.assign(r->element[0]->str, r->element[0]->len);
        const redisReply* list = r->element[1];
        for (size_t i = 0; i < list->elements; ++i)
            out.emplace_back(list->element[i]->str, list->element[i]->len);
    } while (cursor != "0");
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());  // SCAN may repeat keys
    return out;
}

std::map<std::string, std::string> SyncReader::hash(const std::string& key) {
    error_.reset();
    std::map<std::string, std::string> out;
    Reply r = run(ctx_, {"HGETALL", key});
    if (!r || r->type != REDIS_REPLY_ARRAY) {
        error_ = "Redis at " + where_ + ": HGETALL " + key + " failed";
        return out;
    }
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        out[std::string(r->element[i]->str, r->element[i]->len)] =
            std::string(r->element[i + 1]->str, r->element[i + 1]->len);
    }
    return out;
}

}  // namespace twinrail::redis
