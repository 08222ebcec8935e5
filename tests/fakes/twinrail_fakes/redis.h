// Redis as a fake connection: hashes and keys in memory, the commands the daemons send
// (HSET, HDEL, DEL, HGETALL, SCAN with MATCH, PUBLISH) answered as Redis answers them,
// each reply posted on the io_context. A test takes it down and up (setUp) as a Redis
// restart does: outstanding replies then fail with "connection lost".
#pragma once

#include <boost/asio/post.hpp>
#include <map>
#include <string>
#include <vector>

#include "twinrail/redis/client.h"

namespace twinrail::fakes {

class FakeRedis final : public redis::Connection {
  public:
    explicit FakeRedis(boost::asio::io_context& io) : io_(io) {}

    void start() override {
        started = true;
        if (up_) announce();
    }
    void stop() override { started = false; }
    bool connected() const override { return started && up_; }
    void onConnected(std::function<void()> fn) override { onConnected_ = std::move(fn); }
    void onDisconnected(std::function<void()> fn) override { onDisconnected_ = std::move(fn); }
    size_t pendingReplies() const override { return pending_; }

    bool command(const std::vector<std::string>& args, redis::ReplyHandler handler) override {
        if (!connected()) return false;
        commands.push_back(args);
        ++pending_;
        redis::Value reply = execute(args);
        boost::asio::post(io_, [this, handler = std::move(handler), reply, epoch = epoch_] {
            --pending_;
            if (!handler) return;
            handler(epoch == epoch_ ? reply : redis::Value::error(redis::Value::kLost));
        });
        return true;
    }

    void setUp(bool up) {
        if (up == up_) return;
        up_ = up;
        ++epoch_;
        if (!up && onDisconnected_) onDisconnected_();
        if (up && started) announce();
    }
    // hashes["HOST_ROUTE_TABLE|10.0.0.1"]["ifname"]
    std::map<std::string, std::map<std::string, std::string>> hashes;
    std::vector<std::vector<std::string>> commands;
    bool started = false;

  private:
    void announce() {
        boost::asio::post(io_, [this] {
            if (connected() && onConnected_) onConnected_();
        });
    }
    static redis::Value integer(long long n) {
        redis::Value v;
        v.type = redis::Value::Type::Integer;
        v.integer = n;
        return v;
    }
    static redis::Value str(std::string s) {
        redis::Value v;
        v.type = redis::Value::Type::String;
        v.str = std::move(s);
        return v;
    }
    static bool matches(const std::string& key, const std::string& pattern) {
        // Only the patterns the daemons use: a literal prefix and a trailing '*'.
        if (!pattern.empty() && pattern.back() == '*')
            return key.rfind(pattern.substr(0, pattern.size() - 1), 0) == 0;
        return key == pattern;
    }
    redis::Value execute(const std::vector<std::string>& a) {
        const std::string& cmd = a.empty() ? std::string() : a[0];
        if (cmd == "HSET" && a.size() >= 4 && a.size() % 2 == 0) {
            long long added = 0;
            for (size_t i = 2; i + 1 < a.size(); i += 2)
                added += hashes[a[1]].insert_or_assign(a[i], a[i + 1]).second ? 1 : 0;
            return integer(added);
        }
        if (cmd == "HDEL" && a.size() >= 3) {
            long long n = 0;
            for (size_t i = 2; i < a.size(); ++i)
                n += static_cast<long long>(hashes[a[1]].erase(a[i]));
            if (hashes[a[1]].empty()) hashes.erase(a[1]);
            return integer(n);
        }
        if (cmd == "DEL") {
            long long n = 0;
            for (size_t i = 1; i < a.size(); ++i) n += static_cast<long long>(hashes.erase(a[i]));
            return integer(n);
        }
        if (cmd == "HGETALL" && a.size() == 2) {
            redis::Value v;
            v.type = redis::Value::Type::Array;
            if (auto it = hashes.find(a[1]); it != hashes.end()) {
                for (const auto& [f, val] : it->second) {
                    v.elements.push_back(str(f));
                    v.elements.push_back(str(val));
                }
            }
            return v;
        }
        if (cmd == "SCAN" && a.size() >= 2) {
            std::string pattern = "*";
            for (size_t i = 2; i + 1 < a.size(); ++i)
                if (a[i] == "MATCH") pattern = a[i + 1];
            redis::Value keys;
            keys.type = redis::Value::Type::Array;
            for (const auto& [k, h] : hashes)
                if (matches(k, pattern)) keys.elements.push_back(str(k));
            redis::Value v;
            v.type = redis::Value::Type::Array;
            v.elements = {str("0"), keys};
            return v;
        }
        if (cmd == "PUBLISH") return integer(0);
        return redis::Value::error("ERR unknown command '" + cmd + "' (fake)");
    }

    boost::asio::io_context& io_;
    bool up_ = true;
    uint64_t epoch_ = 0;
    size_t pending_ = 0;
    std::function<void()> onConnected_, onDisconnected_;
};

}  // namespace twinrail::fakes
