// The lab as CI runs it: up (after a simulated crash left debris), every NIC reaches
// every other NIC through each plane, a leaf fails under traffic and every flow carries
// on through the other plane, the leaf returns, down leaves nothing behind.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "lab_fixture.h"
#include "twinrail/lab/lab_status.h"
#include "twinrail/lab/measure.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/shell.h"

namespace lab = twinrail::lab;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

using twinrail::it::binaries;
using twinrail::it::labName;
using twinrail::it::leftovers;
using twinrail::it::pingAllPlanes;

class LabSmoke : public ::testing::Test {
  protected:
    void TearDown() override {
        lab::PlanLab::down(name_);
        EXPECT_TRUE(leftovers(name_).empty());
    }
    std::string name_ = labName();
};

}  // namespace

TEST_F(LabSmoke, UpReachFailALeafRestoreDown) {
    // Debris of a crashed run: a namespace and a state directory of the same name.
    lab::shOk("ip netns add " + lab::PlanLab::nsPrefix(name_) + "p1-leaf1");
    fs::create_directories(lab::PlanLab::stateDir(name_) + "/p1-leaf1");

    auto built = twinrail::plan::buildPlan(lab::defaultLabRequest());
    ASSERT_TRUE(std::holds_alternative<twinrail::plan::Plan>(built));
    lab::PlanLab l(name_, std::get<twinrail::plan::Plan>(built), binaries());
    ASSERT_NO_THROW(l.up());

    auto status = lab::labStatus(name_);
    EXPECT_TRUE(status["healthy"].get<bool>()) << status.dump(2);
    for (const auto& sw : status["switches"]) {
        if (sw["role"] == "leaf") {
            EXPECT_EQ(sw["host_routes"], 2) << sw.dump();
        }
    }
    EXPECT_EQ(pingAllPlanes(name_, l.plan()), "") << "unreachable out of these ports";

    // p1-leaf1 carries rail 1 of plane 1: srv1-nic1 and srv2-nic1 hang off it.
    const std::vector<lab::FlowPair> pairs{
        {"srv1-nic2", "srv1-nic1"}, {"srv1-nic1", "srv1-nic2"}, {"srv2-nic1", "srv1-nic1"}};
    auto reports = lab::measureDuring(
        name_, binaries(), pairs, [this] { lab::failNode(name_, "p1-leaf1"); }, 6);
    std::cout << lab::describeMeasurement(reports);
    for (const auto& r : reports) {
        ASSERT_FALSE(r.contains("error")) << r.dump();
        EXPECT_EQ(r["flows"], 16u) << r["pair"];
        EXPECT_EQ(r["flows_not_recovered"], 0)
            << r["pair"] << ": a flow stayed on the failed plane";
    }
    // The failed plane is gone for rail 1; plane 2 still reaches everyone.
    status = lab::labStatus(name_);
    for (const auto& n : status["nics"]) EXPECT_EQ(n["peers_unreachable"], 0) << n.dump();

    lab::restoreNode(name_, binaries(), "p1-leaf1");
    EXPECT_TRUE(
        lab::waitUntil([this] { return lab::labStatus(name_)["healthy"].get<bool>(); }, 60s, 1s))
        << lab::labStatus(name_).dump(2);
    EXPECT_EQ(pingAllPlanes(name_, l.plan()), "") << "after the leaf came back";

    // The operator CLI against a leaf's and a spine's Redis: table, JSON, and a stopped daemon.
    auto cli = [this](const std::string& node, const std::string& args) {
        return lab::sh(std::string(TWINRAIL_BIN) + " --redis-socket " +
                       lab::PlanLab::stateDir(name_) + "/" + node + "/redis.sock " + args);
    };
    auto table = cli("p1-leaf1", "show host-routes --family 4");
    EXPECT_EQ(table.rc, 0) << table.err;
    EXPECT_NE(table.out.find("10.128.0.2 "), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("10.128.0.3 "), std::string::npos) << table.out;
    auto rows = nlohmann::json::parse(
        cli("p1-leaf1", "--json show host-routes --interface swp1").out, nullptr, false);
    ASSERT_TRUE(rows.is_array());
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0]["host"], "10.128.0.2");
    auto ports =
        nlohmann::json::parse(cli("p1-spine2", "--json show path-quality").out, nullptr, false);
    ASSERT_TRUE(ports.is_array());
    EXPECT_EQ(ports.size(), 2u);
    lab::inNode(name_, "p1-spine2", "pkill -x pathqd");
    EXPECT_TRUE(
        lab::waitUntil([&cli] { return cli("p1-spine2", "show path-quality").rc == 3; }, 20s, 1s))
        << "a stopped pathqd must give exit 3 once its state is 10 s old";
    EXPECT_NE(cli("p1-spine2", "show path-quality").err.find("not running"), std::string::npos);

    auto removed = lab::PlanLab::down(name_);
    EXPECT_FALSE(removed.empty());
    EXPECT_EQ(leftovers(name_), std::vector<std::string>{});
}
