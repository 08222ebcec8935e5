// The gtest fixture of the SONiC counter-source tests: a private redis-server, the source
// on a real io_context, polls driven the way the daemon drives them, our own fixture.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>

#include "sonic_counter_source.h"
#include "sonic_redis.h"
#include "twinrail/lab/redis_server.h"

namespace twinrail::it {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using pathqd::CounterMap;
using pathqd::SonicCounterSource;
using pathqd::SonicOptions;
using SteadyClock = std::chrono::steady_clock;

inline const fs::path kShared = TWINRAIL_SHARED_DIR;
inline const fs::path kOwnFixture = TWINRAIL_OWN_SONIC_FIXTURE;
inline const fs::path kLoadPy = kShared / "fixtures/sonic-counters/load.py";
inline constexpr int kAppl = 0, kCounters = 2, kState = 6;

struct PollResult {
    bool done = false;
    CounterMap map;
    std::string error;
};

class SonicSource : public ::testing::Test {
  protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = "/tmp/sonic-it-" + std::to_string(getpid()) + "-" + info->name();
        fs::remove_all(dir_);
        redis_ = std::make_unique<lab::RedisServer>(dir_ + "/redis");
        redis_->start();
        db_ = std::make_unique<SyncRedis>(redis_->socket());
    }
    void TearDown() override {
        source_.reset();
        db_.reset();
        redis_.reset();
        if (!HasFailure()) fs::remove_all(dir_);
    }
    SonicCounterSource& makeSource(SonicOptions opt = {}) {
        auto loc = [this](int id, char sep) {
            redis::DbLocation l;
            l.id = id;
            l.separator = sep;
            l.endpoint.unixSocket = redis_->socket();
            return l;
        };
        source_ = std::make_unique<SonicCounterSource>(io_, loc(kCounters, ':'), loc(kAppl, ':'),
                                                       loc(kState, '|'), opt);
        return *source_;
    }
    void runFor(std::chrono::milliseconds d) {
        io_.restart();
        io_.run_for(d);
    }
    std::shared_ptr<PollResult> startPoll(const std::vector<std::string>& ports) {
        auto r = std::make_shared<PollResult>();
        ++polls_;
        source_->poll(ports, [this, r](CounterMap m, std::string e) {
            ++completions_;
            r->map = std::move(m);
            r->error = std::move(e);
            r->done = true;
        });
        return r;
    }
    PollResult pollOnce(const std::vector<std::string>& ports,
                        std::chrono::milliseconds timeout = 3000ms) {
        auto r = startPoll(ports);
        for (auto until = SteadyClock::now() + timeout; !r->done && SteadyClock::now() < until;)
            runFor(5ms);
        return *r;
    }
    // Polls every 100 ms until a period succeeds (connect, name maps, first reads).
    PollResult pollReady(const std::vector<std::string>& ports,
                         std::chrono::milliseconds timeout = 5000ms) {
        PollResult r;
        for (auto until = SteadyClock::now() + timeout; SteadyClock::now() < until;) {
            r = pollOnce(ports);
            if (r.done && r.error.empty()) return r;
            runFor(100ms);
        }
        return r;
    }
    void loadOwnFixture() {
        db_->cmd({"FLUSHALL"});
        loadMockTable(*db_, kOwnFixture / "appl_db.json", kAppl);
        loadMockTable(*db_, kOwnFixture / "counters_db.json", kCounters);
        loadMockTable(*db_, kOwnFixture / "state_db.json", kState);
    }
    std::vector<std::string> portNames() {
        std::vector<std::string> names;
        for (const auto& [name, oid] : db_->hgetall(kCounters, "COUNTERS_PORT_NAME_MAP"))
            names.push_back(name);
        return names;
    }

    boost::asio::io_context io_;  // first: outlives the source
    std::string dir_;
    std::unique_ptr<lab::RedisServer> redis_;
    std::unique_ptr<SyncRedis> db_;
    std::unique_ptr<SonicCounterSource> source_;
    int polls_ = 0, completions_ = 0;
};

}  // namespace twinrail::it
