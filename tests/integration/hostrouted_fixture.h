// A mini fabric (spine s1, leaves l1/l2, hosts h1/h2/h3) with real FRR per switch, plus
// helpers to run hostrouted on a leaf. Each test builds and removes its own fabric.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "twinrail/lab/fabric.h"
#include "twinrail/lab/process.h"
#include "twinrail/lab/redis_server.h"
#include "twinrail/lab/shell.h"

namespace twinrail::it {

using namespace std::chrono_literals;
using lab::waitUntil;

inline bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

class HostroutedFabric : public ::testing::Test {
  protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        fabric_ = std::make_unique<lab::Fabric>(lab::uniquePrefix("tr"));
        dir_ = "/tmp/" + fabric_->prefix() + "-" + info->name();
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
        lab::buildMiniFabric(*fabric_);
    }

    void TearDown() override {
        daemons_.clear();  // stops hostrouted before its namespace goes
        redis_.reset();
        fabric_.reset();
        if (!HasFailure())
            std::filesystem::remove_all(dir_);
        else
            std::cerr << "logs kept in " << dir_ << "\n";
    }

    static nlohmann::json baseConfig(const std::string& ports = "swp3") {
        nlohmann::json cfg;
        cfg["HOSTROUTED"]["global"] = {
            {"keepalive", "0.5"}, {"holdtime", "2"}, {"manage_frr", "true"}};
        cfg["HOSTROUTED_INTERFACE"][ports] = nlohmann::json::object();
        return cfg;
    }

    std::string writeConfig(const nlohmann::json& cfg, const std::string& name = "config.json") {
        std::string path = dir_ + "/" + name;
        std::ofstream(path) << cfg.dump(2);
        return path;
    }

    lab::RedisServer& redis() {
        if (!redis_) {
            redis_ = std::make_unique<lab::RedisServer>(dir_ + "/redis");
            redis_->start();
        }
        return *redis_;
    }

    // Starts hostrouted in `node` and waits for its READY=1. With `ownNotify` false the
    // test's own NOTIFY_SOCKET (from the environment) is passed on, and readiness is the
    // start-up reconcile line instead.
    lab::ChildProcess& startHostrouted(const std::vector<std::string>& args,
                                       const std::string& node = "l1", bool ownNotify = true) {
        std::vector<std::string> argv{
            "ip",           "netns",           "exec",           fabric_->ns(node),
            HOSTROUTED_BIN, "--frr-pathspace", fabric_->ns(node)};
        argv.insert(argv.end(), args.begin(), args.end());
        std::string log =
            dir_ + "/hostrouted-" + node + "-" + std::to_string(daemons_.size()) + ".log";
        daemons_.push_back(
            std::make_unique<lab::ChildProcess>(argv, log, lab::ChildOptions{.notify = ownNotify}));
        auto& d = *daemons_.back();
        if (ownNotify) {
            EXPECT_TRUE(d.waitReady(20s)) << d.log();  // READY=1, as systemd waits for it
        } else {
            EXPECT_TRUE(waitUntil(
                [&d] { return contains(d.log(), "start-up reconcile") || !d.running(); }, 20s));
        }
        return d;
    }

    // `argv` in the node's namespace (no shell): its stdout.
    std::string exec(const std::string& node, const lab::Argv& argv) const {
        return fabric_->run(node, argv).out;
    }

    bool routeIn(const std::string& node, const lab::Argv& show, const std::string& what) {
        return contains(exec(node, show), what);
    }

    // The host talks to its gateway, so the leaf learns it as a neighbor.
    void hostSpeaks(const std::string& host, const std::string& gateway) {
        exec(host, {"ping", "-c1", "-W1", gateway});
    }

    std::unique_ptr<lab::Fabric> fabric_;
    std::string dir_;
    std::unique_ptr<lab::RedisServer> redis_;
    std::vector<std::unique_ptr<lab::ChildProcess>> daemons_;
};

}  // namespace twinrail::it
