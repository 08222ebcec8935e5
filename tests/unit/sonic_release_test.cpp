// Per-release conformance: every release twinrail-plan accepts is judged by that release's
// own files (../shared/fixtures/sonic-releases/<release>, SONiC's sources byte for byte):
// - the release table (libs/plan sonic_release.h) says what the release's files say: its FRR
//   container's start lines, its names, and what its YANG models take;
// - every seed plan's overlay that the release can carry validates against that release's
//   model set plus only the models the package installs (its manifest's yang-modules), as
//   `config reload` would judge it; what it cannot carry is refused by name.
// Without ../shared the tests say so and stop, and fail under CI=true; the readers also run
// on the tree's own small fixture (tests/fixtures/sonic-releases-own).
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "plan_sonic_helpers.h"
#include "sku_dir.h"
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
using twinrail::sonicrelease_test::kOwnRelease;
using twinrail::sonicrelease_test::kReleases;
using twinrail::sonicrelease_test::packageModels;

namespace {

// A factory-default switch of the catalog's CX864E-N with VLAN 1000, as a probe's base.
json probeBase() {
    json db = plan::sonicBaseConfigDb(catalogSku("CX864E-N"));
    db["VLAN"]["Vlan1000"] = {{"vlanid", "1000"}};
    return db;
}

json with(json db, const json& rows) {
    db.merge_patch(rows);
    return db;
}

}  // namespace

// The FRR container: bgpd's vty TCP port is open exactly where the table says, and the
// container twinrail's daemons exec vtysh in is the one the release runs FRR in.
TEST(SonicRelease, TheFrrContainerIsAsEachReleaseStartsIt) {
    if (!haveShared()) return;
    for (auto r : plan::sonicReleases()) {
        SCOPED_TRACE(plan::sonicReleaseName(r));
        const auto bgpd = facts::frrCommandLines(dirOf(r), "bgpd");
        const auto zebra = facts::frrCommandLines(dirOf(r), "zebra");
        ASSERT_FALSE(bgpd.empty());
        ASSERT_FALSE(zebra.empty());
        for (const auto& line : bgpd) {
            EXPECT_EQ(line.find("-P 0") == std::string::npos, plan::sonicFeatures(r).bgpdVtyPort)
                << line;
            EXPECT_NE(line.find("-A 127.0.0.1"), std::string::npos) << line;
            // vtysh in the container finds bgpd's vty socket where it always is.
            EXPECT_EQ(line.find("--vty_socket"), std::string::npos) << line;
        }
        for (const auto& line : zebra) EXPECT_EQ(line.find("-P 0"), std::string::npos) << line;
        EXPECT_EQ(facts::fpmFrrRule(dirOf(r), "CONTAINER_NAME"), "bgp");
        EXPECT_EQ(facts::fpmFrrRule(dirOf(r), "PACKAGE_NAME"), "fpm-frr");
    }
}

// What the release's models take, probed with one row each against that release's set.
TEST(SonicRelease, TheTableSaysWhatEachReleasesModelsTake) {
    if (!haveShared()) return;
    const json base = probeBase();
    for (auto r : plan::sonicReleases()) {
        SCOPED_TRACE(plan::sonicReleaseName(r));
        const plan::SonicFeatures& f = plan::sonicFeatures(r);
        facts::ReleaseModels models(facts::modelDirs(dirOf(r)));
        ASSERT_EQ(models.check(base), std::vector<std::string>{});
        EXPECT_EQ(
            models.accepts(with(
                base, {{"VLAN_INTERFACE", {{"Vlan1000", {{"mac_addr", "00:00:5e:00:01:01"}}}}}})),
            f.vlanInterfaceMacAddr);
        EXPECT_EQ(
            models.accepts(with(
                base, {{"SAG", {{"GLOBAL", {{"gateway_mac", "00:00:5e:00:01:01"}}}}},
                       {"VLAN_INTERFACE", {{"Vlan1000", {{"static_anycast_gateway", "true"}}}}}})),
            f.staticAnycastGateway);
        EXPECT_EQ(models.schema.table("EVPN_ETHERNET_SEGMENT") != nullptr, f.evpnMultihoming);
        for (const char* t : {"ARS_PROFILE", "ARS_OBJECT", "ARS_INTERFACES"})
            EXPECT_EQ(models.schema.table(t) != nullptr, f.localArs) << t;
        EXPECT_EQ(models.accepts(with(base, {{"DEVICE_METADATA",
                                              {{"localhost", {{"type", "BackEndSpineRouter"}}}}}})),
                  f.backEndSpineRouter);
        EXPECT_EQ(models.accepts(with(
                      base, {{"SWITCH_HASH", {{"GLOBAL", {{"ecmp_hash_algorithm", "RANDOM"}}}}}})),
                  f.randomEcmpHash);
        // What every release must take for twinrail's leaves at all.
        EXPECT_TRUE(models.accepts(with(
            base,
            {{"DEVICE_METADATA",
              {{"localhost", {{"type", "BackEndLeafRouter"}, {"resource_type", "ComputeAI"}}}}}})));
    }
}

