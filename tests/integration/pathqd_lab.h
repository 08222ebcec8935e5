// The dual-spine fabric (s1, s2, l1, l2, h1, h2) with real FRR, every fabric port shaped
// to 100 Mbit/s (so utilisation and queues mean something on veth) and marking ECN as a
// WRED profile does (lab::shapePort), and pathqd on each switch: what the pathqd namespace
// tests (pathqd_fixture.h), the soak bench and the ECN bench build. No test framework
// here: the caller checks.
#pragma once

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "twinrail/lab/fabric.h"
#include "twinrail/lab/process.h"
#include "twinrail/lab/redis_server.h"
#include "twinrail/lab/shell.h"

namespace twinrail::it {

using namespace std::chrono_literals;

inline constexpr double kLinkMbit = 100;
inline constexpr const char* kFabricPorts[][2] = {{"s1", "swp1"}, {"s1", "swp2"}, {"s2", "swp1"},
                                                  {"s2", "swp2"}, {"l1", "swp1"}, {"l1", "swp2"},
                                                  {"l2", "swp1"}, {"l2", "swp2"}};

class PathqdLab {
  protected:
    // The fabric, shaped, with a fresh log folder named after `what`.
    void buildFabric(const std::string& what) {
        fabric_ = std::make_unique<lab::Fabric>(lab::uniquePrefix("pq"));
        dir_ = "/tmp/" + fabric_->prefix() + "-" + what;
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
        lab::buildDualSpineFabric(*fabric_);
        for (const auto& [node, port] : kFabricPorts)
            lab::shapePort(*fabric_, node, port, kLinkMbit);
    }

    // Everything stopped and removed; the logs too unless `keepLogs` (then it says where).
    void removeFabric(bool keepLogs) {
        load_.reset();
        daemons_.clear();
        redis_.clear();
        fabric_.reset();
        if (dir_.empty()) return;
        if (!keepLogs) {
            std::filesystem::remove_all(dir_);
        } else {
            std::cerr << "logs kept in " << dir_ << "\n";
        }
    }

    static nlohmann::json config(const std::string& role,
                                 nlohmann::json global = nlohmann::json::object()) {
        nlohmann::json cfg;
        // Lab scale: 100 Mbit/s links, a 20 ms queue counts as full congestion.
        cfg["PATHQD"]["global"] = {{"reference_mbps", "100"},
                                   {"queue_ref_us", "20000"},
                                   {"latency_ref_us", "10000"},
                                   {"min_hold_ms", "2000"},
                                   {"raise_hold_ms", "5000"}};
        for (auto it = global.begin(); it != global.end(); ++it)
            cfg["PATHQD"]["global"][it.key()] = it.value();
        cfg["PATHQD_PORT"]["swp1"] = {{"role", role}};
        cfg["PATHQD_PORT"]["swp2"] = {{"role", role}};
        return cfg;
    }

    lab::RedisServer& redisFor(const std::string& node) {
        auto& r = redis_[node];
        if (!r) {
            r = std::make_unique<lab::RedisServer>(dir_ + "/redis-" + node);
            r->start();
        }
        return *r;
    }

    // pathqd `bin` in `node`'s namespace with `cfg`; the caller waits for it to be ready.
    lab::ChildProcess& launchPathqd(const std::string& bin, const std::string& node,
                                    const nlohmann::json& cfg, bool withRedis,
                                    const std::vector<std::string>& extra = {}) {
        std::string path = dir_ + "/pathqd-" + node + ".json";
        std::ofstream(path) << cfg.dump(2);
        std::vector<std::string> argv{
            "ip", "netns",           "exec",           fabric_->ns(node), bin, "--config",
            path, "--frr-pathspace", fabric_->ns(node)};
        if (withRedis) argv.insert(argv.end(), {"--redis-socket", redisFor(node).socket()});
        argv.insert(argv.end(), extra.begin(), extra.end());
        std::string log = dir_ + "/pathqd-" + node + "-" + std::to_string(daemons_.size()) + ".log";
        daemons_.push_back(
            std::make_unique<lab::ChildProcess>(argv, log, lab::ChildOptions{.notify = true}));
        return *daemons_.back();
    }

