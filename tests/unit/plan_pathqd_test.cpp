// The planner's pathqd tables must be what pathqd accepts, on leaves and spines.
#include <gtest/gtest.h>

#include "config.h"  // pathqd's parser
#include "twinrail/plan/outputs.h"

using namespace twinrail;

TEST(PlannerPathqd, GeneratedConfigIsAcceptedWithRolesAndCapacity) {
    plan::Request r;
    r.gpus = 1024;
    r.leafModel = *plan::findModel("CX864E-N");
    auto built = plan::buildPlan(r);
    ASSERT_TRUE(std::holds_alternative<plan::Plan>(built));
    const auto& p = std::get<plan::Plan>(built);
    for (const char* name : {"p1-leaf1", "p2-spine4"}) {
        auto parsed = pathqd::parseConfig(plan::configDb(p, *p.findSwitch(name)));
        ASSERT_TRUE(std::holds_alternative<pathqd::Config>(parsed))
            << name << ": " << std::get<pathqd::ConfigError>(parsed).str();
        const auto& cfg = std::get<pathqd::Config>(parsed);
        EXPECT_EQ(cfg.ports.size(), name[3] == 'l' ? 64u : 128u) << name;
        EXPECT_DOUBLE_EQ(cfg.model.referenceBps, 400e9);
        for (const auto& [port, pc] : cfg.ports) {
            EXPECT_EQ(pc.role, name[3] == 'l' ? pathqd::Role::Uplink : pathqd::Role::Downlink);
            ASSERT_TRUE(pc.capacityBps.has_value()) << port;
            EXPECT_DOUBLE_EQ(*pc.capacityBps, 400e9) << port;
        }
    }
}
