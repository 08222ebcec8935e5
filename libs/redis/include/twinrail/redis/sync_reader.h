// A blocking, read-only Redis connection for command-line tools (the daemons use the
// asynchronous Client). Every call has a timeout, and every failure is a message that
// names the endpoint (never the password). With a password it sends AUTH first; with
// TLS it talks through detail::TlsConnection (hiredis 0.14 has no TLS of its own).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "twinrail/redis/client.h"

struct redisContext;
struct redisReply;

namespace twinrail::redis {
namespace detail {
class TlsConnection;
}

class SyncReader {
  public:
    SyncReader();
    ~SyncReader();
    SyncReader(const SyncReader&) = delete;
    SyncReader& operator=(const SyncReader&) = delete;

    // Returns an error message, or nullopt when connected and `db` is selected.
    std::optional<std::string> connect(const Endpoint& endpoint, int db,
                                       std::chrono::milliseconds timeout = std::chrono::seconds(2));
    // Keys matching `pattern` (SCAN, so a large DB is not blocked), sorted.
    std::vector<std::string> keys(const std::string& pattern);
    std::map<std::string, std::string> hash(const std::string& key);
    // The one write the CLI makes (twinrail clear: an operator's request in CONFIG_DB);
    // false, with error() set, when it failed.
    bool hset(const std::string& key, const Fields& fields);
    // The last call's error, if it failed (the result is then empty).
    const std::optional<std::string>& error() const { return error_; }
    // The last failure was Redis refusing these credentials (wrong password, NOAUTH, an
    // ACL without the command or key), not an unreachable server.
    bool authFailed() const { return authFailed_; }

  private:
    redisReply* run(const std::vector<std::string>& args);
    std::string transportError() const;
    void fail(const std::string& what, const redisReply* reply);

    redisContext* ctx_ = nullptr;
    std::unique_ptr<detail::TlsConnection> tls_;
    bool authFailed_ = false;
    std::string where_;
    std::optional<std::string> error_;
};

}  // namespace twinrail::redis
