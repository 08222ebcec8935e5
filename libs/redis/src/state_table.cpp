#include "twinrail/redis/state_table.h"

#include "twinrail/common/log.h"

namespace twinrail::redis {
namespace {
constexpr auto kCoalesce = std::chrono::milliseconds(20);
constexpr size_t kMaxInFlight = 20000;  // back-pressure: flush again when replies drain
constexpr auto kRetryFailed = std::chrono::seconds(1);
}  // namespace

StateTable::StateTable(boost::asio::io_context& io, Connection& client, std::string table,
                       char separator, RowSource rowOf, KeySource allKeys)
    : client_(client),
      table_(std::move(table)),
      separator_(separator),
      rowOf_(std::move(rowOf)),
      allKeys_(std::move(allKeys)),
      flushTimer_(io) {}

std::string StateTable::redisKey(const std::string& key) const {
    return table_ + separator_ + key;
}

void StateTable::markDirty(const std::string& key) {
    // While disconnected nothing is remembered: the reconnect rewrites everything.
    if (!client_.connected()) return;
    dirty_.insert(key);
    scheduleFlush(kCoalesce);
}

void StateTable::scheduleFlush(std::chrono::milliseconds after) {
    if (flushArmed_) return;
    flushArmed_ = true;
    flushTimer_.expires_after(after);
    flushTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        flushArmed_ = false;
        flush();
    });
}

void StateTable::writeFailed(const std::string& key, const Value& reply) {
    if (reply.connectionLost()) return;  // the reconnect rewrites the whole table
    ++errors_;
    if (reply.str != lastError_) {
        log::warning("redis: ", table_, ": write of ", redisKey(key), " refused: ", reply.str,
                     "; retrying (further errors of this kind are only counted)");
        lastError_ = reply.str;
    }
    dirty_.insert(key);
    scheduleFlush(std::chrono::duration_cast<std::chrono::milliseconds>(kRetryFailed));
}

void StateTable::flush() {
    if (!client_.connected() || resyncing_) return;
    auto it = dirty_.begin();
    while (it != dirty_.end() && client_.pendingReplies() < kMaxInFlight) {
        auto row = rowOf_(*it);
        if (row) {
            std::vector<std::string> args{"HSET", redisKey(*it)};
            for (auto& [field, value] : *row) {
                args.push_back(field);
                args.push_back(value);
            }
            client_.command(args, [this, key = *it](const Value& r) {
                if (r.isError()) writeFailed(key, r);
            });
        } else {
            client_.command({"DEL", redisKey(*it)}, [this, key = *it](const Value& r) {
                if (r.isError()) writeFailed(key, r);
            });
        }
        it = dirty_.erase(it);
    }
    if (!dirty_.empty()) scheduleFlush(kCoalesce);
}

void StateTable::resyncAll() {
    dirty_.clear();
    resyncing_ = true;
    scanFrom("0", std::make_shared<std::vector<std::string>>());
}

void StateTable::scanFrom(const std::string& cursor,
                          const std::shared_ptr<std::vector<std::string>>& found) {
    // SCAN, not KEYS: Redis stays responsive for other clients while we enumerate.
    bool sent =
        client_.command({"SCAN", cursor, "MATCH", table_ + separator_ + "*", "COUNT", "2000"},
                        [this, found](const Value& reply) {
                            if (reply.type != Value::Type::Array || reply.elements.size() != 2) {
                                // A lost connection resyncs again on reconnect; anything else is
                                // news.
                                if (!reply.connectionLost())
                                    log::warning("redis: unexpected SCAN reply while resyncing ",
                                                 table_, ": ", reply.str);
                                resyncing_ = false;
                                return;
                            }
                            for (const auto& k : reply.elements[1].elements)
                                found->push_back(k.str);
                            if (reply.elements[0].str == "0") {
                                finishResync(*found);
                            } else {
                                scanFrom(reply.elements[0].str, found);
                            }
                        });
    if (!sent) resyncing_ = false;
}

void StateTable::finishResync(const std::vector<std::string>& existing) {
    resyncing_ = false;
    std::unordered_set<std::string> ours;
    for (auto& key : allKeys_()) {
        ours.insert(redisKey(key));
        dirty_.insert(key);
    }
    size_t removed = 0;
    for (const auto& k : existing) {
        if (ours.count(k) == 0) {
            client_.command({"DEL", k}, [this, k](const Value& r) {
                if (r.isError() && !r.connectionLost()) {
                    ++errors_;
                    log::warning("redis: ", table_, ": cannot remove stale row ", k, ": ", r.str);
                }
            });
            ++removed;
        }
    }
    log::info("redis: republishing ", table_, ": ", ours.size(), " rows, ", removed,
              " stale rows removed");
    flush();
}

}  // namespace twinrail::redis
