// Deploying per release: `twinrail sonic-apply` from the factory t1 preset each release's
// own config_samples.py makes, its steps against that release's config/main.py, and what
// it refuses (sonic_apply.h). Without ../shared the tests say so and stop, and fail under
// CI=true.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "plan_sonic_helpers.h"
#include "sonic_release_env.h"
#include "sonic_release_facts.h"
#include "twinrail/plan/sonic_apply.h"
#include "twinrail/plan/sonic_release.h"
#include "twinrail/plan/sonic_target.h"

namespace plan = twinrail::plan;
namespace fs = std::filesystem;
namespace facts = twinrail::sonicrelease_test;
using nlohmann::json;
using twinrail::plansonic_test::build;
using twinrail::plansonic_test::catalogSku;
using twinrail::sonicrelease_test::dirOf;
using twinrail::sonicrelease_test::haveShared;
using twinrail::sonicrelease_test::packageModels;
using twinrail::sonicrelease_test::Ran;
using twinrail::sonicrelease_test::runCommand;
using twinrail::sonicrelease_test::writeJson;

namespace {

class SonicReleaseDeploy : public testing::TestWithParam<plan::SonicRelease> {};

}  // namespace

// The factory config the release itself makes (config_samples.py's t1, run from the
// release's files) takes the plan through `twinrail sonic-apply`: the target passes the
// release's models and the package's, keeps nothing of the preset that SONiC would refuse
// beside the plan, every `config` step is a command of that release's CLI, and applying
// the same plan again to the result changes nothing.
TEST_P(SonicReleaseDeploy, FromTheReleasesT1PresetInSonicsOrder) {
    if (!haveShared()) return;
    const plan::SonicRelease r = GetParam();
    const plan::SonicFeatures& f = plan::sonicFeatures(r);
    const bool bond = f.vlanInterfaceMacAddr || f.staticAnycastGateway;
    auto p = build("CX864E-N", 2048, bond ? plan::Attach::Bond : plan::Attach::Routed);
    const plan::Sku sku = catalogSku("CX864E-N");
    const fs::path tmp =
        fs::temp_directory_path() /
        ("twinrail-apply-" + plan::sonicReleaseName(r) + "-" + std::to_string(::getpid()));
    fs::create_directories(tmp);
    for (const char* name : {"p1-leaf1", "p1-spine1"}) {
        SCOPED_TRACE(std::string(name) + " on " + plan::sonicReleaseName(r));
        const auto& sw = *p.findSwitch(name);
        const auto cfg =
            std::get<plan::SonicSwitchConfig>(plan::sonicSwitchConfig(p, sw, sku, {r}));
        const fs::path dir = tmp / name;
        fs::create_directories(dir);
        writeJson(dir / "config_db.overlay.json", cfg.overlay);
        std::ofstream(dir / "frr.conf") << cfg.frrConf;
        writeJson(dir / "breakouts.json", plan::sonicBreakoutsJson(cfg.breakouts));
        writeJson(dir / "sonic-target.json", plan::sonicTargetJson({r}));
        writeJson(dir / "factory.json", plan::sonicBaseConfigDb(sku));
        Ran preset = runCommand({"/usr/bin/python3", TWINRAIL_APPLY_FIXTURES "/t1_preset.py",
                                 dirOf(r).string(), (dir / "factory.json").string()});
        ASSERT_EQ(preset.exit, 0) << preset.out;
        std::ofstream(dir / "running.json") << preset.out;
        const json running = json::parse(preset.out);
        ASSERT_EQ(running["DEVICE_METADATA"]["localhost"]["bgp_asn"], "65100");
        auto apply = [&](const fs::path& from, const fs::path& out) {
            auto dirs = facts::modelDirs(dirOf(r));
            return runCommand({TWINRAIL_CLI, "sonic-apply", dir.string(), "--running",
                               from.string(), "--out", out.string(), "--yang-dir",
                               dirs.front().string(), "--yang-dir", packageModels().string()});
        };
        Ran first = apply(dir / "running.json", dir / "bundle");
        ASSERT_EQ(first.exit, 0) << first.out;
        const json target = json::parse(facts::slurp(dir / "bundle/config_db.target.json"));
        // Nothing of the preset that SONiC would refuse beside the plan.
        EXPECT_FALSE(target.contains("BGP_NEIGHBOR") && !target["BGP_NEIGHBOR"].empty());
        for (const auto& [key, row] : target["INTERFACE"].items()) {
            const std::string port = key.substr(0, key.find('|'));
            EXPECT_TRUE(cfg.overlay["INTERFACE"].contains(key)) << "left over: INTERFACE|" << key;
            const json members =
                cfg.overlay.contains("VLAN_MEMBER") ? cfg.overlay["VLAN_MEMBER"] : json::object();
            for (const auto& [m, mrow] : members.items())
                EXPECT_NE(m.substr(m.find('|') + 1), port)
                    << "a VLAN member with INTERFACE|" << key;
        }
        for (const auto& [key, row] : target["LOOPBACK_INTERFACE"].items())
            EXPECT_TRUE(cfg.overlay["LOOPBACK_INTERFACE"].contains(key)) << key;
        const auto& md = target["DEVICE_METADATA"]["localhost"];
        EXPECT_EQ(md["bgp_asn"], cfg.overlay["DEVICE_METADATA"]["localhost"]["bgp_asn"]);
        EXPECT_EQ(md["hwsku"], "CX864E-N");  // the switch's own fields stay
        for (const auto& [port, row] : cfg.overlay["PORT_QOS_MAP"].items())
            EXPECT_EQ(target["PORT_QOS_MAP"][port]["pfcwd_sw_enable"], "3") << port;
        for (const auto& [base, b] : cfg.breakouts)
            EXPECT_EQ(target["BREAKOUT_CFG"][base]["brkout_mode"], b.mode.text);
        // Every `config` step is one of the release's own commands, as it takes it.
        Ran cli = runCommand({"/usr/bin/python3", TWINRAIL_APPLY_FIXTURES "/cli_check.py",
                              (dirOf(r) / "sonic-utilities/config/main.py").string(),
                              (dir / "bundle/apply.sh").string()});
        EXPECT_EQ(cli.exit, 0) << cli.out;
        const std::string script = facts::slurp(dir / "bundle/apply.sh");
        EXPECT_NE(script.find("'config' 'qos' 'reload'"), std::string::npos);
        EXPECT_LT(script.find("'breakout'"), script.find("'config' 'load'"));
        EXPECT_LT(script.find("'qos' 'reload'"), script.find("'config' 'load'"));
        EXPECT_LT(script.find("'config' 'save'"), script.find("'restart' 'bgp'"));
        EXPECT_FALSE(fs::exists(dir / "bundle/config_db.patch.json")) << "breakouts ahead";
        // The same plan again on the deployed switch (with the buffer pool `config qos
        // reload` made): nothing to delete, no breakout, an empty patch.
        json deployed = target;
        deployed["BUFFER_POOL"]["ingress_lossless_pool"] = {{"mode", "dynamic"},
                                                            {"type", "ingress"}};
        // qos_config.j2's own PORT_QOS_MAP (pfcwd_sw_enable on its lossless TCs "3,4"): a
        // field-by-field merge must not keep it beside the plan's one lossless TC.
        for (auto& [port, row] : deployed["PORT_QOS_MAP"].items())
            if (port != "global") row["pfcwd_sw_enable"] = "3,4";
        writeJson(dir / "deployed.json", deployed);
        Ran again = apply(dir / "deployed.json", dir / "again");
        ASSERT_EQ(again.exit, 0) << again.out;
        EXPECT_EQ(facts::slurp(dir / "again/deletions.txt"), "");
        const json patch = json::parse(facts::slurp(dir / "again/config_db.patch.json"));
        for (const auto& op : patch) {
            EXPECT_EQ(op["op"], "replace") << op.dump();
            EXPECT_NE(op["path"].get<std::string>().find("/pfcwd_sw_enable"), std::string::npos)
                << op.dump();
            EXPECT_EQ(op["value"], "3");
        }
        const json againTarget = json::parse(facts::slurp(dir / "again/config_db.target.json"));
        for (const auto& [port, row] : cfg.overlay["PORT_QOS_MAP"].items())
            EXPECT_EQ(againTarget["PORT_QOS_MAP"][port]["pfcwd_sw_enable"], "3") << port;
        EXPECT_EQ(facts::slurp(dir / "again/apply.sh").find("'breakout'"), std::string::npos);
    }
    fs::remove_all(tmp);
}