// The readers on the tree's own fixture: a fresh clone checks the same code.
TEST(SonicRelease, TheReadersOnTheTreesOwnFixture) {
    const auto bgpd = facts::frrCommandLines(kOwnRelease, "bgpd");
    ASSERT_EQ(bgpd.size(), 2U);
    EXPECT_EQ(bgpd[0], "-A 127.0.0.1 -P 0 -M bmp");
    EXPECT_EQ(facts::fpmFrrRule(kOwnRelease, "CONTAINER_NAME"), "bgp");
    EXPECT_EQ(facts::fpmFrrRule(kOwnRelease, "PACKAGE_NAME"), "fpm-frr");
    EXPECT_EQ(facts::fpmFrrRule(kOwnRelease, "NO_SUCH"), "");
}

// Every seed plan that a release can carry passes that release's models plus the
// package's alone; the rest is refused, naming the feature, exactly where the table says.
// Plane 1's switches (plane 2's differ in addresses only); a leaf for every (seed, attach,
// lb), a spine for every (seed, lb) (a spine's rows do not depend on how hosts attach).
class SonicReleaseOverlays : public testing::TestWithParam<plan::SonicRelease> {};

TEST_P(SonicReleaseOverlays, EverySeedOverlayPassesItsReleasesModels) {
    if (!haveShared()) return;
    struct Seed {
        std::string model;
        int gpus;
    };
    const Seed seeds[] = {{"CX864E-N", 512},
                          {"CX864E-N", 2048},
                          {"CX864E-N", 16384},
                          {"CX732Q-N", 256},
                          {"CX732Q-N", 1024}};
    const plan::SonicRelease r = GetParam();
    const plan::SonicOptions options{r};
    const plan::SonicFeatures& f = plan::sonicFeatures(r);
    const auto start = std::chrono::steady_clock::now();
    auto dirs = facts::modelDirs(dirOf(r));
    dirs.push_back(packageModels());
    facts::ReleaseModels models(dirs);
    size_t checked = 0;
    size_t refused = 0;
    for (const Seed& seed : seeds) {
        const plan::Sku sku = catalogSku(seed.model);
        std::set<std::string> spinesDone;  // by lb
        for (auto attach : {plan::Attach::Bond, plan::Attach::Routed, plan::Attach::EvpnMh}) {
            for (auto lb :
                 {plan::Request::Lb::Ecmp, plan::Request::Lb::Static, plan::Request::Lb::Spray}) {
                if (attach == plan::Attach::EvpnMh && lb == plan::Request::Lb::Static)
                    continue;  // EVPN-MH pins nothing
                auto p = build(seed.model, seed.gpus, attach, lb);
                const bool canCarry = (attach != plan::Attach::Bond || f.vlanInterfaceMacAddr ||
                                       f.staticAnycastGateway) &&
                                      (attach != plan::Attach::EvpnMh || f.evpnMultihoming);
                const std::string what = seed.model + " " + std::to_string(seed.gpus) + " " +
                                         plan::attachName(attach) + " " + plan::lbName(lb);
                auto why = plan::sonicRefusal(p, options);
                EXPECT_EQ(!why.has_value(), canCarry) << what << ": " << why.value_or("");
                if (why) {
                    EXPECT_NE(why->find("on SONiC " + plan::sonicReleaseName(r)), std::string::npos)
                        << *why;
                    ++refused;
                    continue;
                }
                for (const auto& sw : p.switches) {
                    if (sw.index != 1 || sw.plane != 1) continue;
                    if (sw.spine && !spinesDone.insert(plan::lbName(lb)).second) continue;
                    auto c = plan::sonicSwitchConfig(p, sw, sku, options);
                    ASSERT_TRUE(std::holds_alternative<plan::SonicSwitchConfig>(c))
                        << what << ": " << std::get<std::string>(c);
                    const auto& cfg = std::get<plan::SonicSwitchConfig>(c);
                    auto merged = twinrail::sonic::mergeConfigDb(
                        plan::sonicBaseConfigDb(sku, cfg.breakouts), cfg.overlay);
                    EXPECT_EQ(models.check(merged.merged), std::vector<std::string>{})
                        << what << " " << sw.name;
                    ++checked;
                }
            }
        }
    }
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    std::cout << plan::sonicReleaseName(r) << ": validated " << checked
              << " switch overlays against the release's models and the package's, " << refused
              << " plans refused by name, in " << ms << " ms\n";
    EXPECT_EQ(checked + refused, 55U);  // 5 seeds x (8 leaf shapes + 3 spines)
}

