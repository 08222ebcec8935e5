// Mirrors one STATE_DB table from an owner that keeps the real state. It stores no copy
// of the rows: it remembers which keys are dirty and asks the owner for their current
// fields when it flushes, so a 100k-row table costs the owner's memory only once.
// On every (re)connect it rewrites the whole table and deletes rows nobody owns.
// Every write's reply is checked: a refused HSET/DEL is counted, logged once per kind of
// error, and the row is written again a second later.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "twinrail/redis/client.h"

namespace twinrail::redis {

class StateTable {
  public:
    // rowOf(key): the row's fields, or nullopt when the row no longer exists.
    using RowSource = std::function<std::optional<Fields>(const std::string& key)>;
    using KeySource = std::function<std::vector<std::string>()>;

    StateTable(boost::asio::io_context& io, Connection& client, std::string table, char separator,
               RowSource rowOf, KeySource allKeys);

    void markDirty(const std::string& key);
    void resyncAll();                            // call from the client's onConnected
    uint64_t errors() const { return errors_; }  // writes Redis refused

  private:
    void scheduleFlush(std::chrono::milliseconds after);
    void writeFailed(const std::string& key, const Value& reply);
    void flush();
    void scanFrom(const std::string& cursor,
                  const std::shared_ptr<std::vector<std::string>>& found);
    void finishResync(const std::vector<std::string>& existing);
    std::string redisKey(const std::string& key) const;

    Connection& client_;
    std::string table_;
    char separator_;
    RowSource rowOf_;
    KeySource allKeys_;
    std::unordered_set<std::string> dirty_;
    boost::asio::steady_timer flushTimer_;
    bool flushArmed_ = false;
    bool resyncing_ = false;
    uint64_t errors_ = 0;
    std::string lastError_;
};

}  // namespace twinrail::redis
