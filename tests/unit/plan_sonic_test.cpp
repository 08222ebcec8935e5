// The planner's SONiC target: HWSKU reading (good and hostile), port mapping with and
// without breakouts, the overlay rules SONiC enforces, the patch, pathqd's route-maps, the
// Linux target unchanged (the CLI: plan_sonic_cli_test.cpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "config.h"  // pathqd's parser
#include "frr_policy.h"
#include "plan_files.h"
#include "plan_sonic_helpers.h"
#include "sku_dir.h"
#include "twinrail/frr/running_config.h"
#include "twinrail/plan/outputs.h"
#include "twinrail/plan/sonic_sku.h"
#include "twinrail/plan/sonic_target.h"

namespace plan = twinrail::plan;
namespace tool = twinrail::plantool;
namespace fs = std::filesystem;
using nlohmann::json;
using twinrail::plansonic_test::build;
using twinrail::plansonic_test::kCatalog;
using twinrail::plansonic_test::sku;

namespace {

const fs::path kOwn = TWINRAIL_PLAN_SONIC_FIXTURES;
const fs::path kShared = TWINRAIL_SONIC_SHARED_HWSKU;
const fs::path kReleases = TWINRAIL_SONIC_RELEASES;

const plan::Switch& first(const plan::Plan& p, bool spine) {
    for (const auto& sw : p.switches)
        if (sw.spine == spine) return sw;
    throw std::logic_error("no such switch");
}

plan::PortMap mapped(const plan::Sku& s, const plan::Switch& sw) {
    auto m = plan::mapPorts(s, sw);
    if (auto* why = std::get_if<std::string>(&m)) ADD_FAILURE() << *why;
    return std::get<plan::PortMap>(m);
}

plan::SonicSwitchConfig sonic(const plan::Plan& p, const plan::Switch& sw, const plan::Sku& s,
                              plan::SonicRelease release = plan::kSonicDefaultRelease) {
    auto c = plan::sonicSwitchConfig(p, sw, s, {release, plan::SonicBufferModel::Traditional});
    if (auto* why = std::get_if<std::string>(&c)) ADD_FAILURE() << *why;
    return std::get<plan::SonicSwitchConfig>(c);
}

plan::SwitchPort port(const std::string& name, int speedGbps) {
    plan::SwitchPort p;
    p.name = name;
    p.speedGbps = speedGbps;
    return p;
}

// Every port the overlay names (INTERFACE, PATHQD_PORT, UPLINK_PIN keys, VLAN and
// PortChannel members) is a PORT row of the base it is merged onto, or a VLAN member one
// of the overlay's PortChannels: what sonic-yang's leafrefs demand.
void expectPortsExist(const json& overlay, const json& base, const std::string& at) {
    for (const std::string t :
         {"INTERFACE", "PATHQD_PORT", "UPLINK_PIN", "VLAN_MEMBER", "PORTCHANNEL_MEMBER"}) {
        if (!overlay.contains(t)) continue;
        for (const auto& [k, v] : overlay[t].items()) {
            auto bar = k.find('|');
            std::string name = k;
            if (t == "VLAN_MEMBER" || t == "PORTCHANNEL_MEMBER") {
                name = k.substr(bar + 1);
            } else if (bar != std::string::npos) {
                continue;
            }
            const bool lag = t == "VLAN_MEMBER" && overlay.contains("PORTCHANNEL") &&
                             overlay["PORTCHANNEL"].contains(name);
            EXPECT_TRUE(lag || base["PORT"].contains(name)) << at << " " << t << " " << k;
        }
    }
}

std::string iniError(const std::string& text) {
    auto r = plan::parsePortConfigIni(text, "t.ini");
    auto* e = std::get_if<plan::SkuError>(&r);
    return e == nullptr ? "(accepted)" : e->message;
}

}  // namespace