INSTANTIATE_TEST_SUITE_P(EachRelease, SonicReleaseDeploy, testing::ValuesIn(plan::sonicReleases()),
                         [](const testing::TestParamInfo<plan::SonicRelease>& i) {
                             return "R" + plan::sonicReleaseName(i.param);
                         });

// A switch on another buffer model than the plan's is refused by name, nothing written.
TEST(SonicReleaseDeploy, ASwitchOnAnotherBufferModelIsRefused) {
    auto p = build("CX864E-N", 512);
    const plan::Sku sku = catalogSku("CX864E-N");
    const auto cfg =
        std::get<plan::SonicSwitchConfig>(plan::sonicSwitchConfig(p, p.switches.front(), sku, {}));
    json running = plan::sonicBaseConfigDb(sku);
    running["DEVICE_METADATA"]["localhost"]["buffer_model"] = "dynamic";
    auto r = plan::sonicApply({running, cfg.overlay, cfg.breakouts, {}, cfg.frrConf});
    ASSERT_TRUE(std::holds_alternative<std::string>(r));
    EXPECT_NE(std::get<std::string>(r).find("the switch runs the dynamic buffer model, the plan "
                                            "was made for traditional"),
              std::string::npos);
    // And a plan port the switch does not have, after the breakouts.
    json other = plan::sonicBaseConfigDb(sku);
    other["PORT"].erase("Ethernet8");
    auto missing = plan::sonicApply({other, cfg.overlay, cfg.breakouts, {}, cfg.frrConf});
    ASSERT_TRUE(std::holds_alternative<std::string>(missing));
    EXPECT_NE(std::get<std::string>(missing).find("Ethernet8"), std::string::npos)
        << std::get<std::string>(missing);
}

