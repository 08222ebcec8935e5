// `twinrail sonic-check` and hostrouted's --check-config on the built binaries (their exit
// codes), and libs/service's YANG check of a daemon's own tables.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "sonic_check_helpers.h"
#include "twinrail/service/yang_check.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace twinrail::sonic_check_test;

namespace {

struct Run {
    int code = -1;
    std::string out;
};

// `cmd` through the shell (the tests' own fixed strings), with stderr in the output.
Run runShell(const std::string& cmd) {
    Run r;
    std::unique_ptr<FILE, int (*)(FILE*)> p(popen((cmd + " 2>&1").c_str(), "r"), pclose);
    char buf[4096];
    while (std::size_t n = fread(buf, 1, sizeof buf, p.get())) r.out.append(buf, n);
    int status = pclose(p.release());
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

Run runCli(const std::string& args) {
    return runShell(std::string(TWINRAIL_CLI) + " sonic-check " + args);
}

// A directory of its own for a test's files, removed with everything in it.
class Scratch {
  public:
    Scratch()
        : dir_(fs::temp_directory_path() / ("twinrail-sonic-check-" + std::to_string(getpid()))) {
        fs::create_directories(dir_);
    }
    ~Scratch() {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    std::string file(const std::string& name, const std::string& text) const {
        std::ofstream(dir_ / name) << text;
        return (dir_ / name).string();
    }

  private:
    fs::path dir_;
};

}  // namespace

// ---- the CLI -------------------------------------------------------------------------

TEST(SonicCheckCli, ExitCodes) {
    Scratch tmp;
    const std::string yang = " --yang-dir " + (kFixture / "yang").string();
    const std::string good = (kFixture / "config_db.json").string();
    auto ok = runCli(good + yang);
    EXPECT_EQ(ok.code, 0) << ok.out;
    auto bad = tmp.file("bad.json", R"({"RAIL_PORT": {"Ethernet0": {"lanes": "1", "mtu": "1"}},
                                        "NOPE": {}})");
    auto r = runCli(bad + yang);
    EXPECT_EQ(r.code, 65);
    EXPECT_NE(r.out.find("RAIL_PORT|Ethernet0: mtu: Unsatisfied range"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("Config tables are missing yang models: dict_keys(['NOPE'])"),
              std::string::npos);
    EXPECT_EQ(runCli(tmp.file("notjson.json", "{") + yang).code, 65);
    EXPECT_EQ(runCli("/nonexistent/config_db.json" + yang).code, 66);
    EXPECT_EQ(runCli(good + " --yang-dir /nonexistent/yang").code, 66);
    EXPECT_EQ(runCli(good + " --base /nonexistent/base.json" + yang).code, 66);
    EXPECT_EQ(runCli("").code, 64);
    EXPECT_EQ(runCli(good + " " + good + yang).code, 64);
    EXPECT_EQ(runCli(good + " --frobnicate" + yang).code, 64);
    EXPECT_EQ(runCli(good + " --yang-dir").code, 64);
    // An overlay that is only valid on its base: its binding points at the base's port.
    auto overlay = tmp.file("overlay.json", R"({"RAIL_BINDING": {"Ethernet0|10.9.9.9": {}}})");
    EXPECT_EQ(runCli(overlay + yang).code, 65);
    EXPECT_EQ(runCli(overlay + " --base " + good + yang).code, 0);
}

// ---- the daemons' --check-config (libs/service) ----------------------------------------

TEST(ServiceYangCheck, ChecksOnlyTheDaemonsTablesAndSaysWhatItSkips) {
    using twinrail::service::checkConfigYang;
    const std::vector<std::string> dirs = {(kFixture / "yang").string()};
    json doc = readJson(kFixture / "config_db.json");
    doc["RAIL_GLOBAL"]["global"]["holdtime"] = "not a number";  // not one of "ours"
    auto ok = checkConfigYang({"RAIL_PORT", "RAIL_BINDING"}, dirs, doc);
    EXPECT_FALSE(ok.error) << *ok.error;
    EXPECT_TRUE(ok.notices.empty());

    doc["RAIL_PORT"]["Ethernet0"]["mtu"] = "10";
    auto bad = checkConfigYang({"RAIL_PORT"}, dirs, doc);
    ASSERT_TRUE(bad.error);
    EXPECT_NE(bad.error->find("RAIL_PORT|Ethernet0: mtu: Unsatisfied range"), std::string::npos)
        << *bad.error;
    EXPECT_EQ(bad.error->find("RAIL_GLOBAL"), std::string::npos) << *bad.error;

    // A daemon's own file has no PORT table: references into it cannot be judged here.
    json own = {{"RAIL_BINDING", {{"Ethernet0|10.0.0.1", {{"vlan", "1"}}}}}};
    auto refs = checkConfigYang({"RAIL_BINDING"}, dirs, own);
    EXPECT_FALSE(refs.error) << *refs.error;
    ASSERT_EQ(refs.notices.size(), 1u);
    EXPECT_EQ(refs.notices[0],
              "YANG: not checked: RAIL_BINDING|Ethernet0|10.0.0.1: port: refers to RAIL_PORT, "
              "which this document does not hold");

    auto noModel = checkConfigYang({"HOSTROUTED"}, dirs, json{{"HOSTROUTED", json::object()}});
    EXPECT_FALSE(noModel.error);
    ASSERT_FALSE(noModel.notices.empty());
    EXPECT_EQ(noModel.notices[0].rfind("YANG check skipped: no YANG model of HOSTROUTED", 0), 0u);

    auto nothing = checkConfigYang({"HOSTROUTED"}, dirs, json{{"OTHER", json::object()}});
    EXPECT_FALSE(nothing.error);
    EXPECT_TRUE(nothing.notices.empty());

    auto missingDir = checkConfigYang({"RAIL_PORT"}, {"/nonexistent/yang"}, doc);
    ASSERT_TRUE(missingDir.error);
    EXPECT_EQ(*missingDir.error, "--yang-dir /nonexistent/yang: no such directory");
}

TEST(ServiceYangCheck, HostroutedCheckConfigExitCodes) {
    Scratch tmp;
    auto file = tmp.file("hostrouted.json", R"({"HOSTROUTED": {"global": {}}})");
    auto run = [&file](const std::string& extra) {
        return runShell(std::string(TWINRAIL_HOSTROUTED) + " --config " + file +
                        " --check-config " + extra);
    };
    auto ok = run("--yang-dir " + (kFixture / "yang").string());
    EXPECT_EQ(ok.code, 0) << ok.out;
    EXPECT_NE(ok.out.find("YANG check skipped: no YANG model of HOSTROUTED"), std::string::npos)
        << ok.out;
    EXPECT_EQ(run("--yang-dir /nonexistent/yang").code, 78);
}
