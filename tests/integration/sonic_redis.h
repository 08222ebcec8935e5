// What the SONiC counter-source tests and bench/sonic_util_bench share: a blocking Redis
// connection of their own (for loading data, the oracle's reads and the simulated
// flex-counter writer: never on the source's loop), a loader for SONiC mock-table JSON,
// and the simulated syncd port poll.
#pragma once

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "twinrail/redis/client.h"

namespace twinrail::it {

class SyncRedis {
  public:
    explicit SyncRedis(const std::string& socket) : ctx_(redisConnectUnix(socket.c_str())) {
        if (ctx_ == nullptr || ctx_->err != 0)
            throw std::runtime_error("cannot connect to " + socket + ": " +
                                     (ctx_ != nullptr ? ctx_->errstr : "out of memory"));
    }
    ~SyncRedis() {
        if (ctx_ != nullptr) redisFree(ctx_);
    }
    SyncRedis(const SyncRedis&) = delete;
    SyncRedis& operator=(const SyncRedis&) = delete;

    redis::Value cmd(const std::vector<std::string>& args) {
        std::vector<const char*> argv;
        std::vector<size_t> lens;
        for (const auto& a : args) {
            argv.push_back(a.c_str());
            lens.push_back(a.size());
        }
        auto* r = static_cast<redisReply*>(
            redisCommandArgv(ctx_, static_cast<int>(args.size()), argv.data(), lens.data()));
        if (r == nullptr) throw std::runtime_error(std::string("redis: ") + ctx_->errstr);
        redis::Value v = redis::valueFromReply(r);
        freeReplyObject(r);
        if (v.isError()) throw std::runtime_error("redis " + args[0] + ": " + v.str);
        return v;
    }
    void select(int db) { cmd({"SELECT", std::to_string(db)}); }
    std::map<std::string, std::string> hgetall(int db, const std::string& key) {
        select(db);
        auto v = cmd({"HGETALL", key});
        std::map<std::string, std::string> h;
        for (size_t i = 0; i + 1 < v.elements.size(); i += 2)
            h[v.elements[i].str] = v.elements[i + 1].str;
        return h;
    }

  private:
    redisContext* ctx_;
};

// {key: {field: value}} into `db`, one HSET per key, values as redis-py writes them
// (JSON numbers as their text, lists ConfigDBConnector's way), empty hashes skipped
// (Redis cannot hold one). Returns the number of keys written.
inline int loadMockTable(SyncRedis& r, const std::filesystem::path& file, int db) {
    std::ifstream in(file);
    auto doc = nlohmann::json::parse(in);
    r.select(db);
    int keys = 0;
    for (const auto& [key, fields] : doc.items()) {
        if (!fields.is_object() || fields.empty()) continue;
        std::vector<std::string> args{"HSET", key};
        for (const auto& [f, v] : fields.items()) {
            std::string text;
            if (v.is_string()) {
                text = v.get<std::string>();
            } else if (v.is_array()) {
                for (const auto& x : v) text += (text.empty() ? "" : ",") + x.get<std::string>();
            } else {
                text = v.dump();
            }
            args.push_back(v.is_array() ? f + "@" : f);
            args.push_back(text);
        }
        r.cmd(args);
        ++keys;
    }
    return keys;
}

// syncd's port poll for one port: every period it takes the counters (the bytes sent so
// far at `bytesPerSec`, so the value is exact for the instant of the write) and writes
// the whole row with one HSET, as FlexCounter does. The cadence follows `segments`
// (duration, period). The rows carry no timestamp, as in SONiC. The thread runs at a
// real-time priority where it may (root), as a device's poll is not held up by the
// host's load; the reader under test is not, as pathqd is not.
class FlexCounterWriter {
  public:
    static constexpr double kPausePps = 2000;
    using Segments = std::vector<std::pair<std::chrono::milliseconds, std::chrono::milliseconds>>;
    // `drift`: added to every period, as syncd's FlexCounter starts each poll one
    // interval after the previous start plus its own wake-up latency.
    FlexCounterWriter(std::string socket, std::string oid, double bytesPerSec, Segments segments,
                      std::chrono::microseconds drift = std::chrono::microseconds(0))
        : socket_(std::move(socket)),
          oid_(std::move(oid)),
          rate_(bytesPerSec),
          segments_(std::move(segments)),
          drift_(drift) {}
    ~FlexCounterWriter() { stop(); }
    FlexCounterWriter(const FlexCounterWriter&) = delete;
    FlexCounterWriter& operator=(const FlexCounterWriter&) = delete;

    void start() {
        start_ = std::chrono::steady_clock::now();
        thread_ = std::thread([this] { run(); });
    }
    void stop() {
        stop_ = true;
        if (thread_.joinable()) thread_.join();
    }
    bool finished() const { return finished_; }
    std::chrono::steady_clock::time_point started() const { return start_; }
    // The cadence at `t` (for the checks); zero after the last segment.
    std::chrono::milliseconds periodAt(std::chrono::steady_clock::time_point t) const {
        auto offset = t - start_;
        std::chrono::steady_clock::duration end{};
        for (const auto& [length, period] : segments_) {
            end += length;
            if (offset < end) return period;
        }
        return std::chrono::milliseconds(0);
    }
    // How late the writes were visible, worst: from the poll's instant to the HSET's reply.
    double maxLateMs() const { return maxLateMs_; }
    bool realtime() const { return realtime_; }

  private:
    void run() {
        sched_param rt{};
        rt.sched_priority = 10;
        realtime_ = pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt) == 0;
        SyncRedis r(socket_);
        r.select(2);
        auto next = start_;
        for (const auto& [length, period] : segments_) {
            auto end = next + length;
            for (; next < end && !stop_; next += period + drift_) {
                std::this_thread::sleep_until(next);
                auto now = std::chrono::steady_clock::now();
                auto bytes = static_cast<uint64_t>(
                    rate_ * std::chrono::duration<double>(now - start_).count());
                // PFC pauses on the lossless priority at kPausePps, as the port's peer
                // holding it back would be counted.
                auto pauses = static_cast<uint64_t>(
                    kPausePps * std::chrono::duration<double>(now - start_).count());
                r.cmd({"HSET", "COUNTERS:" + oid_, "SAI_PORT_STAT_IF_OUT_OCTETS",
                       std::to_string(bytes), "SAI_PORT_STAT_IF_OUT_UCAST_PKTS",
                       std::to_string(bytes / 4096), "SAI_PORT_STAT_IF_OUT_DISCARDS", "0",
                       "SAI_PORT_STAT_IF_IN_OCTETS", std::to_string(bytes / 64),
                       "SAI_PORT_STAT_PFC_3_RX_PKTS", std::to_string(pauses)});
                auto landed = std::chrono::steady_clock::now();
                maxLateMs_ =
                    std::max(maxLateMs_.load(),
                             std::chrono::duration<double, std::milli>(landed - next).count());
            }
        }
        finished_ = true;
    }
    std::string socket_, oid_;
    double rate_;
    Segments segments_;
    std::chrono::microseconds drift_;
    std::chrono::steady_clock::time_point start_;
    std::thread thread_;
    std::atomic<bool> stop_{false}, finished_{false}, realtime_{false};
    std::atomic<double> maxLateMs_{0};
};

}  // namespace twinrail::it