INSTANTIATE_TEST_SUITE_P(EachRelease, SonicReleaseOverlays,
                         testing::ValuesIn(plan::sonicReleases()),
                         [](const testing::TestParamInfo<plan::SonicRelease>& i) {
                             return "R" + plan::sonicReleaseName(i.param);
                         });

// The check is not blind: an overlay with one of the faults SONiC refuses is caught.
TEST(SonicRelease, FaultsInAnOverlayAreCaught) {
    if (!haveShared()) return;
    auto dirs = facts::modelDirs(dirOf(plan::kSonicDefaultRelease));
    dirs.push_back(packageModels());
    facts::ReleaseModels models(dirs);
    auto p = build("CX864E-N", 512);
    const plan::Sku sku = catalogSku("CX864E-N");
    const auto cfg =
        std::get<plan::SonicSwitchConfig>(plan::sonicSwitchConfig(p, p.switches.front(), sku, {}));
    const json base = plan::sonicBaseConfigDb(sku, cfg.breakouts);
    auto check = [&](const std::function<void(json&)>& fault) {
        json o = cfg.overlay;
        fault(o);
        return models.check(twinrail::sonic::mergeConfigDb(base, o).merged);
    };
    ASSERT_EQ(check([](json&) {}), std::vector<std::string>{});
    // A member port the SKU does not have (a leafref to PORT).
    EXPECT_FALSE(check([](json& o) {
                     o["VLAN_MEMBER"]["Vlan1001|Ethernet9999"] = {{"tagging_mode", "untagged"}};
                 }).empty());
    // One of our fields out of its range.
    auto bad = check([](json& o) { o["HOSTROUTED"]["global"]["route_table"] = "4000"; });
    ASSERT_FALSE(bad.empty());
    EXPECT_NE(bad.front().find("HOSTROUTED"), std::string::npos) << bad.front();
    // A table nobody models, as config reload refuses it; and planesteer's, which the
    // package does not install on a switch.
    for (const char* table : {"TWINRAIL_NEW_TABLE", "PLANESTEER_BOND"}) {
        auto unmodelled = check([table](json& o) { o[table]["x"] = {{"a", "b"}}; });
        ASSERT_EQ(unmodelled.size(), 1U) << table;
        EXPECT_NE(unmodelled.front().find("missing yang models"), std::string::npos);
    }
}

// ---- The switch's own device data: buffermgrd's lookup and DPB's modes ----

namespace {

const fs::path kAsterfusion = kReleases / "pr-22867/sonic-buildimage/device/asterfusion";

// buffermgrd's readPgProfileLookupFile, as SONiC reads it (sonic-swss cfgmgr/buffermgr.cpp):
// lines not empty and not starting '#', `speed cable ...` split on white space.
std::set<std::pair<std::string, std::string>> buffermgrdProfiles(const fs::path& ini) {
    std::set<std::pair<std::string, std::string>> out;
    std::istringstream in(facts::slurp(ini));
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream w(line);
        std::string speed, cable;
        w >> speed >> cable;
        out.emplace(speed, cable);
    }
    return out;
}

