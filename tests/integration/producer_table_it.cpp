// The APPL_DB producer protocol against a real Redis (libs/redis producer_table.h), judged
// the way SONiC's consumers (swss-common ConsumerStateTable, as orchagent's orchs read
// APPL_DB) take a table: a subscriber on <TABLE>_CHANNEL@<db> is told, and a pop moves
// each changed key from _<TABLE>:<key> into <TABLE>:<key>, deleting first what the
// delete set names. The pop below follows that documented protocol step by step. Also
// the SCAN of one owner's keys. No root: a private redis-server on a unix socket.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <set>

#include "twinrail/lab/redis_server.h"
#include "twinrail/redis/client.h"
#include "twinrail/redis/producer_table.h"

namespace redis = twinrail::redis;
namespace lab = twinrail::lab;
using namespace std::chrono_literals;

namespace {

// ConsumerStateTable's pop: every key of the key set, its delete first, then its fields.
void consumerPop(const lab::RedisServer& r, const std::string& table) {
    std::istringstream keys(r.cli(0, {"SMEMBERS", table + "_KEY_SET"}));
    for (std::string key; std::getline(keys, key);) {
        if (key.empty()) continue;
        r.cli(0, {"SREM", table + "_KEY_SET", key});
        if (r.cli(0, {"SREM", table + "_DEL_SET", key}) == "1\n")
            r.cli(0, {"DEL", table + ":" + key});
        std::istringstream fv(r.cli(0, {"HGETALL", "_" + table + ":" + key}));
        for (std::string f, v; std::getline(fv, f) && std::getline(fv, v);)
            r.cli(0, {"HSET", table + ":" + key, f, v});
        r.cli(0, {"DEL", "_" + table + ":" + key});
    }
}

bool runUntil(boost::asio::io_context& io, const std::function<bool()>& done) {
    const auto end = std::chrono::steady_clock::now() + 10s;
    io.restart();
    while (!done() && std::chrono::steady_clock::now() < end) io.run_for(10ms);
    return done();
}

// A private redis-server for each test, removed with its folder afterwards.
class ProducerTable : public testing::Test {
  protected:
    ProducerTable() { std::filesystem::create_directories(dir); }
    ~ProducerTable() override {
        server.stop();
        std::filesystem::remove_all(dir);
    }
    void SetUp() override {
        server.start();
        at.unixSocket = server.socket();
    }
    const std::string dir = "/tmp/tr-producer-" + std::to_string(::getpid());
    lab::RedisServer server{dir};
    boost::asio::io_context io;
    redis::Endpoint at;
};

}  // namespace

TEST_F(ProducerTable, AConsumerOfTheTableSeesSetsAndDeletes) {
    redis::Client client(io, at, 0, "APPL_DB");
    client.start();
    ASSERT_TRUE(runUntil(io, [&client] { return client.connected(); }));
    redis::ProducerTable table(client, "ACL_RULE_TABLE", 0);

    int execs = 0;
    auto counted = [&execs](const redis::Value& v) {
        EXPECT_EQ(v.type, redis::Value::Type::Array) << "EXEC's reply";
        ++execs;
    };
    ASSERT_TRUE(table.set("TWINRAIL_PIN:PIN_Ethernet0",
                          {{"PRIORITY", "1000"}, {"REDIRECT_ACTION", "fe80::1@Ethernet256"}},
                          counted));
    ASSERT_TRUE(table.set("TWINRAIL_PIN:LOCAL_1", {{"PRIORITY", "8999"}}, counted));
    ASSERT_TRUE(table.set("OTHER:RULE", {{"PRIORITY", "1"}}, counted));
    ASSERT_TRUE(runUntil(io, [&execs] { return execs == 3; }));
    // Nothing in the table itself until the consumer pops: a plain HSET would skip that.
    EXPECT_EQ(server.cli(0, {"EXISTS", "ACL_RULE_TABLE:TWINRAIL_PIN:PIN_Ethernet0"}), "0\n");
    consumerPop(server, "ACL_RULE_TABLE");
    EXPECT_EQ(
        server.cli(0, {"HGET", "ACL_RULE_TABLE:TWINRAIL_PIN:PIN_Ethernet0", "REDIRECT_ACTION"}),
        "fe80::1@Ethernet256\n");

    std::optional<std::vector<std::string>> ours;
    table.keysWithPrefix("TWINRAIL_PIN:", [&ours](bool ok, std::vector<std::string> keys) {
        EXPECT_TRUE(ok);
        ours = std::move(keys);
    });
    ASSERT_TRUE(runUntil(io, [&ours] { return ours.has_value(); }));
    EXPECT_EQ(std::set<std::string>(ours->begin(), ours->end()),
              (std::set<std::string>{"TWINRAIL_PIN:PIN_Ethernet0", "TWINRAIL_PIN:LOCAL_1"}));

    ASSERT_TRUE(table.del("TWINRAIL_PIN:PIN_Ethernet0", counted));
    ASSERT_TRUE(runUntil(io, [&execs] { return execs == 4; }));
    consumerPop(server, "ACL_RULE_TABLE");
    EXPECT_EQ(server.cli(0, {"EXISTS", "ACL_RULE_TABLE:TWINRAIL_PIN:PIN_Ethernet0"}), "0\n");
    EXPECT_EQ(server.cli(0, {"EXISTS", "ACL_RULE_TABLE:OTHER:RULE"}), "1\n");
    EXPECT_EQ(server.cli(0, {"SCARD", "ACL_RULE_TABLE_KEY_SET"}), "0\n");
    client.stop();
}

// Subscribers on the table's channel (how a consumer wakes up) hear each change.
TEST_F(ProducerTable, EachChangeIsPublishedOnTheTablesChannel) {
    redis::Client sub(io, at, 0, "APPL_DB"), pub(io, at, 0, "APPL_DB");
    sub.start();
    pub.start();
    ASSERT_TRUE(runUntil(io, [&] { return sub.connected() && pub.connected(); }));
    int messages = 0;
    bool subscribed = false;
    sub.command({"SUBSCRIBE", "ACL_RULE_TABLE_CHANNEL@0"},
                [&messages, &subscribed](const redis::Value& v) {
                    if (v.type != redis::Value::Type::Array || v.elements.size() != 3) return;
                    subscribed = subscribed || v.elements[0].str == "subscribe";
                    messages += v.elements[0].str == "message" ? 1 : 0;
                });
    ASSERT_TRUE(runUntil(io, [&subscribed] { return subscribed; }));
    redis::ProducerTable table(pub, "ACL_RULE_TABLE", 0);
    table.set("T:R", {{"PRIORITY", "1"}});
    table.del("T:R");
    EXPECT_TRUE(runUntil(io, [&messages] { return messages == 2; })) << messages;
    sub.stop();
    pub.stop();
}
