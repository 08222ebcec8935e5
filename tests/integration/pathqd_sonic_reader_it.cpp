// Contract test of pathqd's SONiC weight reader against a real redis-server: the rows of
// tests/fixtures/pathqd-sonic (APPL_DB, ASIC_DB, COUNTERS_DB in sonic-db-dump's format)
// loaded into Redis DBs 0, 1 and 2 and read through redis::Client give exactly what the
// unit tests get from FakeRedis with the same rows: the SCAN cursors, HGETALL replies and
// the ':'-separated keys of a real server match what the fake answers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "sonic_weight_reader.h"
#include "twinrail/lab/redis_server.h"
#include "twinrail/redis/client.h"
#include "twinrail_fakes/redis.h"

namespace pq = twinrail::pathqd;
namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

const std::string kFixtures = TWINRAIL_PATHQD_SONIC_FIXTURES;

// sonic-db-dump's shape: {"KEY": {"type": "hash", "value": {field: value}}}.
std::map<std::string, std::map<std::string, std::string>> dump(const std::string& file) {
    std::ifstream in(kFixtures + "/" + file);
    auto j = json::parse(in);
    std::map<std::string, std::map<std::string, std::string>> rows;
    for (const auto& [key, entry] : j.items())
        for (const auto& [f, v] : entry["value"].items()) rows[key][f] = v.get<std::string>();
    return rows;
}

// What a read gives, in a form that compares: one line per route and per bad row.
std::vector<std::string> lines(const pq::ForwardedRead& r, const std::string& error) {
    std::vector<std::string> out{"error: " + error};
    for (const auto& route : r.routes) {
        std::string l = route.from + " " + route.dst.str();
        for (const auto& [port, w] : route.weights) l += " " + port + "=" + std::to_string(w);
        out.push_back(l);
    }
    for (const auto& b : r.badRows) out.push_back("bad: " + b);
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string> readAll(boost::asio::io_context& io, pq::ForwardingWeights& reader) {
    std::optional<std::vector<std::string>> got;
    reader.read([&got](pq::ForwardedRead r, std::string error) { got = lines(r, error); });
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (!got && std::chrono::steady_clock::now() < until) io.run_for(20ms);
    EXPECT_TRUE(got.has_value()) << "no answer in 10 s";
    return got.value_or(std::vector<std::string>{});
}

}  // namespace

TEST(PathqdSonicReader, ARealRedisGivesWhatTheFakeGives) {
    const fs::path dir = fs::temp_directory_path() / ("tsr" + std::to_string(::getpid()));
    fs::create_directories(dir);
    twinrail::lab::RedisServer server(dir.string());
    server.start();
    const std::vector<std::pair<int, std::string>> dbs = {
        {0, "appl_db.json"}, {1, "asic_db.json"}, {2, "counters_db.json"}};
    boost::asio::io_context io;
    twinrail::fakes::FakeRedis fakeAppl(io), fakeAsic(io), fakeCounters(io);
    twinrail::fakes::FakeRedis* fakes[] = {&fakeAppl, &fakeAsic, &fakeCounters};
    for (const auto& [db, file] : dbs) {
        for (const auto& [key, row] : dump(file)) {
            twinrail::lab::Argv hset{"HSET", key};
            for (const auto& [f, v] : row) {
                hset.push_back(f);
                hset.push_back(v);
                fakes[db]->hashes[key][f] = v;
            }
            server.cli(db, hset);
        }
    }
    twinrail::redis::Endpoint at;
    at.unixSocket = server.socket();
    twinrail::redis::Client appl(io, at, 0, "APPL_DB"), asic(io, at, 1, "ASIC_DB"),
        counters(io, at, 2, "COUNTERS_DB");
    for (auto* c : {&appl, &asic, &counters}) c->start();
    for (auto* f : fakes) f->start();
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (!(appl.connected() && asic.connected() && counters.connected()) &&
           std::chrono::steady_clock::now() < until)
        io.run_for(20ms);
    ASSERT_TRUE(appl.connected() && asic.connected() && counters.connected());

    for (int release : {202311, 202505}) {
        pq::SonicWeightReader real(io, appl, &asic, &counters, release);
        pq::SonicWeightReader fake(io, fakeAppl, &fakeAsic, &fakeCounters, release);
        auto fromReal = readAll(io, real);
        auto fromFake = readAll(io, fake);
        EXPECT_EQ(fromReal, fromFake) << "release " << release;
        EXPECT_GT(fromReal.size(), 2U) << "the fixture's routes were read";
    }
    // APPL_DB alone (no ASIC_DB, no name map): still the same on both.
    pq::SonicWeightReader realAppl(io, appl, nullptr, nullptr, 202505);
    pq::SonicWeightReader fakeApplOnly(io, fakeAppl, nullptr, nullptr, 202505);
    EXPECT_EQ(readAll(io, realAppl), readAll(io, fakeApplOnly));

    for (auto* c : {&appl, &asic, &counters}) c->stop();
    server.stop();
    fs::remove_all(dir);
}