// Every port with pfc_enable gets pg_lossless_<speed>_<cable>_profile from buffermgrd
// only for a (speed, cable) row of the SKU's lookup; every breakout mode is a key of
// platform.json for its port. `sku` is the switch's directory.
void expectBuildableOnTheSwitch(const plan::Plan& p, const fs::path& sku,
                                const fs::path& platformJson) {
    const plan::Sku loaded = twinrail::plansonic_test::sku(sku);
    const auto profiles = buffermgrdProfiles(sku / "pg_profile_lookup.ini");
    const json platform = json::parse(facts::slurp(platformJson));
    size_t pgs = 0;
    for (const auto& sw : p.switches) {
        if (sw.index != 1) continue;
        auto c = plan::sonicSwitchConfig(p, sw, loaded, {});
        ASSERT_TRUE(std::holds_alternative<plan::SonicSwitchConfig>(c)) << std::get<std::string>(c);
        const auto& cfg = std::get<plan::SonicSwitchConfig>(c);
        const json db = twinrail::sonic::mergeConfigDb(
                            plan::sonicBaseConfigDb(loaded, cfg.breakouts), cfg.overlay)
                            .merged;
        for (const auto& [port, row] : db["PORT_QOS_MAP"].items()) {
            if (!row.contains("pfc_enable")) continue;
            const std::string speed = db["PORT"][port]["speed"];
            const std::string cable = db["CABLE_LENGTH"]["AZURE"][port];
            EXPECT_TRUE(profiles.count({speed, cable}))
                << sw.name << " " << port << ": no lossless profile for " << speed << " at "
                << cable << " in " << sku / "pg_profile_lookup.ini";
            ++pgs;
        }
        for (const auto& [port, b] : cfg.breakouts) {
            const json& modes = platform["interfaces"][port]["breakout_modes"];
            EXPECT_TRUE(modes.contains(b.mode.text))
                << sw.name << " " << port << ": " << b.mode.text << " is not a key of "
                << platformJson;
        }
    }
    EXPECT_GT(pgs, 0U);
}

}  // namespace

TEST(SonicReleaseDevices, AsterfusionCx732qNLosslessPgsAndBreakoutsAreBuildable) {
    if (!haveShared()) return;
    const fs::path platform = kAsterfusion / "x86_64-asterfusion_cx732q_n-r0/CX732Q-N_TL07E02";
    for (int gpus : {256, 1024}) {
        for (auto attach : {plan::Attach::Bond, plan::Attach::Routed}) {
            SCOPED_TRACE(std::to_string(gpus) + " " + plan::attachName(attach));
            expectBuildableOnTheSwitch(build("CX732Q-N", gpus, attach), platform / "CX732Q-N",
                                       platform / "platform.json");
        }
    }
}

TEST(SonicReleaseDevices, MarvellTeralynx10OnEachReleaseThatShipsItsPlatform) {
    if (!haveShared()) return;
    const fs::path ownSku = fs::path(TWINRAIL_SONIC_SHARED_HWSKU) / "dbmvtx9180_64osfp_64x800G";
    size_t releases = 0;
    for (auto r : plan::sonicReleases()) {
        const fs::path platform =
            dirOf(r) / "sonic-buildimage/device/marvell/x86_64-marvell_dbmvtx9180-r0";
        if (!fs::exists(platform / "platform.json")) continue;  // 202511 on (SOURCES.md)
        SCOPED_TRACE(plan::sonicReleaseName(r));
        const fs::path sku = twinrail::plansonic_test::assembleSku("marvell", ownSku, platform);
        expectBuildableOnTheSwitch(build("CX864E-N", 2048), sku,
                                   sku.parent_path() / "platform.json");
        fs::remove_all(sku.parent_path().parent_path());
        ++releases;
    }
    EXPECT_EQ(releases, 2U);  // 202605 and master
}

