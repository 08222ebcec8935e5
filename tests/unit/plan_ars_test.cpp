// The planner's --lb ars, ars-global and spray (issue 22): every Linux switch's config_db
// carries SONiC's ARS table shapes (or the RANDOM hash) and libs/ars reads them back into
// the mode the lb names; on SONiC only spray can be given (no release models or runs ARS:
// --lb ars is refused by name), and ARS rows there fail SONiC's own verdict. twinrail's
// model of the tables (proto/linux/twinrail-ars.yang, twinrail-global-ars.yang) refuses
// what arsd's parser refuses.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <set>

#include "plan_sonic_helpers.h"
#include "sonic_yang_checker.h"
#include "twinrail/ars/config.h"
#include "twinrail/plan/outputs.h"
#include "twinrail/plan/sonic_target.h"

namespace plan = twinrail::plan;
namespace ars = twinrail::ars;
namespace sonic = twinrail::sonic;
namespace fs = std::filesystem;
using nlohmann::json;
using twinrail::plansonic_test::build;
using twinrail::plansonic_test::catalogSku;
using Lb = plan::Request::Lb;

using twinrail::plansonic_test::YangChecker;

namespace {

const fs::path kSonicModels = TWINRAIL_SONIC_YANG_SHARED;
const fs::path kOurModels = TWINRAIL_PROTO_DIR;
const fs::path kLinuxModels = fs::path(TWINRAIL_PROTO_DIR) / "linux";
const Lb kAll[] = {Lb::Ecmp, Lb::Static, Lb::Ars, Lb::ArsGlobal, Lb::Spray};

ars::ArsConfig readBack(const json& db, const std::string& what) {
    auto r = ars::parseArsConfig(db);
    if (auto* e = std::get_if<std::string>(&r)) ADD_FAILURE() << what << ": " << *e;
    return std::holds_alternative<ars::ArsConfig>(r) ? std::get<ars::ArsConfig>(r)
                                                     : ars::ArsConfig{};
}

// The fabric ports of a switch, as `name` maps them: a leaf's uplinks, a spine's ports.
std::set<std::string> fabricPorts(const plan::Switch& sw,
                                  const std::function<std::string(const std::string&)>& name) {
    std::set<std::string> out;
    for (const auto& p : sw.ports)
        if (p.role != plan::PortRole::Host) out.insert(name(p.name));
    return out;
}

std::set<std::string> names(const std::vector<ars::ArsInterface>& list) {
    std::set<std::string> out;
    for (const auto& i : list) out.insert(i.name);
    return out;
}

// What each lb must read back as, on a switch whose fabric ports are `fabric`.
void expectMode(const ars::ArsConfig& c, Lb lb, const std::set<std::string>& fabric,
                const std::string& what) {
    SCOPED_TRACE(what);
    if (lb == Lb::Ecmp || lb == Lb::Static) {
        EXPECT_FALSE(c.enabled);
        return;
    }
    ASSERT_TRUE(c.enabled);
    if (lb == Lb::Spray) {
        EXPECT_EQ(c.datapath.mode, ars::AssignMode::PacketRandom);
        EXPECT_EQ(c.selector, ars::NhgSelector::Global);
        EXPECT_TRUE(c.interfaces.empty());
        return;
    }
    EXPECT_EQ(c.datapath.mode, ars::AssignMode::FlowletQuality);
    EXPECT_EQ(c.datapath.idleTimeUs, 256U);
    EXPECT_EQ(c.datapath.global, lb == Lb::ArsGlobal);
    EXPECT_EQ(c.selector, ars::NhgSelector::Interface);
    EXPECT_EQ(c.object, "twinrail");
    EXPECT_EQ(names(c.interfaces), fabric);
    EXPECT_FALSE(fabric.empty());
}

}  // namespace