// EVPN-MH: nothing in SONiC renders EVPN_ETHERNET_SEGMENT into FRR, so the ESI is in two
// files; a segment whose two ESIs differ (a hand edit of one) is refused at deployment.
TEST(SonicReleaseDeploy, AnEsiThatDiffersBetweenConfigDbAndFrrIsRefused) {
    auto p = build("CX864E-N", 512, plan::Attach::EvpnMh);
    const plan::Sku sku = catalogSku("CX864E-N");
    const plan::SonicOptions master{plan::SonicRelease::Master};
    const auto cfg = std::get<plan::SonicSwitchConfig>(
        plan::sonicSwitchConfig(p, *p.findSwitch("p1-leaf1"), sku, master));
    const json running = plan::sonicBaseConfigDb(sku);
    ASSERT_TRUE(std::holds_alternative<plan::SonicApply>(
        plan::sonicApply({running, cfg.overlay, cfg.breakouts, master, cfg.frrConf})));
    json edited = cfg.overlay;
    const std::string lag = edited["EVPN_ETHERNET_SEGMENT"].begin().key();
    edited["EVPN_ETHERNET_SEGMENT"][lag]["esi"] = "00:11:22:33:44:55:66:00:00:09";
    auto r = plan::sonicApply({running, edited, cfg.breakouts, master, cfg.frrConf});
    ASSERT_TRUE(std::holds_alternative<std::string>(r));
    EXPECT_NE(std::get<std::string>(r).find("EVPN_ETHERNET_SEGMENT|" + lag +
                                            " esi 00:11:22:33:44:55:66:00:00:09, but frr.conf"),
              std::string::npos)
        << std::get<std::string>(r);
}
