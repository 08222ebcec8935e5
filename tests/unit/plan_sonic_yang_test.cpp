// Every switch overlay of the seed's plans, merged onto the factory-default config_db.json
// of its HWSKU (breakouts applied), passes the same YANG check `twinrail sonic-check
// --base` runs: SONiC's own models plus twinrail's (proto/sonic-*.yang), and no table
// without a model. SONiC's models are read next to the checkout (the test skips without
// them: twinrail's stand-ins for sonic-port/sonic-vlan do not model VLAN_INTERFACE,
// DEVICE_METADATA or BREAKOUT_CFG).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "plan_sonic_helpers.h"
#include "sonic_yang_checker.h"
#include "twinrail/plan/plan.h"
#include "twinrail/plan/sonic_sku.h"
#include "twinrail/plan/sonic_target.h"

namespace plan = twinrail::plan;
namespace sonic = twinrail::sonic;
namespace fs = std::filesystem;
using nlohmann::json;
using twinrail::plansonic_test::build;
using twinrail::plansonic_test::catalogSku;
using twinrail::plansonic_test::request;

using twinrail::plansonic_test::YangChecker;

namespace {

const fs::path kSonicModels = TWINRAIL_SONIC_YANG_SHARED;
const fs::path kOurModels = TWINRAIL_PROTO_DIR;

}  // namespace

TEST(PlanSonicYang, EverySeedOverlayOnItsBasePassesSonicsModelsAndOurs) {
    if (!fs::exists(kSonicModels)) GTEST_SKIP() << "no SONiC models at " << kSonicModels;
    YangChecker checker(kSonicModels, kOurModels);
    struct Seed {
        std::string model;
        int from, to;
    };
    size_t checked = 0;
    const auto start = std::chrono::steady_clock::now();
    for (const Seed& seed : {Seed{"CX864E-N", 512, 16384}, Seed{"CX732Q-N", 256, 1024}}) {
        const plan::Sku sku = catalogSku(seed.model);
        for (int gpus = seed.from; gpus <= seed.to; gpus *= 2) {
            for (auto attach : {plan::Attach::Bond, plan::Attach::Routed, plan::Attach::EvpnMh}) {
                for (auto lb : {plan::Request::Lb::Ecmp, plan::Request::Lb::Static}) {
                    // EVPN-MH pins nothing: its static plan is its ECMP one.
                    const bool evpn = attach == plan::Attach::EvpnMh;
                    if (evpn && lb == plan::Request::Lb::Static) continue;
                    const plan::SonicOptions options{evpn ? plan::kSonicEvpnMhRelease
                                                          : plan::kSonicDefaultRelease};
                    auto built = plan::buildPlan(request(seed.model, gpus, attach, lb));
                    ASSERT_TRUE(std::holds_alternative<plan::Plan>(built));
                    const auto& p = std::get<plan::Plan>(built);
                    for (const auto& sw : p.switches) {
                        // One leaf and one spine of each plane: a group's other leaves
                        // differ in subnets and ports only (the overlap and port rules
                        // cover every switch in plan_sonic_test.cpp).
                        if (sw.index != 1) continue;
                        auto c = plan::sonicSwitchConfig(p, sw, sku, options);
                        ASSERT_TRUE(std::holds_alternative<plan::SonicSwitchConfig>(c))
                            << std::get<std::string>(c);
                        const json& overlay = std::get<plan::SonicSwitchConfig>(c).overlay;
                        const json base = plan::sonicBaseConfigDb(sku, plan::breakoutsOf(overlay));
                        EXPECT_EQ(checker.check(base, overlay), std::vector<std::string>{})
                            << seed.model << " " << gpus << " GPUs, " << plan::attachName(attach)
                            << ", " << plan::lbName(lb) << ": " << sw.name;
                        ++checked;
                    }
                }
            }
        }
    }
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    std::cout << "validated " << checked << " switch configs in " << ms << " ms\n";
    EXPECT_GE(checked, 140U);  // 9 plan sizes x 5 (attach, lb) x 2 planes x leaf and spine
}

// The check is not blind: the overlay with one of the faults SONiC refuses is caught.
TEST(PlanSonicYang, FaultsInAnOverlayAreCaught) {
    if (!fs::exists(kSonicModels)) GTEST_SKIP() << "no SONiC models at " << kSonicModels;
    YangChecker checker(kSonicModels, kOurModels);
    auto p = build("CX864E-N", 512);
    const plan::Sku sku = catalogSku("CX864E-N");
    const plan::Switch& leaf = p.switches.front();
    ASSERT_FALSE(leaf.spine);
    const json overlay =
        std::get<plan::SonicSwitchConfig>(plan::sonicSwitchConfig(p, leaf, sku, {})).overlay;
    const json base = plan::sonicBaseConfigDb(sku, plan::breakoutsOf(overlay));
    ASSERT_EQ(checker.check(base, overlay), std::vector<std::string>{});

    auto faulty = [&](const std::function<void(json&)>& fault) {
        json o = overlay;
        fault(o);
        return checker.check(base, o);
    };
    // A member port the SKU does not have (a leafref to PORT).
    auto noPort = faulty([](json& o) {
        o["VLAN_MEMBER"]["Vlan1001|Ethernet9999"] = {{"tagging_mode", "untagged"}};
    });
    EXPECT_FALSE(noPort.empty());
    // One of our fields out of its range.
    auto badKeepalive = faulty([](json& o) { o["HOSTROUTED"]["global"]["route_table"] = "4000"; });
    ASSERT_FALSE(badKeepalive.empty());
    EXPECT_NE(badKeepalive.front().find("HOSTROUTED"), std::string::npos) << badKeepalive.front();
    // A table nobody models, as config reload refuses it.
    auto unmodelled = faulty([](json& o) { o["TWINRAIL_NEW_TABLE"]["x"] = {{"a", "b"}}; });
    ASSERT_EQ(unmodelled.size(), 1U);
    EXPECT_NE(unmodelled.front().find("missing yang models"), std::string::npos);
}
