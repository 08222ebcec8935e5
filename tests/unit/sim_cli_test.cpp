// twinrail-sim as scripts run it: the --json object's fields, and the exit codes of bad
// input (64 usage, 65 data, 78 a plan file refused). The plan is the planner's, written here.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "twinrail/plan/plan.h"

namespace plan = twinrail::plan;
namespace fs = std::filesystem;

namespace {

struct SimRun {
    int code = -1;
    std::string out;
};

SimRun sim(const std::string& args) {
    SimRun r;
    std::string cmd = std::string(TWINRAIL_SIM_BIN) + " " + args + " 2>/dev/null";
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
    int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

class SimCli : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("sim-cli-" + std::to_string(::getpid()));
        fs::create_directories(dir_);
        plan::Request r;
        r.gpus = 32;
        r.gpusPerServer = 2;
        r.leafModel = {"test-16x400G", 16, 400, {1, 2}};
        r.spinesPerPlane = 4;
        std::ofstream(dir_ / "plan.json") << plan::toJson(std::get<plan::Plan>(plan::buildPlan(r)));
        std::ofstream(dir_ / "bad.json") << "{\"version\": 3}";
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string planArg() const { return "--plan " + (dir_ / "plan.json").string(); }
    fs::path dir_;
};

}  // namespace

TEST_F(SimCli, JsonCarriesEveryFigureAsMedianAndP95) {
    SimRun r = sim(planArg() + " --pattern permutation --mode ecmp --seeds 3 --json");
    ASSERT_EQ(r.code, 0) << r.out;
    auto j = nlohmann::json::parse(r.out);
    for (const char* k : {"completion_over_ideal", "oversubscribed_uplink_share",
                          "worst_uplink_flows", "max_over_mean_link_load"}) {
        EXPECT_TRUE(j[k].contains("median")) << k;
        EXPECT_TRUE(j[k].contains("p95")) << k;
    }
    EXPECT_TRUE(j.contains("seconds"));
    EXPECT_TRUE(j.contains("max_rss_mb"));
    // the same seeds, the same numbers
    auto again = nlohmann::json::parse(
        sim(planArg() + " --pattern permutation --mode ecmp --seeds 3 --json").out);
    EXPECT_EQ(j["completion_over_ideal"], again["completion_over_ideal"]);
}

TEST_F(SimCli, BadInputExitsWithItsSysexitsCode) {
    EXPECT_EQ(sim(planArg() + " --pattern permutation --mode hashing").code, 64);
    EXPECT_EQ(sim(planArg() + " --pattern permutation --mode ecmp --fail cable:x").code, 64);
    EXPECT_EQ(sim(planArg() + " --pattern permutation --mode ecmp --seeds 0").code, 64);
    EXPECT_EQ(sim(planArg() + " --pattern permutation --mode ecmp --fail leaf:p9-leaf1").code, 65);
    EXPECT_EQ(sim("--plan " + (dir_ / "none.json").string() + " --pattern mix --mode ecmp").code,
              78);
    EXPECT_EQ(sim("--plan " + (dir_ / "bad.json").string() + " --pattern mix --mode ecmp").code,
              78);
}
