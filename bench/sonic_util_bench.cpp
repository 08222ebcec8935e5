// Utilisation error of pathqd's SONiC counter source at 100 ms sampling against the
// flex-counter cadence: a private redis-server, a simulated syncd port poll writing
// COUNTERS:<oid> at 50% of a 400G port's line rate every 1 s, 2 s and 500 ms (each poll
// 1 ms after the previous one's period, as FlexCounter's wake-up latency adds up), and
// SonicCounterSource read every 100 ms on a real io_context. Each sample's published
// utilisation goes through RateTracker as Daemon::updateLink does, once over the
// inferred poll instants (the new source) and once over the read times (the old method:
// a rate over the 100 ms sample), in the same run. Writes bench/results/sonic_util.json.
//
// usage: sonic_util_bench [out.json] [seconds per cadence, default 60]
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "sonic_counter_source.h"
#include "sonic_redis.h"
#include "twinrail/lab/redis_server.h"
#include "twinrail/quality/quality.h"

namespace it = twinrail::it;
namespace pq = twinrail::pathqd;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kLineBps = 400e9;
constexpr double kTrueUtil = 0.5;
constexpr int kWarmUpPolls = 5;  // the first polls: no instant, then the period is learned
constexpr const char* kOid = "oid:0x1000000000a00";

nlohmann::json summary(std::vector<double> e) {
    std::sort(e.begin(), e.end());
    double mean = 0;
    for (double v : e) mean += v;
    mean = e.empty() ? 0 : mean / static_cast<double>(e.size());
    double p95 = e.empty() ? 0 : e[static_cast<size_t>(0.95 * static_cast<double>(e.size() - 1))];
    double max = e.empty() ? 0 : e.back();
    auto pts = [](double v) { return std::round(v * 100 * 1e4) / 1e4; };
    auto pct = [](double v) { return std::round(v / kTrueUtil * 100 * 1e3) / 1e3; };
    return {{"mean_abs_util_points", pts(mean)}, {"p95_abs_util_points", pts(p95)},
            {"max_abs_util_points", pts(max)},   {"mean_abs_pct", pct(mean)},
            {"p95_abs_pct", pct(p95)},           {"max_abs_pct", pct(max)}};
}

void loadPort(it::SyncRedis& r) {
    r.cmd({"FLUSHALL"});
    r.select(2);
    r.cmd({"HSET", "COUNTERS_PORT_NAME_MAP", "Ethernet0", kOid});
    r.cmd({"HSET", std::string("COUNTERS:") + kOid, "SAI_PORT_STAT_IF_OUT_OCTETS", "0",
           "SAI_PORT_STAT_IF_OUT_UCAST_PKTS", "0", "SAI_PORT_STAT_IF_OUT_DISCARDS", "0"});
    r.select(0);
    r.cmd({"HSET", "PORT_TABLE:Ethernet0", "speed", "400000", "oper_status", "up"});
}

struct Poll {
    pq::CounterMap map;
    std::string error;
};

// One period, as the daemon runs it: poll, and run the loop until it completes.
Poll pollOnce(pq::SonicCounterSource& source, boost::asio::io_context& io) {
    auto result = std::make_shared<std::optional<Poll>>();
    source.poll({"Ethernet0"}, [result](pq::CounterMap m, std::string e) {
        *result = Poll{std::move(m), std::move(e)};
    });
    io.restart();
    while (!*result) io.run_one_for(50ms);
    return std::move(**result);
}

