// The package against each release's own sonic-package-manager, offline (SONiC's Python, not
// a re-implementation): the manifest parser and the dependency check accept it against
// that release's built-in packages (../shared/fixtures/sonic-releases/spm_check.py), and
// install/upgrade (set_initial_config) leaves a plan's rows as the plan wrote them
// (tests/fixtures/sonic-package/install_config.py runs the release's function).
#include <gtest/gtest.h>

#include "plan_sonic_helpers.h"
#include "sonic_package_helpers.h"
#include "twinrail/plan/sonic_release.h"
#include "twinrail/plan/sonic_target.h"

namespace plan = twinrail::plan;
using namespace twinrail::sonic_package_test;
using twinrail::plansonic_test::build;
using twinrail::plansonic_test::catalogSku;

namespace {

const fs::path kReleases = TWINRAIL_SONIC_RELEASES;

bool haveShared() {
    if (fs::exists(kReleases / "spm_check.py")) return true;
    twinrail::plansonic_test::sharedMissing(kReleases.string());
    return false;
}

}  // namespace

TEST(SonicPackageRelease, EveryReleasesPackageManagerAcceptsTheManifest) {
    if (!haveShared()) return;
    TempDir dir;
    ASSERT_EQ(generate(dir.path()).exit, 0);
    const std::string manifest = (dir.path() / "manifest.json").string();
    for (auto r : plan::sonicReleases()) {
        const std::string name = plan::sonicReleaseName(r);
        RunResult check = run({kPython, (kReleases / "spm_check.py").string(), name, manifest});
        EXPECT_EQ(check.exit, 0) << name << ": " << check.out;
        auto verdict = json::parse(check.out, nullptr, false);
        ASSERT_TRUE(verdict.is_object()) << check.out;
        EXPECT_EQ(verdict["result"], "ok") << name << ": " << check.out;
    }
    // The check is real: the old dependency on the container's name is refused by name.
    json old = json::parse(readFile(manifest));
    old["package"]["depends"] = {"database^1.0.0", "swss^1.0.0", "bgp^1.0.0"};
    writeFile(dir.path() / "old.json", old.dump());
    RunResult refused = run({kPython, (kReleases / "spm_check.py").string(), "202505",
                             (dir.path() / "old.json").string()});
    EXPECT_EQ(refused.exit, 1);
    EXPECT_NE(refused.out.find("requires bgp^1.0.0 but it is not installed"), std::string::npos)
        << refused.out;
}

// Install and upgrade, as each release does them, never change a plan's rows. (Run with
// SONiC's own code, an init-cfg fills only fields a row lacks: deep_update makes init-cfg's
// rows share the running config's values. The package has none all the same.)
TEST(SonicPackageRelease, InstallAndUpgradeLeaveThePlansRows) {
    if (!haveShared()) return;
    TempDir dir;
    ASSERT_EQ(generate(dir.path()).exit, 0);
    json withInit = json::parse(readFile(dir.path() / "manifest.json"));
    withInit["package"]["init-cfg"] = {
        {"HOSTROUTED", {{"global", {{"advertise", "network-table"}, {"max_routes", "1"}}}}}};
    writeFile(dir.path() / "init.json", withInit.dump());
    auto p = build("CX864E-N", 512);
    for (auto r : plan::sonicReleases()) {
        if (plan::sonicFeatureRefusal(p, {r})) continue;  // bond needs 202505 on
        const std::string name = plan::sonicReleaseName(r);
        auto c = plan::sonicSwitchConfig(p, p.switches.front(), catalogSku("CX864E-N"), {r});
        ASSERT_TRUE(std::holds_alternative<plan::SonicSwitchConfig>(c));
        const json overlay = std::get<plan::SonicSwitchConfig>(c).overlay;
        writeFile(dir.path() / "config_db.json", overlay.dump());
        for (const char* manifest : {"manifest.json", "init.json"}) {
            RunResult installed =
                run({kPython, (kSource / "tests/fixtures/sonic-package/install_config.py").string(),
                     (kReleases / name).string(), (dir.path() / manifest).string(),
                     (dir.path() / "config_db.json").string()});
            ASSERT_EQ(installed.exit, 0) << name << ": " << installed.out;
            auto after = json::parse(installed.out);
            for (const char* table : {"HOSTROUTED", "PATHQD"}) {
                for (const auto& [field, value] : overlay[table]["global"].items())
                    EXPECT_EQ(after[table]["global"][field], value)
                        << name << " " << manifest << " " << table << " " << field;
            }
            if (std::string(manifest) == "init.json") {  // a field the plan lacks is filled
                EXPECT_EQ(after["HOSTROUTED"]["global"].value("max_routes", ""), "1");
            }
        }
    }
}