TEST(PlanArs, LbNamesRoundTrip) {
    for (Lb lb : kAll) EXPECT_EQ(plan::parseLb(plan::lbName(lb)), lb) << plan::lbName(lb);
    EXPECT_EQ(std::string(plan::lbName(Lb::ArsGlobal)), "ars-global");
    EXPECT_EQ(plan::parseLb("ARS"), std::nullopt);
    EXPECT_EQ(plan::parseLb("flowlet"), std::nullopt);
    EXPECT_EQ(std::string(plan::kLbNames), "ecmp|static|ars|ars-global|spray");
}

TEST(PlanArs, PlanFileKeepsTheLb) {
    for (Lb lb : kAll) {
        auto p = build("CX864E-N", 512, plan::Attach::Bond, lb);
        json j = plan::toJson(p);
        EXPECT_EQ(j["request"]["lb"], plan::lbName(lb));
        auto back = plan::planFromJson(j);
        ASSERT_TRUE(std::holds_alternative<plan::Plan>(back)) << plan::lbName(lb);
        EXPECT_EQ(std::get<plan::Plan>(back).request.lb, lb);
    }
    auto p = build("CX864E-N", 512);
    json j = plan::toJson(p);
    j["request"]["lb"] = "flowlets";
    auto bad = plan::planFromJson(j);
    ASSERT_TRUE(std::holds_alternative<plan::SizingError>(bad));
    EXPECT_NE(std::get<plan::SizingError>(bad).message.find(
                  "\"flowlets\" is not one of ecmp|static|ars|ars-global|spray"),
              std::string::npos)
        << std::get<plan::SizingError>(bad).message;
}

TEST(PlanArs, EveryLinuxSwitchReadsBackItsMode) {
    for (auto attach : {plan::Attach::Bond, plan::Attach::Routed, plan::Attach::EvpnMh}) {
        for (Lb lb : kAll) {
            if (attach == plan::Attach::EvpnMh && lb == Lb::Static) continue;
            auto p = build("CX864E-N", 512, attach, lb);
            for (const auto& sw : p.switches) {
                json db = plan::configDb(p, sw);
                const std::string what =
                    std::string(plan::attachName(attach)) + " " + plan::lbName(lb) + " " + sw.name;
                auto c = readBack(db, what);
                expectMode(c, lb, fabricPorts(sw, [](const std::string& n) { return n; }), what);
                if (c.enabled && lb != Lb::Spray) {
                    EXPECT_EQ(c.samplingIntervalUs, 1000U) << what;
                }
                // The hash row carries the algorithm only: the switch keeps its fields.
                if (lb == Lb::Spray) {
                    EXPECT_EQ(db["SWITCH_HASH"], json::parse(R"({"GLOBAL":
                        {"ecmp_hash_algorithm": "RANDOM"}})"));
                } else {
                    EXPECT_FALSE(db.contains("SWITCH_HASH")) << what;
                }
                EXPECT_EQ(db.contains("GLOBAL_ARS"), lb == Lb::ArsGlobal) << what;
                EXPECT_EQ(db.contains("ARS_PROFILE"), lb == Lb::Ars || lb == Lb::ArsGlobal);
                // Global ARS handles congestion itself: pathqd carries capacity alone.
                EXPECT_EQ(db["PATHQD"]["global"].value("max_penalty", "unset"),
                          lb == Lb::ArsGlobal ? "0" : "unset")
                    << what;
            }
        }
    }
}

TEST(PlanArs, EverySonicOverlayReadsBackItsModeUnderEthernetNames) {
    const plan::Sku sku = catalogSku("CX864E-N");
    for (Lb lb : {Lb::Ecmp, Lb::Static, Lb::Spray}) {
        auto p = build("CX864E-N", 1024, plan::Attach::Bond, lb);
        for (const auto& sw : p.switches) {
            auto c = plan::sonicSwitchConfig(p, sw, sku, {});
            ASSERT_TRUE(std::holds_alternative<plan::SonicSwitchConfig>(c))
                << std::get<std::string>(c);
            const json& overlay = std::get<plan::SonicSwitchConfig>(c).overlay;
            const std::string what = std::string(plan::lbName(lb)) + " " + sw.name;
            auto mapped = plan::mapPorts(sku, sw);
            const auto& ports = std::get<plan::PortMap>(mapped);
            auto cfg = readBack(overlay, what);
            expectMode(cfg, lb,
                       fabricPorts(sw, [&](const std::string& n) { return ports.names.at(n); }),
                       what);
            EXPECT_FALSE(overlay.contains("ARS_PROFILE")) << what;
        }
    }
}

