// The YANG check `twinrail sonic-check --base` runs, for the planner's tests: an overlay merged
// onto a base config_db.json, then SONiC's models plus twinrail's (SONiC's loaded first: ours
// import sonic-port and sonic-vlan from them), and no table without a model.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "twinrail/sonic/check.h"
#include "twinrail/sonic/merge.h"
#include "twinrail/sonic/yang_context.h"

namespace twinrail::plansonic_test {

struct YangChecker {
    sonic::YangContext yang;
    sonic::SchemaModel schema;
    YangChecker(const std::filesystem::path& sonicModels, const std::filesystem::path& ourModels)
        : YangChecker(std::vector<std::filesystem::path>{sonicModels, ourModels}) {}
    // Every directory in order (SONiC's first: ours import its modules).
    explicit YangChecker(const std::vector<std::filesystem::path>& dirs) {
        for (const auto& dir : dirs) {
            auto failed = yang.loadDirectory(dir.string());
            EXPECT_EQ(failed, std::vector<std::string>{}) << dir;
        }
        schema = yang.schemaModel();
    }
    // Every problem as one line each, and the missing-models line; empty when valid.
    std::vector<std::string> check(const nlohmann::json& base,
                                   const nlohmann::json& overlay) const {
        auto merged = sonic::mergeConfigDb(base, overlay);
        std::vector<std::string> out;
        for (const auto& p : merged.problems) out.push_back("merge: " + p.str());
        auto report = sonic::checkConfigDb(yang, schema, merged.merged);
        for (const auto& p : report.problems) out.push_back(p.str());
        if (!report.tablesWithoutModel.empty()) out.push_back(report.missingModelsLine());
        return out;
    }
};

}  // namespace twinrail::plansonic_test
