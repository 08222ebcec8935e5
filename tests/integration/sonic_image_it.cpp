// The SONiC Application Extension image itself (scripts/sonic-package.sh builds it; this
// runs after), on the lab's SONiC layout: on p1-leaf1 the host's hostrouted and pathqd make
// way for the package's container, started from its own entrypoint and supervisord as
// sonic-package-manager runs it, with what a switch gives it (lab/lib sonic_container.h).
// The container's daemons find Redis through database_config.json, reach FRR in the
// switch's bgp container through the Docker socket (nothing else reaches it: bgpd's vty
// port is closed, 202505), keep every host route through the hand-over, withdraw a host
// whose port fails, and stop cleanly (exit 0) leaving the routes. The image is
// TWINRAIL_SONIC_IMAGE (default twinrail:<version of debian/changelog>); it must exist.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "lab_fixture.h"
#include "twinrail/lab/lab_status.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/sonic_container.h"

namespace lab = twinrail::lab;
namespace plan = twinrail::plan;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using twinrail::it::binaries;

namespace {

// SONiC 202505's YANG models (the lab's release) in one folder, as a switch has them in
// /usr/local/yang-models; empty when ../shared is not beside the tree.
std::string releaseModels(const std::string& tag) {
    const fs::path release = fs::path(TWINRAIL_SONIC_RELEASES) / "202505";
    if (!fs::is_directory(release)) return "";
    const fs::path dir = fs::temp_directory_path() / ("twinrail-img-yang-" + tag);
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (const fs::path& from : {release / "generated/yang-models",
                                 release / "sonic-buildimage/src/sonic-yang-models/yang-models"})
        for (const auto& f : fs::directory_iterator(from))
            if (f.path().extension() == ".yang") fs::copy_file(f.path(), dir / f.path().filename());
    return dir.string();
}

std::string image() {
    if (const char* e = std::getenv("TWINRAIL_SONIC_IMAGE")) return e;
    return std::string("twinrail:") + TWINRAIL_VERSION;
}

class SonicImage : public twinrail::it::LabTest {
  protected:
    SonicImage() : LabTest("img") {}
    std::string stateRow(const std::string& node, const std::string& key,
                         const std::string& field) const {
        auto v = redis(node, "6", {"HGET", key, field});
        return v.substr(0, v.find('\n'));
    }
};

}  // namespace

TEST_F(SonicImage, ThePackagesContainerRunsTheLeafAsSonicWould) {
    ASSERT_EQ(lab::run({"docker", "image", "inspect", image()}).rc, 0)
        << "no image " << image() << ": scripts/sonic-package.sh builds it";
    auto built = plan::buildPlan(lab::defaultLabRequest());
    ASSERT_TRUE(std::holds_alternative<plan::Plan>(built));
    lab::PlanLab l(name_, std::get<plan::Plan>(built), binaries(), lab::SonicLayout{});
    ASSERT_NO_THROW(l.up());
    const auto before = table10("p1-leaf1");
    ASSERT_EQ(before.count("10.128.0.2"), 1U);

    // The host's daemons stop (SIGTERM leaves routes and rows); the package's take over.
    for (auto s : {lab::Service::Hostrouted, lab::Service::Pathqd})
        lab::stopService(name_, "p1-leaf1", s, SIGTERM);
    const auto t0 = std::chrono::steady_clock::now();
    const std::string models = releaseModels(name_);
    if (models.empty()) {
        const char* ci = std::getenv("CI");
        ASSERT_FALSE(ci != nullptr && std::string(ci) == "true")
            << "CI=true and ../shared/fixtures/sonic-releases is missing";
        std::cout << "[note] no ../shared: the container's YANG check is not run\n";
    }
    ASSERT_NO_THROW(lab::startTwinrailContainer(name_, "p1-leaf1", image(), models));
    std::cout << "[figure] package container up on p1-leaf1 in "
              << std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - t0)
                     .count()
              << " ms\n";
    const std::string c = lab::twinrailContainerName(name_, "p1-leaf1");
    // Both daemons, in the switch's namespace, least privilege as the units: not root,
    // and pathqd with no capability at all.
    for (auto s : {lab::Service::Hostrouted, lab::Service::Pathqd}) {
        auto pids = lab::servicePids(name_, "p1-leaf1", s);
        ASSERT_EQ(pids.size(), 1U) << lab::serviceName(s);
        std::ifstream status("/proc/" + std::to_string(pids[0]) + "/status");
        std::string text((std::istreambuf_iterator<char>(status)), {});
        EXPECT_EQ(text.find("\nUid:\t0\t"), std::string::npos)
            << lab::serviceName(s) << " runs as root";
        if (s == lab::Service::Pathqd) {
            EXPECT_NE(text.find("\nCapEff:\t0000000000000000\n"), std::string::npos) << text;
        }
    }
    // FRR through Docker: hostrouted's check of FRR, and pathqd's publisher, report ok.
    EXPECT_TRUE(lab::waitUntil(
        [&] { return stateRow("p1-leaf1", "HOST_ROUTE_STATS|global", "frr_config") == "ok"; }, 30s,
        500ms))
        << stateRow("p1-leaf1", "HOST_ROUTE_STATS|global", "frr_config") << "\n"
        << lab::run({"docker", "logs", "--tail", "30", c}).out;
    // The switch's own models reach the container: the leaf's CONFIG_DB passes SONiC's
    // check there, run by the package's CLI against the release's models and its own.
    if (!models.empty()) {
        const std::string cfg = lab::PlanLab::stateDir(name_) + "/p1-leaf1/config_db.json";
        ASSERT_EQ(lab::run({"docker", "cp", cfg, c + ":/tmp/config_db.json"}).rc, 0);
        auto checked =
            lab::run({"docker", "exec", c, "twinrail", "sonic-check", "/tmp/config_db.json"});
        EXPECT_EQ(checked.rc, 0) << checked.out;
        EXPECT_NE(checked.out.find(": valid ("), std::string::npos) << checked.out;
        fs::remove_all(models);
    }
    // No host route was lost in the hand-over, and the hosts still reach each other.
    EXPECT_EQ(table10("p1-leaf1"), before);
    EXPECT_EQ(twinrail::it::pingEachPlane(name_, l.plan()), "");
    // The container's hostrouted acts on a member port failing.
    const std::string member = lab::labPortName(lab::labSonicRecord(name_), "p1-leaf1", "swp1");
    lab::failNode(name_, "p1-leaf1:swp1");
    EXPECT_TRUE(
        lab::waitUntil([&] { return table10("p1-leaf1").count("10.128.0.2") == 0; }, 2s, 10ms));
    lab::restoreNode(name_, binaries(), "p1-leaf1:" + member);
    EXPECT_TRUE(
        lab::waitUntil([&] { return table10("p1-leaf1").count("10.128.0.2") == 1; }, 15s, 100ms));
    // A clean stop: exit 0, routes in place.
    EXPECT_EQ(lab::stopTwinrailContainer(name_, "p1-leaf1"), 0);
    EXPECT_EQ(table10("p1-leaf1").count("10.128.0.2"), 1U);
}