// No SONiC release models the Local ARS tables or runs them: --lb ars and ars-global are
// refused by name on every release, before anything is written.
TEST(PlanArs, ArsOnSonicIsRefusedOnEveryRelease) {
    const plan::Sku sku = catalogSku("CX864E-N");
    for (Lb lb : {Lb::Ars, Lb::ArsGlobal}) {
        auto p = build("CX864E-N", 512, plan::Attach::Bond, lb);
        for (auto release : plan::sonicReleases()) {
            const plan::SonicOptions options{release};
            auto why = plan::sonicRefusal(p, options);
            ASSERT_TRUE(why.has_value()) << plan::lbName(lb);
            EXPECT_NE(why->find("--lb " + std::string(plan::lbName(lb)) + " on SONiC " +
                                plan::sonicReleaseName(release) +
                                ": this release has no YANG model for ARS_PROFILE"),
                      std::string::npos)
                << *why;
            auto c = plan::sonicSwitchConfig(p, p.switches.front(), sku, options);
            EXPECT_TRUE(std::holds_alternative<std::string>(c));
        }
    }
}

// ---- SONiC's YANG check on the overlays, and the errors it gives ----

namespace {

std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    return out;
}

// The Linux plan's ARS rows under the SONiC port names of `sw`, merged into `overlay`:
// what an ARS overlay would hold, to judge against the models.
json withArsRows(const plan::Plan& p, const plan::Switch& sw, const plan::Sku& sku, json overlay) {
    const json linux = plan::configDb(p, sw);
    const auto mapped = plan::mapPorts(sku, sw);
    const auto& names = std::get<plan::PortMap>(mapped).names;
    for (const char* t : {"ARS_PROFILE", "ARS_OBJECT", "GLOBAL_ARS"})
        if (linux.contains(t)) overlay[t] = linux[t];
    for (const auto& [port, row] : linux["ARS_INTERFACES"].items())
        overlay["ARS_INTERFACES"][names.at(port)] = row;
    overlay["ARS_PROFILE"]["twinrail"].erase("sampling_interval");  // SONiC's default
    return overlay;
}

}  // namespace

TEST(PlanArsYang, SprayPassesSonicsModelsAndArsRowsFailThemAsConfigReloadWould) {
    if (!fs::exists(kSonicModels)) GTEST_SKIP() << "no SONiC models at " << kSonicModels;
    YangChecker sonicAndPackage(kSonicModels, kOurModels);
    YangChecker withLinuxModels({kSonicModels, kOurModels, kLinuxModels});
    size_t checked = 0;
    for (const char* model : {"CX864E-N", "CX732Q-N"}) {
        const plan::Sku sku = catalogSku(model);
        for (auto attach : {plan::Attach::Bond, plan::Attach::Routed}) {
            auto p = build(model, 512, attach, Lb::Spray);
            auto ars = build(model, 512, attach, Lb::ArsGlobal);
            for (const auto& sw : p.switches) {
                if (sw.index != 1) continue;  // a leaf and a spine of each plane
                auto c = plan::sonicSwitchConfig(p, sw, sku, {});
                ASSERT_TRUE(std::holds_alternative<plan::SonicSwitchConfig>(c));
                const auto& cfg = std::get<plan::SonicSwitchConfig>(c);
                const json base = plan::sonicBaseConfigDb(sku, cfg.breakouts);
                const std::string what = std::string(model) + " " + sw.name;
                EXPECT_EQ(sonicAndPackage.check(base, cfg.overlay), std::vector<std::string>{})
                    << what;
                const json arsOverlay =
                    withArsRows(ars, *ars.findSwitch(sw.name), sku, cfg.overlay);
                auto refused = sonicAndPackage.check(base, arsOverlay);
                ASSERT_EQ(refused.size(), 1U) << what << ":\n" << joined(refused);
                EXPECT_NE(refused.front().find("missing yang models"), std::string::npos);
                EXPECT_NE(refused.front().find("ARS_PROFILE"), std::string::npos);
                // twinrail's Linux model of the tables takes them: the shapes are SONiC's.
                EXPECT_EQ(withLinuxModels.check(base, arsOverlay), std::vector<std::string>{})
                    << what;
                ++checked;
            }
        }
    }
    EXPECT_GE(checked, 16U);  // 2 models x 2 attachments x 2 planes x leaf, spine
}

