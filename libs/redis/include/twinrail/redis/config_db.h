// Reads chosen CONFIG_DB tables into the config_db.json shape
// ({"TABLE": {"key": {"field": "value"}}}) and re-reads them whenever a keyspace
// notification says one changed. A daemon parses the same shape from a file on a
// machine without Redis, so there is one config parser, not two. Where keyspace
// notifications cannot be turned on (CONFIG refused), or PSUBSCRIBE is refused, it
// re-reads every 10 s instead. It needs no EVAL and no KEYS: a read is SCAN per table,
// then every row's HGETALL inside one MULTI/EXEC (one consistent view of the rows), so
// it runs as an ACL user scoped to its tables (docs/redis-acl.md).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "twinrail/redis/client.h"

namespace twinrail::redis {

class ConfigDbWatcher {
  public:
    using Handler = std::function<void(const nlohmann::json& configDb)>;

    ConfigDbWatcher(boost::asio::io_context& io, const Endpoint& endpoint, int db, char separator,
                    std::vector<std::string> tables, Handler onConfig,
                    std::chrono::milliseconds pollEvery = std::chrono::seconds(10));
    void start();
    void stop();
    void reload();  // re-read now (SIGHUP)

  private:
    void subscribe();
    void enableNotifications(const Value& current);
    void pollInstead(const std::string& why);
    void scheduleReload();
    void readAll();
    struct Read;
    void scanTables(const std::shared_ptr<Read>& read, const std::string& cursor);
    void fetchRows(const std::shared_ptr<Read>& read);

    Client reader_;
    Client subscriber_;
    int db_;
    char separator_;
    std::vector<std::string> tables_;
    Handler onConfig_;
    boost::asio::steady_timer debounce_;
    boost::asio::steady_timer poll_;
    std::chrono::milliseconds pollEvery_;
    bool polling_ = false;
};

// Splits "TABLE|key" on the first separator only (IPv6 keys contain ':').
nlohmann::json rowsToConfigDb(const std::vector<std::pair<std::string, Fields>>& rows,
                              char separator);

}  // namespace twinrail::redis
