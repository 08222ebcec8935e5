#include "twinrail/redis/config_db.h"

#include "twinrail/common/log.h"

namespace twinrail::redis {
namespace {

// One round trip and a consistent view: every key of every table with its fields.
constexpr const char* kReadTables = R"lua(
local out = {}
for _, pattern in ipairs(ARGV) do
  for _, key in ipairs(redis.call('KEYS', pattern)) do
    table.insert(out, key)
    table.insert(out, redis.call('HGETALL', key))
  end
end
return out
)lua";

constexpr auto kDebounce = std::chrono::milliseconds(100);
constexpr auto kPollWithoutNotifications = std::chrono::seconds(10);

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
                                 char separator, std::vector<std::string> tables, Handler onConfig)
    : reader_(io, endpoint, db, "config reader"),
      subscriber_(io, endpoint, db, "config subscriber"),
      db_(db),
      separator_(separator),
      tables_(std::move(tables)),
      onConfig_(std::move(onConfig)),
      debounce_(io),
      poll_(io) {}

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
                   "); re-reading the config every ",
                   std::chrono::seconds(kPollWithoutNotifications).count(), " s instead");
    }
    polling_ = true;
    poll_.expires_after(kPollWithoutNotifications);
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

void ConfigDbWatcher::readAll() {
    std::vector<std::string> args{"EVAL", kReadTables, "0"};
    for (const auto& t : tables_) args.push_back(t + separator_ + "*");
    bool sent = reader_.command(args, [this](const Value& v) {
        if (v.connectionLost()) return;  // read again on reconnect
        if (v.isError() || v.type != Value::Type::Array) {
            log::error("CONFIG_DB: cannot read config tables: ", v.str);
            return;
        }
        std::vector<std::pair<std::string, Fields>> rows;
        for (size_t i = 0; i + 1 < v.elements.size(); i += 2) {
            Fields fields;
            const auto& flat = v.elements[i + 1].elements;
            for (size_t j = 0; j + 1 < flat.size(); j += 2)
                fields.emplace_back(flat[j].str, flat[j + 1].str);
            rows.emplace_back(v.elements[i].str, std::move(fields));
        }
        onConfig_(rowsToConfigDb(rows, separator_));
    });
    if (!sent) log::debug("CONFIG_DB: reader not connected; will read on reconnect");
}

}  // namespace twinrail::redis