TEST(PlanSonicSku, ReadsItsOwnFixture) {
    auto s = sku(kOwn / "sku-mixed");
    EXPECT_EQ(s.name, "sku-mixed");
    ASSERT_EQ(s.ports.size(), 10U);
    EXPECT_EQ(s.ports[0].name, "Ethernet0");
    EXPECT_EQ(s.ports[0].lanes, (std::vector<int>{41, 42, 43, 44, 45, 46, 47, 48}));
    EXPECT_EQ(s.ports[3].alias, "fp3b");
    EXPECT_EQ(s.ports[3].index, 3);
    EXPECT_EQ(s.ports[3].speedMbps, 200000);
    EXPECT_EQ(s.ports[3].extra.at("fec"), "rs");
    EXPECT_EQ(s.defaultModes.at("Ethernet0").altSpeedsGbps, std::vector<int>{400});
    auto cages = plan::physicalPorts(s);
    ASSERT_EQ(cages.size(), 4U);
    EXPECT_EQ(cages[2].rows.size(), 4U);
    EXPECT_EQ(cages[2].speedMbps(), 800000);
}

TEST(PlanSonicSku, HostileIniNamesFileLineAndColumn) {
    const std::string h = "# name lanes alias index speed\n";
    EXPECT_EQ(iniError(h + "Ethernet0 1,2 a 1 100000\nEthernet4 3,x4 b 2 100000\n"),
              "t.ini:3:11: lanes \"3,x4\": \"x4\" is not a lane number (0-65535)");
    EXPECT_EQ(iniError(h + "Ethernet0 1,2 a 1 100000\nEthernet4 2,3 b 2 100000\n"),
              "t.ini:3:11: lane 2 is already another port's");
    EXPECT_EQ(iniError(h + "Ethernet0 1 a 1 100000\nEthernet0 2 b 2 100000\n"),
              "t.ini:3:1: port Ethernet0 twice");
    EXPECT_EQ(iniError(h + "eth0 1 a 1 100000\n"), "t.ini:2:1: name \"eth0\" is not Ethernet<N>");
    EXPECT_EQ(iniError(h + "Ethernet00 1 a 1 100000\n"),
              "t.ini:2:1: name \"Ethernet00\" is not Ethernet<N>");
    EXPECT_EQ(iniError(h + "Ethernet0 1 a 1 100000 extra\n"),
              "t.ini:2:24: more fields than the 5 columns of the header");
    EXPECT_EQ(iniError(h + "Ethernet0 1 a 1 fast\n"),
              "t.ini:2:17: speed \"fast\" is not a speed in Mb/s");
    EXPECT_EQ(iniError(h + "Ethernet0 1 a;rm 1 100\n"),
              "t.ini:2:13: alias \"a;rm\" is not a port alias");
    EXPECT_EQ(iniError(h + "Ethernet0 1 a\x01 1 100\n"),
              "t.ini:2:14: control character in the file");
    // A row without its index would regroup every cage (found by fuzz/sonic_sku_fuzz).
    EXPECT_EQ(iniError(h + "Ethernet0 1 a 1 100000\nEthernet4 2 b\n"),
              "t.ini:3:1: port Ethernet4 has no index, though the first port has one");
    EXPECT_EQ(iniError("Ethernet0 1 a\nEthernet4 2 b 1\n"),
              "t.ini:2:1: port Ethernet4 has an index, though the first port has none");
    EXPECT_EQ(iniError("# name alias\nEthernet0 a\n"), "t.ini:1:1: the header has no lanes column");
    EXPECT_EQ(iniError("# only prose\n"), "t.ini: no ports");
    EXPECT_EQ(iniError(std::string(2 << 20, 'x')), "t.ini: larger than 1 MiB");
    // No header: SONiC's default columns (name lanes alias index).
    auto ok = plan::parsePortConfigIni("Ethernet0 1,2 fp1 0\n", "t.ini");
    ASSERT_TRUE(std::holds_alternative<std::vector<plan::SkuPort>>(ok));
    EXPECT_EQ(std::get<std::vector<plan::SkuPort>>(ok)[0].index, 0);
}