// SKUs whose lookup has no lossless profile, or whose port_config.ini reuses lanes, are
// refused by name: PFC without headroom is worse than no plan.
TEST(SonicReleaseDevices, SkusThatCannotCarryTheFabricAreRefusedByName) {
    if (!haveShared()) return;
    // The CX864E-N as PR 22867 ships it: 256 lane ids on two ports each.
    const fs::path cx864 =
        kAsterfusion / "x86_64-asterfusion_cx864e_n-r0/CX864E-N_TL10E02/CX864E-N";
    auto dup = twinrail::plantool::loadSkuDir(cx864);
    ASSERT_TRUE(std::holds_alternative<twinrail::plantool::SkuLoadError>(dup));
    EXPECT_NE(
        std::get<twinrail::plantool::SkuLoadError>(dup).message.find("is already another port's"),
        std::string::npos);
    // Arista's header-only lookups (no lossless profile at all) under the catalog's ports.
    const fs::path headerOnly =
        dirOf(plan::SonicRelease::Master) /
        "sonic-buildimage/device/arista/x86_64-arista_7060x6_64pe/Arista-7060X6-64PE-64x400G";
    ASSERT_TRUE(buffermgrdProfiles(headerOnly / "pg_profile_lookup.ini").empty());
    const fs::path sku =
        twinrail::plansonic_test::assembleSku("arista", fs::path(TWINRAIL_PLAN_HWSKU) / "CX864E-N",
                                              fs::path(TWINRAIL_PLAN_HWSKU) / "CX864E-N");
    fs::copy_file(headerOnly / "pg_profile_lookup.ini", sku / "pg_profile_lookup.ini",
                  fs::copy_options::overwrite_existing);
    auto p = build("CX864E-N", 512);
    auto c = plan::sonicSwitchConfig(p, p.switches.front(), twinrail::plansonic_test::sku(sku), {});
    ASSERT_TRUE(std::holds_alternative<std::string>(c));
    EXPECT_NE(std::get<std::string>(c).find("has no lossless profile for Ethernet0's speed "
                                            "(200000 Mb/s): the file lists none at all"),
              std::string::npos)
        << std::get<std::string>(c);
    fs::remove_all(sku.parent_path().parent_path());
}

// The Redis recipe on SONiC (docs/redis-acl.md, "On SONiC") edits nothing the release's
// database container decides: each release's supervisord starts redis-server with --bind,
// --port and --unixsocket over the baked-in redis.conf, so the recipe names them and
// sets none of them in a file.
TEST(SonicRelease, TheRedisRecipeLeavesWhatEachReleasesCommandLineSets) {
    if (!haveShared()) return;
    const std::string docs = facts::slurp(fs::path(TWINRAIL_DOCS_DIR) / "redis-acl.md");
    const size_t at = docs.find("\n## On SONiC\n");
    ASSERT_NE(at, std::string::npos) << "docs/redis-acl.md has no \"On SONiC\" section";
    const std::string section = docs.substr(at, docs.find("\n## ", at + 1) - at);
    for (auto r : plan::sonicReleases()) {
        const std::string conf =
            facts::slurp(dirOf(r) / "sonic-buildimage/dockers/docker-database/supervisord.conf.j2");
        const size_t cmd = conf.find("/usr/bin/redis-server /etc/redis/redis.conf");
        ASSERT_NE(cmd, std::string::npos) << plan::sonicReleaseName(r);
        const std::string line = conf.substr(cmd, conf.find('\n', cmd) - cmd);
        for (const char* flag : {"--bind", "--port", "--unixsocket"}) {
            EXPECT_NE(line.find(flag), std::string::npos)
                << plan::sonicReleaseName(r) << " " << flag;
            EXPECT_NE(section.find(flag), std::string::npos) << "the recipe does not name " << flag;
        }
    }
    std::istringstream lines(section);
    for (std::string l; std::getline(lines, l);) {
        l.erase(0, l.find_first_not_of(' '));
        for (const char* directive : {"bind ", "port ", "unixsocket ", "tls-port ", "aclfile "})
            EXPECT_NE(l.rfind(directive, 0), 0U) << "a redis.conf line on SONiC: " << l;
    }
}