// One cadence: fresh data, a fresh source, `length` of 100 ms samples.
nlohmann::json runCadence(const twinrail::lab::RedisServer& redis,
                          std::chrono::milliseconds cadence, std::chrono::seconds length) {
    it::SyncRedis db(redis.socket());
    loadPort(db);
    boost::asio::io_context io;
    twinrail::redis::DbLocation counters, appl, state;
    counters.id = 2;
    counters.separator = ':';
    appl.id = 0;
    appl.separator = ':';
    state.id = 6;
    state.separator = '|';
    for (auto* l : {&counters, &appl, &state}) l->endpoint.unixSocket = redis.socket();
    pq::SonicCounterSource source(io, counters, appl, state);

    it::FlexCounterWriter writer(
        redis.socket(), kOid, kTrueUtil * kLineBps / 8,
        {{std::chrono::duration_cast<std::chrono::milliseconds>(length), cadence}}, 1000us);
    twinrail::quality::RateTracker fresh, old;  // over the poll instants / over the reads
    std::optional<twinrail::quality::RateTracker::Rates> lastFresh, lastOld;
    std::vector<double> freshErr, oldErr, freshAll, oldAll;
    auto warmUp = kWarmUpPolls * cadence;
    size_t samples = 0, errors = 0;
    // Connect and read the maps before the first write.
    for (int i = 0; i < 50; ++i) {
        if (pollOnce(source, io).error.empty()) break;
        io.restart();
        io.run_for(100ms);
    }
    writer.start();
    auto next = Clock::now();
    while (Clock::now() < writer.started() + length) {
        next += 100ms;  // the daemon's fixed sampling grid
        auto [m, error] = pollOnce(source, io);
        auto now = Clock::now();
        ++samples;
        if (!error.empty() || m.count("Ethernet0") == 0) {
            ++errors;
        } else {
            const auto& pc = m["Ethernet0"];
            if (auto r = fresh.update(pc.counters, pc.sampledAt)) lastFresh = r;
            if (auto r = old.update(pc.counters, now)) lastOld = r;
            double f = std::abs((lastFresh ? lastFresh->txBps : 0) / kLineBps - kTrueUtil);
            double o = std::abs((lastOld ? lastOld->txBps : 0) / kLineBps - kTrueUtil);
            freshAll.push_back(f);
            oldAll.push_back(o);
            if (now - writer.started() >= warmUp) {
                freshErr.push_back(f);
                oldErr.push_back(o);
            }
        }
        io.restart();
        io.run_until(next);
    }
    writer.stop();
    auto info = source.info("Ethernet0");
    nlohmann::json out = {
        {"cadence_ms", cadence.count()},
        {"poll_drift_us", 1000},
        {"samples", samples},
        {"samples_measured", freshErr.size()},
        {"read_errors", errors},
        {"writer_max_late_ms", std::round(writer.maxLateMs() * 100) / 100},
        {"learned_period_s",
         info && info->pollPeriod ? std::chrono::duration<double>(*info->pollPeriod).count() : 0.0},
        {"warm_up_s", std::chrono::duration<double>(warmUp).count()},
        {"poll_instants", summary(freshErr)},
        {"baseline_rate_over_sample", summary(oldErr)},
        {"poll_instants_with_warm_up", summary(freshAll)},
        {"baseline_with_warm_up", summary(oldAll)}};
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    std::string outPath = argc > 1 ? argv[1] : "bench/results/sonic_util.json";
    std::chrono::seconds length(argc > 2 ? std::stoi(argv[2]) : 60);
    std::string dir = "/tmp/sonic-bench-" + std::to_string(getpid());
    nlohmann::json result;
    {
        twinrail::lab::RedisServer redis(dir);
        redis.start();
        nlohmann::json runs = nlohmann::json::array();
        for (auto cadence : {1000ms, 2000ms, 500ms}) {
            std::cerr << "cadence " << cadence.count() << " ms, " << length.count() << " s\n";
            runs.push_back(runCadence(redis, cadence, length));
            std::cerr << runs.back().dump() << "\n";
        }
        result = {{"what",
                   "utilisation error of the SONiC counter source, 100 ms sampling, 50% "
                   "of a 400G port, real redis-server, simulated flex-counter poll"},
                  {"sample_interval_ms", 100},
                  {"seconds_per_cadence", length.count()},
                  {"warm_up_polls", kWarmUpPolls},
                  {"true_util", kTrueUtil},
                  {"units", "util points = |util - 0.5| x 100; pct = |util - 0.5| / 0.5 x 100"},
                  {"cores", sysconf(_SC_NPROCESSORS_ONLN)},
                  {"cadences", runs}};
    }
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(std::filesystem::path(outPath).parent_path());
    std::ofstream(outPath) << result.dump(2) << "\n";
    std::cout << result.dump(2) << "\n";
    return 0;
}