TEST(PlanSonicSku, HostileHwskuJsonNamesFileAndWhere) {
    // A number past double's range threw out of the parser (fuzz/sonic_sku_fuzz).
    auto huge =
        plan::parseHwskuJson(R"({"interfaces": {"Ethernet0": {"x": 5E555555555}}})", "h.json", {});
    ASSERT_TRUE(std::holds_alternative<plan::SkuError>(huge));
    EXPECT_NE(std::get<plan::SkuError>(huge).message.find("h.json: not usable JSON"),
              std::string::npos);
    auto bad = tool::loadSkuDir(kOwn / "bad-json");
    ASSERT_TRUE(std::holds_alternative<tool::SkuLoadError>(bad));
    EXPECT_NE(std::get<tool::SkuLoadError>(bad).message.find("bad-json/hwsku.json:4:17: not JSON"),
              std::string::npos)
        << std::get<tool::SkuLoadError>(bad).message;
    EXPECT_EQ(std::get<tool::SkuLoadError>(bad).exitCode, 65);
    auto mode = tool::loadSkuDir(kOwn / "bad-mode");
    ASSERT_TRUE(std::holds_alternative<tool::SkuLoadError>(mode));
    EXPECT_NE(std::get<tool::SkuLoadError>(mode).message.find(
                  "interfaces.Ethernet16.default_brkout_mode \"2x400G\": port_config.ini has 4"),
              std::string::npos)
        << std::get<tool::SkuLoadError>(mode).message;
    auto ports = std::get<std::vector<plan::SkuPort>>(
        plan::parsePortConfigIni("# name lanes\nEthernet0 1\n", "p.ini"));
    auto unknown = plan::parseHwskuJson(R"({"interfaces": {"Ethernet9": {}}})", "h.json", ports);
    EXPECT_EQ(std::get<plan::SkuError>(unknown).message,
              "h.json: interfaces.Ethernet9: no such port in port_config.ini");
    auto badMode = plan::parseHwskuJson(
        R"({"interfaces": {"Ethernet0": {"default_brkout_mode": "9x1G;x"}}})", "h.json", ports);
    EXPECT_NE(std::get<plan::SkuError>(badMode).message.find("default_brkout_mode: \"9x1G;x\""),
              std::string::npos);
    auto missing = tool::loadSkuDir(kOwn / "no-such-dir");
    EXPECT_EQ(std::get<tool::SkuLoadError>(missing).exitCode, 66);
    EXPECT_NE(std::get<tool::SkuLoadError>(missing).message.find("port_config.ini: cannot read"),
              std::string::npos);
}

TEST(PlanSonicSku, BreakoutModes) {
    auto m = std::get<plan::BreakoutMode>(plan::parseBreakoutMode("1x800G[400G,200G]"));
    EXPECT_EQ(m.count, 1);
    EXPECT_EQ(m.speedGbps, 800);
    EXPECT_EQ(m.altSpeedsGbps, (std::vector<int>{400, 200}));
    EXPECT_EQ(std::get<plan::BreakoutMode>(plan::parseBreakoutMode("4x200G")).count, 4);
    for (const char* bad : {"0x800G", "9x100G", "4x200", "4x200G[]", "4x200G[400]", "x200G",
                            "4x-200G", "1x400G(4)+2x200G(4)", "4x200G[400G"})
        EXPECT_TRUE(std::holds_alternative<std::string>(plan::parseBreakoutMode(bad))) << bad;
}