TEST(PlanArsYang, TheModelsRefuseWhatSonicWould) {
    if (!fs::exists(kSonicModels)) GTEST_SKIP() << "no SONiC models at " << kSonicModels;
    YangChecker checker({kSonicModels, kOurModels, kLinuxModels});
    const plan::Sku sku = catalogSku("CX864E-N");
    auto p = build("CX864E-N", 512, plan::Attach::Bond, Lb::Spray);
    auto arsPlan = build("CX864E-N", 512, plan::Attach::Bond, Lb::ArsGlobal);
    const plan::Switch& leaf = p.switches.front();
    const auto cfg = std::get<plan::SonicSwitchConfig>(plan::sonicSwitchConfig(p, leaf, sku, {}));
    const json overlay = withArsRows(arsPlan, arsPlan.switches.front(), sku, cfg.overlay);
    const json base = plan::sonicBaseConfigDb(sku, cfg.breakouts);
    ASSERT_EQ(checker.check(base, overlay), std::vector<std::string>{});
    struct Fault {
        const char* what;
        std::function<void(json&)> change;
        std::string expected;  // a part of the first problem
    };
    const Fault faults[] = {
        {"idle time out of range",
         [](json& o) { o["ARS_OBJECT"]["twinrail"]["flowlet_idle_time"] = "4096"; },
         "ARS_OBJECT|twinrail"},
        {"SONiC's old per_packet",
         [](json& o) { o["ARS_OBJECT"]["twinrail"]["assign_mode"] = "per_packet"; },
         "ARS_OBJECT|twinrail"},
        {"a second profile", [](json& o) { o["ARS_PROFILE"]["other"] = json::object(); },
         "ARS_PROFILE"},
        {"an interface that is not a port",
         [](json& o) { o["ARS_INTERFACES"]["Ethernet9999"] = json::object(); },
         "ARS_INTERFACES|Ethernet9999"},
        {"an object that does not exist",
         [](json& o) { o["GLOBAL_ARS"]["nothing"] = json::object(); }, "GLOBAL_ARS|nothing"},
        {"a boolean that is not one",
         [](json& o) { o["ARS_PROFILE"]["twinrail"]["ipv6_enable"] = "yes"; },
         "ARS_PROFILE|twinrail"},
        {"a hash algorithm sonic-hash.yang lacks",
         [](json& o) { o["SWITCH_HASH"]["GLOBAL"]["ecmp_hash_algorithm"] = "SPRAY"; },
         "SWITCH_HASH|GLOBAL"},
    };
    for (const auto& f : faults) {
        json o = overlay;
        f.change(o);
        auto problems = checker.check(base, o);
        ASSERT_FALSE(problems.empty()) << f.what;
        EXPECT_NE(problems.front().find(f.expected), std::string::npos)
            << f.what << ": " << joined(problems);
        // libs/ars refuses the same document (SONiC's YANG and arsd agree).
        const json merged = sonic::mergeConfigDb(base, o).merged;
        EXPECT_TRUE(std::holds_alternative<std::string>(ars::parseArsConfig(merged))) << f.what;
    }
}
