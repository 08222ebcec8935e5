// The package's click plugins (packaging/sonic/cli), run with /usr/bin/python3 (Debian's
// python3-click) against a fake DB (tests/fixtures/sonic-package/run_plugin.py): show's
// tables, config's checked writes.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sonic_package_helpers.h"

namespace {

using namespace twinrail::sonic_package_test;

// --- the click plugins, against a fake DB ---------------------------------------------------

json plugin(const std::string& file, const std::vector<std::string>& args,
            const fs::path& db = kFixtures / "fake_db.json") {
    std::vector<std::string> argv = {kPython, (kFixtures / "run_plugin.py").string(),
                                     (kPackaging / "cli" / file).string(), db.string(), "--"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult r = run(argv);
    json result = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(result.is_discarded()) << r.out;
    return result;
}

TEST(SonicCli, ShowHostsSortsAddressesAndFilters) {
    json all = plugin("show_twinrail.py", {"twinrail", "hosts"});
    ASSERT_EQ(all["exit_code"], 0) << all.dump();
    std::string out = all["stdout"];
    auto v4small = out.find("10.128.0.3 "), v4big = out.find("10.128.0.21 "),
         v6 = out.find("fd00:128::21");
    ASSERT_NE(v4small, std::string::npos) << out;
    EXPECT_LT(v4small, v4big);
    EXPECT_LT(v4big, v6);
    EXPECT_NE(out.find("Total hosts: 3"), std::string::npos);

    std::string installed =
        plugin("show_twinrail.py", {"twinrail", "hosts", "--state", "installed"})["stdout"];
    EXPECT_EQ(installed.find("10.128.0.3 "), std::string::npos) << installed;
    std::string vlan =
        plugin("show_twinrail.py", {"twinrail", "hosts", "-i", "Vlan1002"})["stdout"];
    EXPECT_NE(vlan.find("Total hosts: 1"), std::string::npos) << vlan;
    EXPECT_NE(vlan.find("fd00:128::21"), std::string::npos);
}

TEST(SonicCli, ShowQualityOrdersPortsAndNeutralisesControlCharacters) {
    json r = plugin("show_twinrail.py", {"twinrail", "quality"});
    ASSERT_EQ(r["exit_code"], 0) << r.dump();
    std::string out = r["stdout"];
    EXPECT_LT(out.find("Ethernet8 "), out.find("Ethernet16 ")) << out;
    EXPECT_NE(out.find("30/32"), std::string::npos);
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << "an escape sequence reached the terminal";
    EXPECT_NE(out.find("09:30:00Z?[2J"), std::string::npos);
}

TEST(SonicCli, ShowClaimsAndWeightsReadOnlyTheirTables) {
    std::string claims = plugin("show_twinrail.py", {"twinrail", "claims"})["stdout"];
    EXPECT_NE(claims.find("10.128.0.21  Ethernet16"), std::string::npos) << claims;
    EXPECT_NE(claims.find("bound-elsewhere"), std::string::npos);
    std::string weights = plugin("show_twinrail.py", {"twinrail", "weights"})["stdout"];
    EXPECT_NE(weights.find("Ethernet8=25 Ethernet16=75  12"), std::string::npos) << weights;
    EXPECT_EQ(weights.find("NOT_OURS"), std::string::npos);
}

TEST(SonicCli, ShowOnAnEmptyStateDbPrintsHeadersOnly) {
    TempDir dir;
    writeFile(dir.path() / "empty.json", "{\"STATE_DB\": {}}");
    for (const char* table : {"hosts", "claims", "quality", "weights"}) {
        json r = plugin("show_twinrail.py", {"twinrail", table}, dir.path() / "empty.json");
        EXPECT_EQ(r["exit_code"], 0) << table << r.dump();
        EXPECT_NE(r["stdout"].get<std::string>().find("---"), std::string::npos) << table;
    }
}

TEST(SonicCli, ConfigWritesACheckedFieldAndNothingElse) {
    json r = plugin("config_twinrail.py", {"twinrail", "hostrouted", "keepalive", "4"});
    ASSERT_EQ(r["exit_code"], 0) << r.dump();
    json expected = json::parse(readFile(kFixtures / "fake_db.json"))["CONFIG_DB"];
    expected["HOSTROUTED"]["global"]["keepalive"] = "4";
    EXPECT_EQ(r["config_db"], expected);
    json enumValue =
        plugin("config_twinrail.py", {"twinrail", "pathqd", "weight-audit-source", "sonic"});
    EXPECT_EQ(enumValue["exit_code"], 0) << enumValue.dump();
    EXPECT_EQ(enumValue["config_db"]["PATHQD"]["global"]["weight_audit_source"], "sonic");
}

TEST(SonicCli, ConfigRefusesBadValuesNamingTableKeyAndField) {
    const json original = json::parse(readFile(kFixtures / "fake_db.json"))["CONFIG_DB"];
    struct Case {
        std::vector<std::string> args;
        const char* where;
    };
    const std::vector<Case> cases = {
        {{"hostrouted", "keepalive", "-1"}, "HOSTROUTED|global keepalive"},
        {{"hostrouted", "keepalive", "5"}, "HOSTROUTED|global keepalive: holdtime 9 must be"},
        {{"hostrouted", "holdtime", "09"}, "HOSTROUTED|global holdtime"},
        {{"hostrouted", "max-routes", "1e6"}, "HOSTROUTED|global max_routes"},
        {{"hostrouted", "advertise", "network-table;reboot"}, "HOSTROUTED|global advertise"},
        {{"pathqd", "levels", "101"}, "PATHQD|global levels"},
        {{"pathqd", "sample-interval-ms", "9"}, "PATHQD|global sample_interval_ms"},
    };
    for (const auto& c : cases) {
        std::vector<std::string> args = {"twinrail"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        json r = plugin("config_twinrail.py", args);
        EXPECT_EQ(r["exit_code"], 65) << c.where << r.dump();
        EXPECT_EQ(r["stderr"].get<std::string>().rfind(std::string("Error: ") + c.where, 0), 0U)
            << r.dump();
        EXPECT_EQ(r["config_db"], original) << c.where;
    }
}

}  // namespace
