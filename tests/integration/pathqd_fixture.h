// The pathqd namespace tests' fixture: the dual-spine fabric of pathqd_lab.h, with real
// FRR and pathqd on each switch. Each test builds and removes its own fabric.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "pathqd_lab.h"

namespace twinrail::it {

using namespace std::chrono_literals;
using lab::waitUntil;

// The gtest face of PathqdLab: each test builds and removes its own fabric, and keeps
// the logs when it failed.
class PathqdFabric : public ::testing::Test, protected PathqdLab {
  protected:
    void SetUp() override {
        buildFabric(::testing::UnitTest::GetInstance()->current_test_info()->name());
    }
    void TearDown() override { removeFabric(HasFailure()); }

    lab::ChildProcess& startPathqd(const std::string& node, const nlohmann::json& cfg,
                                   bool withRedis = false,
                                   const std::vector<std::string>& extra = {}) {
        auto& d = launchPathqd(PATHQD_BIN, node, cfg, withRedis, extra);
        EXPECT_TRUE(d.waitReady(10s)) << d.log();  // READY=1, as systemd waits for it
        return d;
    }

    void startAll(nlohmann::json global = nlohmann::json::object()) {
        startPathqd("s1", config("downlink", global), true);
        startPathqd("s2", config("downlink", global));
        startPathqd("l1", config("uplink", global), true);
        startPathqd("l2", config("uplink", global));
    }
};

}  // namespace twinrail::it
