// The servers' files the planner writes per attachment: both bonded attachments ship
// planesteer (issue 24), routed NICs do not.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "plan_files.h"
#include "plan_sonic_helpers.h"

namespace plan = twinrail::plan;
namespace tool = twinrail::plantool;
using twinrail::plansonic_test::build;

// Both bonded attachments ship planesteer, with every NIC's bond in its config, and say so
// in the netplan; routed NICs are steered by BGP and get none.
TEST(PlanServerFiles, EveryBondedAttachmentShipsPlanesteer) {
    for (auto attach : {plan::Attach::Bond, plan::Attach::EvpnMh, plan::Attach::Routed}) {
        auto p = build("CX864E-N", 512, attach, plan::Request::Lb::Ecmp);
        auto files = std::get<std::vector<tool::OutFile>>(tool::planFiles(p, "/tmp/unused-P"));
        size_t steered = 0;
        for (const auto& f : files) {
            if (f.path.filename() == "60-twinrail.yaml") {
                EXPECT_NE(f.text.find("planesteer is part of this attachment"), std::string::npos);
            }
            if (f.path.filename() != "planesteer.json") continue;
            ++steered;
            auto j = nlohmann::json::parse(f.text);
            std::string server = f.path.parent_path().parent_path().filename();
            const auto* srv = &p.servers[0];
            for (const auto& s : p.servers) {
                if (s.name == server) srv = &s;
            }
            EXPECT_EQ(j["PLANESTEER_BOND"].size(), srv->nics.size()) << f.path;
            EXPECT_EQ(j["PLANESTEER"]["global"]["active_interval_ms"], "20");
        }
        EXPECT_EQ(steered, attach == plan::Attach::Routed ? 0 : p.servers.size())
            << static_cast<int>(attach);
    }
}