TEST(PlanSonicPorts, CatalogModelsMapWithBreakouts) {
    auto big = build("CX864E-N", 2048);
    auto leaf = mapped(sku(kCatalog / "CX864E-N"), first(big, false));
    // 800G cages as shipped (1x800G): hosts need 4x200G, uplinks 2x400G.
    EXPECT_EQ(leaf.names.at("swp1s0"), "Ethernet0");
    EXPECT_EQ(leaf.names.at("swp1s3"), "Ethernet6");
    EXPECT_EQ(leaf.names.at("swp2s1"), "Ethernet10");
    EXPECT_EQ(leaf.names.at("swp33s1"), "Ethernet260");
    // platform.json's own keys, as DPB takes them.
    EXPECT_EQ(leaf.breakouts.at("Ethernet0").mode.text, "4x200G[100G]");
    EXPECT_EQ(leaf.breakouts.at("Ethernet256").mode.text, "2x400G[200G]");
    EXPECT_EQ(leaf.breakouts.at("Ethernet256").speedGbps, 400);
    EXPECT_EQ(leaf.breakouts.size(), 64U);
    auto small = build("CX732Q-N", 1024);
    auto s732 = sku(kCatalog / "CX732Q-N");
    auto leaf732 = mapped(s732, first(small, false));
    EXPECT_EQ(leaf732.names.at("swp1s1"), "Ethernet4");
    EXPECT_EQ(leaf732.breakouts.at("Ethernet0").mode.text, "2x200G[100G]");
    auto spine732 = mapped(s732, first(small, true));
    EXPECT_EQ(spine732.names.at("swp2"), "Ethernet8");  // 1x400G: no breakout needed
    EXPECT_TRUE(spine732.breakouts.empty());
    // An 800G plan on 400G cages is refused, naming the port and the cage.
    auto wrong = plan::mapPorts(s732, first(big, false));
    EXPECT_EQ(std::get<std::string>(wrong),
              "p1-leaf1 port swp1s2 is lane 2, but Ethernet0 of HWSKU CX732Q-N (400G) splits into "
              "2x200G at most");
    // A plan that needs more cages than the SKU has, too.
    plan::Switch sw;
    sw.name = "p1-leaf9";
    sw.ports = {port("swp35", 400)};
    EXPECT_EQ(std::get<std::string>(plan::mapPorts(s732, sw)),
              "p1-leaf9 port swp35 needs front-panel port 35, but HWSKU CX732Q-N has 34");
    // Or a port the SKU has at another speed (33 and 34 are the 10G SFP+ ports).
    sw.ports = {port("swp33", 400)};
    EXPECT_EQ(std::get<std::string>(plan::mapPorts(s732, sw)),
              "p1-leaf9 port swp33 runs at 400G, which Ethernet256 (10G) cannot be split into");
}

TEST(PlanSonicPorts, OwnFixtureUsesExistingSplitsAndDerivesTheRest) {
    auto s = sku(kOwn / "sku-mixed");
    plan::Switch sw;
    sw.name = "t";
    sw.ports = {port("swp1s2", 200), port("swp3s1", 200), port("swp4", 800), port("swp2s1", 400)};
    auto m = plan::mapPorts(s, sw);
    // swp4 at 800G on a cage split 4x200G: a breakout back to 1x800G.
    ASSERT_TRUE(std::holds_alternative<plan::PortMap>(m)) << std::get<std::string>(m);
    const auto& pm = std::get<plan::PortMap>(m);
    EXPECT_EQ(pm.names.at("swp1s2"), "Ethernet4");
    EXPECT_EQ(pm.names.at("swp3s1"), "Ethernet18");
    EXPECT_EQ(pm.names.at("swp4"), "Ethernet24");
    EXPECT_EQ(pm.names.at("swp2s1"), "Ethernet12");
    EXPECT_EQ(pm.breakouts.count("Ethernet16"), 0U);  // already 4x200G
    EXPECT_EQ(pm.breakouts.at("Ethernet24").mode.text, "1x800G[400G]");
    auto cages = plan::physicalPorts(s);
    auto split = std::get<std::vector<plan::SkuPort>>(plan::breakoutPorts(
        cages[0], {std::get<plan::BreakoutMode>(plan::parseBreakoutMode("4x200G")), 200}));
    EXPECT_EQ(split[1].lanes, (std::vector<int>{43, 44}));
    EXPECT_EQ(split[1].alias, "fp1b");
    EXPECT_EQ(split[3].name, "Ethernet6");
    sw.ports = {port("swp1", 400)};
    EXPECT_NE(std::get<std::string>(plan::mapPorts(s, sw)).find("speed change"), std::string::npos);
    sw.ports = {port("swp1s0", 300)};
    EXPECT_NE(std::get<std::string>(plan::mapPorts(s, sw)).find("cannot be split"),
              std::string::npos);
}

