#include "twinrail/redis/config_db.h"

#include <algorithm>
#include <boost/asio/post.hpp>

#include "twinrail/common/log.h"

namespace twinrail::redis {
namespace {

constexpr auto kDebounce = std::chrono::milliseconds(100);

}  // namespace

nlohmann::json rowsToConfigDb(const std::vector<std::pair<std::string, Fields>>& rows,
                              char separator) {
    nlohmann::json doc = nlohmann::json::object();
    for (const auto& [redisKey, fields] : rows) {
        auto sep = redisKey.find(separator);
        std::string table = redisKey.substr(0, sep);
        std::string key = sep == std::string::npos ? "" : redisKey.substr(sep + 1);
        nlohmann::json& row = doc[table][key];
        row = nlohmann::json::object();
        for (const auto& [field, value] : fields) row[field] = value;
    }
    return doc;
}

ConfigDbWatcher::ConfigDbWatcher(boost::asio::io_context& io, const Endpoint& endpoint, int db,
                                 char separator, std::vector<std::string> tables, Handler onConfig,
                                 std::chrono::milliseconds pollEvery)
    : reader_(io, endpoint, db, "config reader"),
      subscriber_(io, endpoint, db, "config subscriber"),
      db_(db),
      separator_(separator),
      tables_(std::move(tables)),
      onConfig_(std::move(onConfig)),
      debounce_(io),
      poll_(io),
      pollEvery_(pollEvery) {}

void ConfigDbWatcher::start() {
    reader_.onConnected([this] {
        reader_.command({"CONFIG", "GET", "notify-keyspace-events"},
                        [this](const Value& v) { enableNotifications(v); });
    });
    subscriber_.onConnected([this] { subscribe(); });
    reader_.start();
    subscriber_.start();
}

// Keyspace events are off in a stock redis.conf; SONiC turns them on. Add the flags we
// need without dropping any the operator set.
void ConfigDbWatcher::enableNotifications(const Value& current) {
    if (current.connectionLost()) return;  // asked again on reconnect
    std::string flags =
        !current.isError() && current.elements.size() == 2 ? current.elements[1].str : "";
    bool hasK = flags.find('K') != std::string::npos;
    bool hasA = flags.find('A') != std::string::npos;
    if (hasK && hasA) return readAll();
    reader_.command(
        {"CONFIG", "SET", "notify-keyspace-events", flags + (hasK ? "" : "K") + (hasA ? "" : "A")},
        [this](const Value& r) {
            if (r.connectionLost()) return;
            if (r.isError()) pollInstead(r.str);
            readAll();
        });
}

void ConfigDbWatcher::pollInstead(const std::string& why) {
    if (!polling_) {
        log::error("CONFIG_DB: cannot turn on keyspace notifications (", why,
                   "); re-reading the config every ", pollEvery_.count(), " ms instead");
    }
    polling_ = true;
    poll_.expires_after(pollEvery_);
    poll_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        readAll();
        pollInstead("");
    });
}

void ConfigDbWatcher::stop() {
    debounce_.cancel();
    poll_.cancel();
    reader_.stop();
    subscriber_.stop();
}

void ConfigDbWatcher::reload() {
    scheduleReload();
}

void ConfigDbWatcher::subscribe() {
    for (const auto& table : tables_) {
        std::string pattern =
            "__keyspace@" + std::to_string(db_) + "__:" + table + separator_ + "*";
        subscriber_.command({"PSUBSCRIBE", pattern}, [this](const Value& v) {
            if (v.elements.size() == 4 && v.elements[0].str == "pmessage") scheduleReload();
            // An ACL without this channel answers NOPERM, on which hiredis drops the
            // connection: reconnecting would only be refused again, so poll instead.
            // (Posted: the subscriber cannot be stopped from inside its own callback.)
            if (v.connectionLost() && subscriber_.lastError().rfind("NOPERM", 0) == 0) {
                boost::asio::post(poll_.get_executor(), [this, why = subscriber_.lastError()] {
                    subscriber_.stop();
                    pollInstead("PSUBSCRIBE refused: " + why);
                });
            }
        });
    }
    // Changes made while we were disconnected are picked up by a fresh read.
    scheduleReload();
}

void ConfigDbWatcher::scheduleReload() {
    // Operators write several fields and keys in a row; read once when they are done.
    debounce_.expires_after(kDebounce);
    debounce_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) readAll();
    });
}

struct ConfigDbWatcher::Read {
    size_t table = 0;  // the table being scanned
    std::vector<std::string> keys;
};

void ConfigDbWatcher::readAll() {
    scanTables(std::make_shared<Read>(), "0");
}

void ConfigDbWatcher::scanTables(const std::shared_ptr<Read>& read, const std::string& cursor) {
    if (read->table == tables_.size()) return fetchRows(read);
    bool sent = reader_.command(
        {"SCAN", cursor, "MATCH", tables_[read->table] + separator_ + "*", "COUNT", "1000"},
        [this, read](const Value& v) {
            if (v.connectionLost()) return;  // read again on reconnect
            if (v.type != Value::Type::Array || v.elements.size() != 2) {
                log::error("CONFIG_DB: cannot read config tables: SCAN: ", v.str);
                return;
            }
            for (const auto& k : v.elements[1].elements) read->keys.push_back(k.str);
            if (v.elements[0].str == "0") ++read->table;
            scanTables(read, v.elements[0].str);
        });
    if (!sent) log::debug("CONFIG_DB: reader not connected; will read on reconnect");
}

void ConfigDbWatcher::fetchRows(const std::shared_ptr<Read>& read) {
    auto& keys = read->keys;
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());  // SCAN may repeat keys
    if (keys.empty()) return onConfig_(rowsToConfigDb({}, separator_));
    // All rows in one transaction: the daemon never sees half of an operator's change
    // that landed between two HGETALLs. Nothing else is sent on this connection in
    // between, as these commands go out back to back.
    reader_.command({"MULTI"});
    for (const auto& k : keys) reader_.command({"HGETALL", k});
    bool sent = reader_.command({"EXEC"}, [this, read](const Value& v) {
        if (v.connectionLost()) return;
        if (v.type != Value::Type::Array || v.elements.size() != read->keys.size()) {
            log::error("CONFIG_DB: cannot read config tables: EXEC: ",
                       v.str.empty() ? "transaction aborted" : v.str);
            return;
        }
        std::vector<std::pair<std::string, Fields>> rows;
        for (size_t i = 0; i < v.elements.size(); ++i) {
            const auto& flat = v.elements[i].elements;
            if (v.elements[i].isError()) {
                log::error("CONFIG_DB: cannot read ", read->keys[i], ": ", v.elements[i].str);
                return;
            }
            if (flat.empty()) continue;  // deleted since the SCAN
            Fields fields;
            for (size_t j = 0; j + 1 < flat.size(); j += 2)
                fields.emplace_back(flat[j].str, flat[j + 1].str);
            rows.emplace_back(read->keys[i], std::move(fields));
        }
        onConfig_(rowsToConfigDb(rows, separator_));
    });
    if (!sent) log::debug("CONFIG_DB: reader not connected; will read on reconnect");
}

}  // namespace twinrail::redis