    std::map<std::string, int> weights(const std::string& node, const std::string& prefix) {
        const char* family = prefix.find(':') != std::string::npos ? "-6" : "-4";
        return lab::parseRouteWeights(
            fabric_->run(node, {"ip", family, "route", "show", prefix}).out);
    }

    // Whether `node` has at least `paths` BGP paths to `prefix`, each carrying a link
    // bandwidth: until then a 50:50 split may be plain ECMP, and the spines' first
    // publish is still to come (and would rewrite the kernel's route).
    bool linkBandwidthOnEveryPath(const std::string& node, const std::string& prefix,
                                  size_t paths = 2) {
        const char* afi = prefix.find(':') != std::string::npos ? "ipv6" : "ipv4";
        auto json = nlohmann::json::parse(
            fabric_->vtysh(node, std::string("show bgp ") + afi + " unicast " + prefix + " json"),
            nullptr, false);
        if (json.is_discarded() || !json.contains("paths") || json["paths"].size() < paths)
            return false;
        for (const auto& path : json["paths"]) {
            const auto* ext =
                path.contains("extendedCommunity") ? &path["extendedCommunity"] : nullptr;
            if (!ext || !ext->contains("string") || !(*ext)["string"].is_string() ||
                (*ext)["string"].get<std::string>().find("LB:") == std::string::npos)
                return false;
        }
        return true;
    }

    // The next hops' devices of `prefix` on `node`, in the route's order.
    std::vector<std::string> devicesInOrder(const std::string& node, const std::string& prefix) {
        const char* family = prefix.find(':') != std::string::npos ? "-6" : "-4";
        std::string text = fabric_->run(node, {"ip", family, "route", "show", prefix}).out;
        std::vector<std::string> out;
        for (size_t at = text.find(" dev "); at != std::string::npos;
             at = text.find(" dev ", at + 5)) {
            std::istringstream w(text.substr(at + 5));
            std::string dev;
            w >> dev;
            out.push_back(dev);
        }
        return out;
    }

    // Share of `port` in the weights of `prefix` on `node`, in percent.
    double share(const std::string& node, const std::string& prefix, const std::string& port) {
        auto w = weights(node, prefix);
        double total = 0;
        for (const auto& [p, v] : w) total += v;
        return total > 0 && w.count(port) ? 100.0 * w[port] / total : -1;
    }

    // Bulk TCP from h1 to h2 (iperf3, `flows` flows), running until stopLoad().
    void startLoad(int seconds = 600, int flows = 8) {
        fabric_->run("h2", {"iperf3", "-s", "-D", "-1"});
        lab::waitUntil(
            [this] {
                return fabric_->run("h2", {"ss", "-ltn"}).out.find(":5201 ") != std::string::npos;
            },
            5s);
        load_ = std::make_unique<lab::ChildProcess>(
            std::vector<std::string>{"ip", "netns", "exec", fabric_->ns("h1"), "iperf3", "-c",
                                     "10.2.2.10", "-t", std::to_string(seconds), "-P",
                                     std::to_string(flows)},
            dir_ + "/iperf.log");
    }
    void stopLoad() { load_.reset(); }

    std::string stat(const std::string& node, const std::string& field) {
        auto out = redisFor(node).cli(6, {"HGET", "PATHQD_STATS|global", field});
        return out.substr(0, out.find('\n'));
    }

    std::unique_ptr<lab::Fabric> fabric_;
    std::string dir_;
    std::map<std::string, std::unique_ptr<lab::RedisServer>> redis_;
    std::vector<std::unique_ptr<lab::ChildProcess>> daemons_;
    std::unique_ptr<lab::ChildProcess> load_;
};

}  // namespace twinrail::it