TEST(PlanSonicPorts, SharedSkus) {
    if (!fs::exists(kShared) || !fs::exists(kReleases)) {
        twinrail::plansonic_test::sharedMissing(kShared.string() + ", " + kReleases.string());
        return;
    }
    auto big = build("CX864E-N", 2048);
    const auto& leaf = first(big, false);
    // Arista's SKU ships every cage 4x200G (index from 1): hosts as is, but the uplinks
    // need 2x400G, and without the platform's platform.json no mode can be named.
    auto arista = plan::mapPorts(sku(kShared / "Arista-7060X6-64PE-256x200G"), leaf);
    ASSERT_TRUE(std::holds_alternative<std::string>(arista));
    EXPECT_NE(std::get<std::string>(arista).find("Ethernet256 must be split 2x400G, and `config "
                                                 "interface breakout` takes only platform.json"),
              std::string::npos)
        << std::get<std::string>(arista);
    // Marvell's ships 1x800G (index from 0): every cage split, by master's platform.json.
    const fs::path marvell = twinrail::plansonic_test::assembleSku(
        "marvell", kShared / "dbmvtx9180_64osfp_64x800G",
        kReleases / "master/sonic-buildimage/device/marvell/x86_64-marvell_dbmvtx9180-r0");
    auto m = mapped(sku(marvell), leaf);
    EXPECT_EQ(m.names.at("swp1s1"), "Ethernet2");
    EXPECT_EQ(m.names.at("swp64s1"), "Ethernet508");
    EXPECT_EQ(m.breakouts.at("Ethernet0").mode.text, "4x200G[100G,50G]");
    EXPECT_EQ(m.breakouts.at("Ethernet256").mode.text, "2x400G[200G,100G]");
    auto base = plan::sonicBaseConfigDb(sku(marvell), m.breakouts);
    EXPECT_EQ(base["PORT"]["Ethernet6"]["subport"], "4");
    EXPECT_EQ(base["PORT"]["Ethernet6"]["alias"], "etp1d");
    fs::remove_all(marvell.parent_path());
}

// Every overlay of the seed's plans (CX864E-N 512..16384 GPUs, CX732Q-N 256..1024; bond
// and routed; ecmp and static) against the rules a SONiC switch enforces: no overlapping
// router-interface prefixes in a VRF (IntfsOrch), no PORT rows, bgp_asn == `router bgp`,
// split-unified; every port it names exists on the SKU once its breakouts are applied.
TEST(PlanSonicOverlay, EverySeedPlanMeetsSonicsRules) {
    struct Seed {
        std::string model;
        int from, to;
    };
    size_t checked = 0;
    for (const Seed& seed : {Seed{"CX864E-N", 512, 16384}, Seed{"CX732Q-N", 256, 1024}}) {
        auto s = sku(kCatalog / seed.model);
        for (int gpus = seed.from; gpus <= seed.to; gpus *= 2) {
            for (auto attach : {plan::Attach::Bond, plan::Attach::Routed, plan::Attach::EvpnMh}) {
                for (auto lb : {plan::Request::Lb::Ecmp, plan::Request::Lb::Static}) {
                    // Above 2048 GPUs two of the four (attach, lb) pairs: the shapes repeat.
                    // EVPN-MH pins nothing (no UPLINK_PIN): ECMP only.
                    const bool evpn = attach == plan::Attach::EvpnMh;
                    if (evpn ? lb == plan::Request::Lb::Static
                             : gpus > 2048 && (attach == plan::Attach::Bond) ==
                                                  (lb == plan::Request::Lb::Ecmp))
                        continue;
                    const plan::SonicRelease release =
                        evpn ? plan::SonicRelease::Master : plan::kSonicDefaultRelease;
                    auto p = build(seed.model, gpus, attach, lb);
                    for (const auto& sw : p.switches) {
                        // Leaves of two groups and one spine per plane: the other groups'
                        // leaves differ only in their subnets, the other spines not at all.
                        if (sw.spine ? sw.index > 1 : sw.group > 2) continue;
                        auto c = sonic(p, sw, s, release);
                        const json& o = c.overlay;
                        const std::string at =
                            seed.model + " " + std::to_string(gpus) + " " + sw.name;
                        EXPECT_EQ(plan::overlappingRouterInterfaces(o), std::vector<std::string>{})
                            << at;
                        EXPECT_FALSE(o.contains("PORT")) << at;
                        const auto& md = o["DEVICE_METADATA"]["localhost"];
                        EXPECT_NE(c.frrConf.find("\nrouter bgp " +
                                                 md["bgp_asn"].get<std::string>() + "\n"),
                                  std::string::npos)
                            << at;
                        EXPECT_EQ(md["docker_routing_config_mode"], "split-unified") << at;
                        if (sw.index == 1 && sw.plane == 1) {  // leafrefs, once per shape
                            expectPortsExist(o, plan::sonicBaseConfigDb(s, c.breakouts), at);
                        }
                        ++checked;
                    }
                }
            }
        }
    }
    std::cout << "overlap rule checked on " << checked << " switch configs\n";
    EXPECT_GT(checked, 600U);  // 672 before EVPN-MH
}

