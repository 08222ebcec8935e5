// What the sonic-check tests share (sonic_check_test.cpp, sonic_check_cli_test.cpp,
// sonic_check_sonic_test.cpp): where the fixtures are, and a report as one line a problem.
#pragma once

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "twinrail/sonic/check.h"

namespace twinrail::sonic_check_test {

inline const std::filesystem::path kSource = TWINRAIL_SOURCE_DIR;
inline const std::filesystem::path kFixture = kSource / "tests/fixtures/sonic-check";
inline const std::filesystem::path kShared = kSource / "../shared/fixtures/sonic-yang";

inline nlohmann::json readJson(const std::filesystem::path& p) {
    std::ifstream in(p);
    return nlohmann::json::parse(in);
}

inline std::vector<std::string> lines(const twinrail::sonic::CheckReport& r) {
    std::vector<std::string> out;
    for (const auto& p : r.problems) out.push_back(p.str());
    return out;
}

}  // namespace twinrail::sonic_check_test
