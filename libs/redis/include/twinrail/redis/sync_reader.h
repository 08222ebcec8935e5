// A blocking, read-only Redis connection for command-line tools (the daemons use the
// asynchronous Client). Every call has a timeout, and every failure is a message that
// names the endpoint.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "twinrail/redis/client.h"

struct redisContext;

namespace twinrail::redis {

class SyncReader {
  public:
    SyncReader() = default;
    ~SyncReader();
    SyncReader(const SyncReader&) = delete;
    SyncReader& operator=(const SyncReader&) = delete;

    // Returns an error message, or nullopt when connected and `db` is selected.
    std::optional<std::string> connect(const Endpoint& endpoint, int db,
                                       std::chrono::milliseconds timeout = std::chrono::seconds(2));
    // Keys matching `pattern` (SCAN, so a large DB is not blocked), sorted.
    std::vector<std::string> keys(const std::string& pattern);
    std::map<std::string, std::string> hash(const std::string& key);
    // The last call's error, if it failed (the result is then empty).
    const std::optional<std::string>& error() const { return error_; }

  private:
    redisContext* ctx_ = nullptr;
    std::string where_;
    std::optional<std::string> error_;
};

}  // namespace twinrail::redis