TEST(PlanSonicOverlay, TheOverlapCheckerCatchesTodaysLinuxLeaf) {
    auto p = build("CX864E-N", 2048);
    auto problems = plan::overlappingRouterInterfaces(plan::configDb(p, first(p, false)));
    ASSERT_FALSE(problems.empty());  // one /24 on 128 routed ports: what IntfsOrch refuses
    EXPECT_NE(problems.front().find("overlaps INTERFACE|swp"), std::string::npos) << problems[0];
    json vrfs = {{"INTERFACE",
                  {{"Ethernet0", {{"vrf_name", "Vrf1"}}},
                   {"Ethernet0|10.0.0.1/24", json::object()},
                   {"Ethernet4|10.0.0.9/30", json::object()},
                   {"Ethernet4|10.0.1.1/24", json::object()},
                   {"Ethernet8|10.0.1.129/25", json::object()},
                   {"Ethernet8|bogus/24", json::object()}}}};
    auto v = plan::overlappingRouterInterfaces(vrfs);
    ASSERT_EQ(v.size(), 2U);  // Ethernet0 is in Vrf1: no clash with Ethernet4's 10.0.0.9/30
    EXPECT_EQ(v[0], "INTERFACE|Ethernet8|bogus/24: not an address/length");
    EXPECT_EQ(v[1], "INTERFACE|Ethernet8|10.0.1.129/25 overlaps INTERFACE|Ethernet4|10.0.1.1/24");
}

TEST(PlanSonicOverlay, BondLeafShape) {
    auto p = build("CX864E-N", 2048, plan::Attach::Bond, plan::Request::Lb::Static);
    const auto& sw = first(p, false);
    auto o = sonic(p, sw, sku(kCatalog / "CX864E-N")).overlay;
    EXPECT_EQ(o["VLAN"]["Vlan1001"]["vlanid"], "1001");
    EXPECT_EQ(o["VLAN_MEMBER"]["Vlan1001|Ethernet2"]["tagging_mode"], "untagged");
    EXPECT_EQ(o["VLAN_INTERFACE"]["Vlan1001"]["proxy_arp"], "enabled");
    EXPECT_EQ(o["VLAN_INTERFACE"]["Vlan1001"]["mac_addr"], p.request.gatewayMac);
    EXPECT_TRUE(o["VLAN_INTERFACE"].contains("Vlan1001|10.128.0.1/24"));
    EXPECT_EQ(o["INTERFACE"]["Ethernet256"]["ipv6_use_link_local_only"], "enable");
    EXPECT_TRUE(o["LOOPBACK_INTERFACE"].contains("Loopback0|" + sw.loopback + "/32"));
    EXPECT_EQ(o["HOSTROUTED"]["global"]["platform"], "sonic");
    EXPECT_TRUE(o["HOSTROUTED_INTERFACE"].contains("Vlan1001"));
    const auto& nic = p.servers[0].nics[0];
    EXPECT_EQ(o["HOSTROUTED_BINDING"][nic.address],
              (json{{"ifname", "Vlan1001"}, {"port", "Ethernet0"}}));
    EXPECT_EQ(o["PATHQD"]["global"]["source"], "sonic");
    EXPECT_EQ(o["PATHQD"]["global"]["weight_audit_source"], "sonic");
    EXPECT_EQ(o["PATHQD"]["global"]["sonic_release"], "202505");
    EXPECT_EQ(o["PATHQD_PORT"]["Ethernet256"]["role"], "uplink");
    EXPECT_EQ(o["UPLINK_PIN"]["Ethernet0"]["uplink"], "Ethernet256");
    // A back-end AI leaf, as SONiC's QoS templates tell one (qos_config.j2's ComputeAI
    // branch; buffers_config.j2's *LeafRouter: the t1 buffers).
    EXPECT_EQ(o["DEVICE_METADATA"]["localhost"]["type"], "BackEndLeafRouter");
    EXPECT_EQ(o["DEVICE_METADATA"]["localhost"]["resource_type"], "ComputeAI");
    // --lb static as SONiC does PBR: the ACL table on the host ports; the rules are
    // hostrouted's (APPL_DB).
    EXPECT_EQ(o["ACL_TABLE"]["TWINRAIL_PIN"]["type"], "TWINRAIL_PIN");
    EXPECT_EQ(o["ACL_TABLE"]["TWINRAIL_PIN"]["ports"].size(), 128U);
    EXPECT_EQ(o["ACL_TABLE_TYPE"]["TWINRAIL_PIN"]["ACTIONS"],
              json({"PACKET_ACTION", "REDIRECT_ACTION"}));
    EXPECT_FALSE(o.contains("ACL_RULE"));
    EXPECT_FALSE(o.contains("BREAKOUT_CFG"));
    EXPECT_EQ(o["PORT_QOS_MAP"]["Ethernet0"]["pfcwd_sw_enable"], "3");
}  // routed leaves: plan_sonic_routed_test.cpp

