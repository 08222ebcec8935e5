// The planner's fast-notice provisioning (twinrail/plan/notices.h): each plane's key goes
// to that plane's leaves only; a server gets only its NICs' receiver keys, which its
// planesteer reads back as the config it checks notices with.
#include <gtest/gtest.h>

#include "config.h"  // planesteer's
#include "twinrail/plan/notices.h"
#include "twinrail/plan/server_config.h"

namespace twinrail::plan {
namespace {

Plan labPlan() {
    Request r;
    r.attach = Attach::Bond;
    r.gpus = 4;
    r.gpusPerServer = 2;
    r.leafModel = {"lab-4x200G", 4, 200, {1}};
    r.spinesPerPlane = 2;
    return std::get<Plan>(buildPlan(r));
}

TEST(PlanNotices, EachPlanesKeyGoesToItsLeavesAndServersGetOnlyTheirOwnKeys) {
    const Plan p = labPlan();
    const NoticeKeys keys = freshNoticeKeys(p);
    ASSERT_EQ(keys.byPlane.size(), 2U);
    EXPECT_NE(keys.byPlane.at(1), keys.byPlane.at(2));
    for (const auto& sw : p.switches) {
        auto table = leafNoticeTable(p, sw, keys);
        if (sw.spine) {
            EXPECT_TRUE(table.is_null()) << sw.name;
            continue;
        }
        const auto& row = table["global"];
        EXPECT_EQ(row["key"], fnn::keyHex(keys.byPlane.at(sw.plane))) << sw.name;
        EXPECT_EQ(row["source"], sw.loopback);
        EXPECT_EQ(row["plane"], std::to_string(sw.plane));
        EXPECT_EQ(row["leaves"].get<std::string>().find(sw.loopback), std::string::npos)
            << "a leaf lists itself";
    }
    const Server& srv = p.servers.front();
    auto cfg = nlohmann::json::parse(planesteerConfig(p, srv));
    addPlanesteerNotices(cfg, p, srv, keys);
    const std::string text = cfg.dump();
    for (const auto& [plane, key] : keys.byPlane)
        EXPECT_EQ(text.find(fnn::keyHex(key)), std::string::npos) << "a plane key on a server";
    auto parsed = planesteer::parseConfig(cfg);
    ASSERT_TRUE(std::holds_alternative<planesteer::Config>(parsed))
        << std::get<service::ConfigError>(parsed).str();
    const auto& c = std::get<planesteer::Config>(parsed);
    EXPECT_EQ(c.noticePort, kDefaultNoticePort);
    EXPECT_EQ(c.noticeSenders.size(), 2U);
    for (const auto& nic : srv.nics) {
        const auto& bond = c.bonds.at(bondName(nic));
        for (const auto& port : nic.ports) {
            EXPECT_EQ(bond.noticeKeys.at(static_cast<uint8_t>(port.plane)),
                      fnn::receiverKey(keys.byPlane.at(port.plane), *IpAddr::parse(nic.address)));
        }
    }
}

TEST(PlanNotices, TheKeysFileReadsBackAndABadOneNamesTheFileNotTheKey) {
    const NoticeKeys keys = freshNoticeKeys(labPlan());
    auto back = noticeKeysFromJson(noticeKeysJson(keys), "keys.json");
    EXPECT_EQ(back.byPlane, keys.byPlane);
    EXPECT_EQ(back.port, keys.port);
    auto bad = noticeKeysJson(keys);
    const std::string secret = std::string(63, 'b') + "z";
    bad["planes"]["1"] = secret;
    try {
        noticeKeysFromJson(bad, "keys.json");
        FAIL() << "a bad key was read";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("keys.json"), std::string::npos);
        EXPECT_EQ(std::string(e.what()).find(secret.substr(0, 20)), std::string::npos);
    }
}

}  // namespace
}  // namespace twinrail::plan
