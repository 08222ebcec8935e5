// The planner's SONiC target through the built twinrail-plan: the files --nos sonic writes,
// --nos linux unchanged, and every bad input refused with its exit code and the file named.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "plan_sonic_helpers.h"

namespace fs = std::filesystem;
using nlohmann::json;
using twinrail::plansonic_test::kCatalog;

namespace {

const fs::path kOwn = TWINRAIL_PLAN_SONIC_FIXTURES;

struct Run {
    int rc = -1;
    std::string err;
};

// Runs the built twinrail-plan with `args` (fixed strings of this file, no user input).
Run runPlan(const std::string& args, const fs::path& scratch) {
    const fs::path err = scratch / "stderr.txt";
    const std::string cmd =
        std::string(TWINRAIL_PLAN_BIN) + " " + args + " >/dev/null 2>" + err.string();
    Run r;
    int status = std::system(cmd.c_str());
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream in(err);
    std::stringstream text;
    text << in.rdbuf();
    r.err = text.str();
    return r;
}

std::string slurp(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

fs::path scratchDir(const std::string& name) {
    fs::path dir = fs::temp_directory_path() /
                   ("twinrail-plan-sonic-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

}  // namespace

TEST(PlanSonicCli, WritesTheSonicFilesAndRefusesBadInput) {
    const fs::path dir = scratchDir("cli");
    const std::string base = "--gpus 256 --model CX732Q-N";
    auto ok = runPlan(
        base + " --attach routed --nos sonic --sonic-release 202405 --out " + (dir / "s").string(),
        dir);
    ASSERT_EQ(ok.rc, 0) << ok.err;
    const fs::path leaf = dir / "s/configs/p1-leaf1";
    EXPECT_FALSE(fs::exists(leaf / "config_db.json"));
    auto overlay = json::parse(slurp(leaf / "config_db.overlay.json"));
    EXPECT_EQ(overlay["HOSTROUTED"]["global"]["advertise"], "network-table");
    EXPECT_FALSE(overlay.contains("BREAKOUT_CFG"));  // DPB's own, before the overlay
    EXPECT_EQ(json::parse(slurp(leaf / "breakouts.json"))["Ethernet0"]["brkout_mode"],
              "2x200G[100G]");
    EXPECT_FALSE(fs::exists(leaf / "config_db.patch.json"));
    EXPECT_NE(slurp(leaf / "frr.conf").find("neighbor Ethernet128 interface peer-group FABRIC"),
              std::string::npos);
    // --nos linux is the default, byte for byte.
    ASSERT_EQ(runPlan(base + " --out " + (dir / "d").string(), dir).rc, 0);
    ASSERT_EQ(runPlan(base + " --nos linux --out " + (dir / "l").string(), dir).rc, 0);
    for (const char* f : {"configs/p1-leaf1/frr.conf", "configs/p1-leaf1/config_db.json",
                          "configs/p2-spine1/frr.conf", "plan.json", "cabling.csv"})
        EXPECT_EQ(slurp(dir / "d" / f), slurp(dir / "l" / f)) << f;
    auto missing = runPlan(base + " --nos sonic --hwsku " + (kOwn / "no-such-dir").string() +
                               " --out " + (dir / "x").string(),
                           dir);
    EXPECT_EQ(missing.rc, 66);
    EXPECT_NE(missing.err.find("no-such-dir/port_config.ini: cannot read it"), std::string::npos)
        << missing.err;
    auto hostile = runPlan(base + " --nos sonic --hwsku " + (kOwn / "bad-lane").string() +
                               " --out " + (dir / "x").string(),
                           dir);
    EXPECT_EQ(hostile.rc, 65);
    EXPECT_NE(hostile.err.find("bad-lane/port_config.ini:3:13: lanes \"5,6,x7,8\""),
              std::string::npos)
        << hostile.err;
    EXPECT_FALSE(fs::exists(dir / "x"));
    auto nos = runPlan(base + " --nos junos --out " + (dir / "x").string(), dir);
    EXPECT_EQ(nos.rc, 64);
    EXPECT_NE(nos.err.find("--nos: linux or sonic"), std::string::npos) << nos.err;
    // EVPN-MH: on the release whose models have EVPN_ETHERNET_SEGMENT (master) only.
    auto mh = runPlan(base + " --attach evpn-mh --nos sonic --out " + (dir / "x").string(), dir);
    EXPECT_EQ(mh.rc, 65);
    EXPECT_NE(mh.err.find("--attach evpn-mh on SONiC 202505: EVPN_ETHERNET_SEGMENT has a YANG "
                          "model (sonic-evpn.yang) only on master"),
              std::string::npos)
        << mh.err;
    EXPECT_FALSE(fs::exists(dir / "x"));
    auto mhOk = runPlan(base + " --attach evpn-mh --nos sonic --sonic-release master --out " +
                            (dir / "mh").string(),
                        dir);
    EXPECT_EQ(mhOk.rc, 0) << mhOk.err;
    EXPECT_TRUE(fs::exists(dir / "mh" / "configs" / "p1-leaf1" / "config_db.overlay.json"));
    auto small = runPlan("--gpus 512 --model CX864E-N --nos sonic --hwsku " +
                             (kCatalog / "CX732Q-N").string() + " --out " + (dir / "x").string(),
                         dir);
    EXPECT_EQ(small.rc, 65);
    EXPECT_NE(small.err.find("swp1s2 is lane 2, but Ethernet0 of HWSKU CX732Q-N"),
              std::string::npos)
        << small.err;
    EXPECT_EQ(runPlan(base + " --patch --out " + (dir / "x").string(), dir).rc, 64);
    // A release twinrail is not checked against, and a feature the release lacks: both by
    // name, exit 65, nothing written.
    for (const std::string release : {"202511", "201811", "202611", "x"}) {
        auto r = runPlan(
            base + " --nos sonic --sonic-release " + release + " --out " + (dir / "x").string(),
            dir);
        EXPECT_EQ(r.rc, 65) << release;
        EXPECT_NE(r.err.find("is not one twinrail is checked against (202405, 202411, 202505, "
                             "202605, master)"),
                  std::string::npos)
            << r.err;
    }
    for (const std::string lb : {"ars", "ars-global"}) {
        auto r = runPlan(base + " --lb " + lb + " --nos sonic --sonic-release master --out " +
                             (dir / "x").string(),
                         dir);
        EXPECT_EQ(r.rc, 65) << lb;
        EXPECT_NE(r.err.find("--lb " + lb +
                             " on SONiC master: this release has no YANG model "
                             "for ARS_PROFILE"),
                  std::string::npos)
            << r.err;
    }
    auto oldBond =
        runPlan(base + " --nos sonic --sonic-release 202411 --out " + (dir / "x").string(), dir);
    EXPECT_EQ(oldBond.rc, 65);
    EXPECT_NE(oldBond.err.find("--attach bond on SONiC 202411: a bonded NIC sends to one gateway "
                               "MAC"),
              std::string::npos)
        << oldBond.err;
    EXPECT_FALSE(fs::exists(dir / "x"));
    // --from a plan file: the same SONiC files.
    auto from = runPlan("--from " + (dir / "s/plan.json").string() +
                            " --nos sonic --sonic-release 202405 --out " + (dir / "f").string(),
                        dir);
    ASSERT_EQ(from.rc, 0) << from.err;
    EXPECT_EQ(slurp(dir / "f/configs/p1-leaf1/config_db.overlay.json"),
              slurp(leaf / "config_db.overlay.json"));
    fs::remove_all(dir);
}