TEST(PlanSonicOverlay, HostRoutesReachBgpByRelease) {
    // Routed NICs: bonded ones are refused before 202505 (no one gateway MAC).
    auto p = build("CX864E-N", 512, plan::Attach::Routed);
    const auto& leaf = first(p, false);
    auto s = sku(kCatalog / "CX864E-N");
    auto now = sonic(p, leaf, s, plan::SonicRelease::R202411);
    EXPECT_NE(now.frrConf.find("  redistribute table-direct 10\n"), std::string::npos);
    EXPECT_EQ(now.frrConf.find("import-table"), std::string::npos);
    EXPECT_EQ(now.frrConf.find("import-check"), std::string::npos);
    EXPECT_EQ(now.overlay["HOSTROUTED"]["global"]["advertise"], "table-direct");
    auto old = sonic(p, leaf, s, plan::SonicRelease::R202405);
    EXPECT_EQ(old.overlay["HOSTROUTED"]["global"]["advertise"], "network-table");
    EXPECT_NE(old.frrConf.find(" no bgp network import-check\n"), std::string::npos);
    EXPECT_EQ(old.frrConf.find("table-direct"), std::string::npos);
    EXPECT_EQ(old.frrConf.find("import-table"), std::string::npos);
    EXPECT_NE(old.frrConf.find("no zebra nexthop kernel enable"), std::string::npos);  // FRR 8.5
}

TEST(PlanSonicBase, FactoryDefaultFromTheSku) {
    auto s = sku(kOwn / "sku-mixed");
    auto base = plan::sonicBaseConfigDb(s);
    ASSERT_EQ(base["PORT"].size(), 10U);
    EXPECT_EQ(base["PORT"]["Ethernet18"], (json{{"lanes", "51,52"},
                                                {"alias", "fp3b"},
                                                {"index", "3"},
                                                {"speed", "200000"},
                                                {"admin_status", "up"},
                                                {"fec", "rs"}}));
    EXPECT_EQ(base["BREAKOUT_CFG"]["Ethernet0"]["brkout_mode"], "1x800G[400G]");
    std::map<std::string, plan::Breakout> split{
        {"Ethernet0",
         {std::get<plan::BreakoutMode>(plan::parseBreakoutMode("2x400G[200G]")), 400}}};
    auto after = plan::sonicBaseConfigDb(s, split);
    EXPECT_EQ(after["PORT"]["Ethernet4"]["lanes"], "45,46,47,48");
    EXPECT_EQ(after["PORT"]["Ethernet4"]["alias"], "fp1b");
    EXPECT_EQ(after["BREAKOUT_CFG"]["Ethernet0"]["brkout_mode"], "2x400G[200G]");
    EXPECT_EQ(base["DEVICE_METADATA"]["localhost"]["hwsku"], "sku-mixed");
}

