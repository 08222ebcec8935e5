// Reads chosen CONFIG_DB tables into the config_db.json shape
// ({"TABLE": {"key": {"field": "value"}}}) and re-reads them whenever a keyspace
// notification says one changed. A daemon parses the same shape from a file on a
// machine without Redis, so there is one config parser, not two. Where keyspace
// notifications cannot be turned on (CONFIG refused), it re-reads every 10 s instead.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "twinrail/redis/client.h"

namespace twinrail::redis {

class ConfigDbWatcher {
  public:
    using Handler = std::function<void(const nlohmann::json& configDb)>;

    ConfigDbWatcher(boost::asio::io_context& io, const Endpoint& endpoint, int db, char separator,
                    std::vector<std::string> tables, Handler onConfig);
    void start();
    void stop();
    void reload();  // re-read now (SIGHUP)

  private:
    void subscribe();
    void enableNotifications(const Value& current);
    void pollInstead(const std::string& why);
    void scheduleReload();
    void readAll();

    Client reader_;
    Client subscriber_;
    int db_;
    char separator_;
    std::vector<std::string> tables_;
    Handler onConfig_;
    boost::asio::steady_timer debounce_;
    boost::asio::steady_timer poll_;
    bool polling_ = false;
};

// Splits "TABLE|key" on the first separator only (IPv6 keys contain ':').
nlohmann::json rowsToConfigDb(const std::vector<std::pair<std::string, Fields>>& rows,
                              char separator);

}  // namespace twinrail::redis
