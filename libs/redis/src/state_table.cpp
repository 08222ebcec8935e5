#include "twinrail/redis/state_table.h"

#include "twinrail/common/log.h"

namespace twinrail::redis {
namespace {
constexpr auto kCoalesce = std::chrono::milliseconds(20);
constexpr size_t kMaxInFlight = 20000;  // back-pressure: flush again when replies drain
}  // namespace

StateTable::StateTable(boost::asio::io_context& io, Client& client, std::string table,
                       char separator, RowSource rowOf, KeySource allKeys)
    : client_(client), table_(std::move(table)), separator_(separator),
      rowOf_(std::move(rowOf)), allKeys_(std::move(allKeys)), flushTimer_(io) {}

std::string StateTable::redisKey(const std::string& key) const {
    return table_ + separator_ + key;
}

void StateTable::markDirty(const std::string& key) {
    // While disconnected nothing is remembered: the reconnect rewrites everything.
    if (!client_.connected()) return;
    dirty_.insert(key);
    scheduleFlush();
}

void StateTable::scheduleFlush() {
    if (flushArmed_) return;
    flushArmed_ = true;
    flushTimer_.expires_after(kCoalesce);
    flushTimer_.async_wait([this](const boost::system::error_code& ec) {
        flushArmed_ = false;
        if (!ec) flush();
    });
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
            client_.command(args);
        } else {
            client_.command({"DEL", redisKey(*it)});
        }
        it = dirty_.erase(it);
    }
    if (!dirty_.empty()) scheduleFlush();
}

void StateTable::resyncAll() {
    dirty_.clear();
    resyncing_ = true;
    scanFrom("0", std::make_shared<std::vector<std::string>>());
}

void StateTable::scanFrom(const std::string& cursor,
                          const std::shared_ptr<std::vector<std::string>>& found) {
    // SCAN, not KEYS: Redis stays responsive for other clients while we enumerate.
    bool sent = client_.command(
        {"SCAN", cursor, "MATCH", table_ + separator_ + "*", "COUNT", "2000"},
        [this, found](const Value& reply) {
            if (reply.type != Value::Type::Array || reply.elements.size() != 2) {
                log::warning("redis: unexpected SCAN reply while resyncing ", table_);
                resyncing_ = false;
                return;
            }
            for (const auto& k : reply.elements[1].elements) found->push_back(k.str);
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
            client_.command({"DEL", k});
            ++removed;
        }
    }
    log::info("redis: republishing ", table_, ": ", ours.size(), " rows, ", removed,
              " stale rows removed");
    flush();
}

}  // namespace twinrail::redis