// pathqd's own policy at start (every downlink at level 1, down, peer unknown) must already
// be in the spine's frr.conf: pathqd then adds nothing, and a bgp restart keeps it.
TEST(PlanSonicFrr, SpineHasPathqdsStartingPolicyAndNoBgpcfgdNames) {
    auto p = build("CX864E-N", 2048);
    const auto& spine = first(p, true);
    auto s = sku(kCatalog / "CX864E-N");
    auto c = sonic(p, spine, s);
    auto ports = mapped(s, spine);
    twinrail::pathqd::PolicyInput in;
    in.asn = spine.asn;
    in.levels = plan::kPathqdDefaultLevels;
    for (const auto& port : spine.ports)
        in.downlinks[ports.names.at(port.name)] = {1, 0, {}, port.peer, false};
    auto running = twinrail::frr::RunningConfig::parse(c.frrConf);
    auto diff = twinrail::pathqd::diffPolicy(running, in);
    EXPECT_TRUE(diff.add.empty()) << diff.add.size() << " missing, first: "
                                  << (diff.add.empty() ? "" : diff.add.front().line);
    EXPECT_TRUE(diff.conflicts.empty());
    EXPECT_TRUE(diff.remove.empty());
    for (const char* theirs : {"TO_BGP_PEER", "FROM_BGP_PEER", "PEER_V4", "PEER_V6"})
        EXPECT_EQ(c.frrConf.find(theirs), std::string::npos) << theirs;
    EXPECT_NE(c.frrConf.find("\nno fpm use-next-hop-groups\nfpm address 127.0.0.1\n"),
              std::string::npos);
    EXPECT_NE(c.frrConf.find(" neighbor Ethernet0 interface peer-group FABRIC\n"),
              std::string::npos);
}

// pathqd accepts the overlay's PATHQD rows as they are, and starts from the levels the
// spines' frr.conf was written for.
TEST(PlanSonicFrr, PathqdAcceptsTheOverlay) {
    auto p = build("CX864E-N", 1024, plan::Attach::Bond, plan::Request::Lb::Static);
    auto s = sku(kCatalog / "CX864E-N");
    for (bool spine : {false, true}) {
        auto parsed = twinrail::pathqd::parseConfig(sonic(p, first(p, spine), s).overlay);
        ASSERT_TRUE(std::holds_alternative<twinrail::pathqd::Config>(parsed))
            << std::get<twinrail::pathqd::ConfigError>(parsed).str();
        const auto& cfg = std::get<twinrail::pathqd::Config>(parsed);
        EXPECT_EQ(cfg.model.levels, plan::kPathqdDefaultLevels);
        EXPECT_EQ(cfg.ports.size(), spine ? 128U : 64U);
        EXPECT_EQ(cfg.ports.count(spine ? "Ethernet0" : "Ethernet256"), 1U);
    }
}

TEST(PlanSonicLinux, PlanFilesWithoutSonicAreTodaysFunctions) {
    auto p = build("CX864E-N", 512, plan::Attach::Bond, plan::Request::Lb::Static);
    auto files = std::get<std::vector<tool::OutFile>>(tool::planFiles(p, "/tmp/unused-B"));
    size_t compared = 0;
    for (const auto& sw : p.switches) {
        for (const auto& f : files) {
            if (f.path.parent_path().filename() != sw.name) continue;
            if (f.path.filename() == "frr.conf") {
                EXPECT_EQ(f.text, plan::frrConfig(p, sw));
                ++compared;
            } else if (f.path.filename() == "config_db.json") {
                EXPECT_EQ(f.text, plan::configDb(p, sw).dump(2) + "\n");
                ++compared;
            }
        }
    }
    EXPECT_EQ(compared, 2 * p.switches.size());
}
