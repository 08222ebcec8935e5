#include "twinrail/redis/producer_table.h"

#include <memory>

namespace twinrail::redis {

ProducerTable::ProducerTable(Connection& client, std::string table, int dbId)
    : client_(client),
      table_(std::move(table)),
      channel_(table_ + "_CHANNEL@" + std::to_string(dbId)) {}

bool ProducerTable::set(const std::string& key, const Fields& fields, ReplyHandler done) {
    if (!client_.connected() || fields.empty()) return false;
    std::vector<std::string> hset{"HSET", "_" + table_ + ":" + key};
    for (const auto& [f, v] : fields) hset.insert(hset.end(), {f, v});
    client_.command({"MULTI"});
    client_.command({"SADD", table_ + "_KEY_SET", key});
    client_.command(hset);
    client_.command({"PUBLISH", channel_, "G"});
    return client_.command({"EXEC"}, std::move(done));
}

bool ProducerTable::del(const std::string& key, ReplyHandler done) {
    if (!client_.connected()) return false;
    client_.command({"MULTI"});
    client_.command({"SADD", table_ + "_KEY_SET", key});
    client_.command({"SADD", table_ + "_DEL_SET", key});
    client_.command({"DEL", "_" + table_ + ":" + key});
    client_.command({"PUBLISH", channel_, "G"});
    return client_.command({"EXEC"}, std::move(done));
}

void ProducerTable::keysWithPrefix(
    const std::string& prefix, const std::function<void(bool, std::vector<std::string>)>& done) {
    scanFrom("0", table_ + ":" + prefix + "*", std::make_shared<std::vector<std::string>>(), done);
}

void ProducerTable::scanFrom(const std::string& cursor, const std::string& pattern,
                             const std::shared_ptr<std::vector<std::string>>& found,
                             const std::function<void(bool, std::vector<std::string>)>& done) {
    const size_t skip = table_.size() + 1;
    const bool sent =
        client_.command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"},
                        [this, alive = std::weak_ptr<bool>(alive_), pattern, found, done,
                         skip](const Value& reply) {
                            if (alive.expired()) return;  // the table is gone: nobody to tell
                            if (reply.type != Value::Type::Array || reply.elements.size() != 2 ||
                                reply.elements[1].type != Value::Type::Array)
                                return done(false, {});
                            for (const auto& k : reply.elements[1].elements)
                                if (k.str.size() > skip) found->push_back(k.str.substr(skip));
                            const std::string next = reply.elements[0].str;
                            if (next == "0") return done(true, std::move(*found));
                            scanFrom(next, pattern, found, done);
                        });
    if (!sent) done(false, {});
}

}  // namespace twinrail::redis
