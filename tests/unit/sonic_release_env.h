// What the per-release tests share (sonic_release_test.cpp, sonic_deploy_test.cpp): where
// SONiC's own files are, the package's YANG modules alone, and running a command.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plan_sonic_helpers.h"
#include "sonic_package_helpers.h"
#include "sonic_release_facts.h"
#include "twinrail/plan/sonic_release.h"

namespace twinrail::sonicrelease_test {

namespace plan = twinrail::plan;
using nlohmann::json;

inline const fs::path kReleases = TWINRAIL_SONIC_RELEASES;
inline const fs::path kOwnRelease = TWINRAIL_OWN_RELEASES;
inline const fs::path kProto = TWINRAIL_PROTO_DIR;
inline const fs::path kManifestIn = TWINRAIL_MANIFEST_IN;

inline bool haveShared() {
    if (fs::exists(kReleases / "README.md")) return true;
    twinrail::plansonic_test::sharedMissing(kReleases.string());
    return false;
}

inline fs::path dirOf(plan::SonicRelease r) {
    return kReleases / plan::sonicReleaseName(r);
}

// The YANG modules the package installs (manifest.in.json "yang-modules"), alone in a
// fresh folder: what sonic-package-manager adds to the switch's models.
inline fs::path packageModels() {
    static const fs::path dir = [] {
        const fs::path d =
            fs::temp_directory_path() / ("twinrail-package-yang-" + std::to_string(::getpid()));
        fs::create_directories(d);
        auto manifest = json::parse(slurp(kManifestIn));
        for (const auto& m : manifest["yang-modules"]) {
            const std::string name = m.get<std::string>() + ".yang";
            fs::copy_file(kProto / name, d / name, fs::copy_options::overwrite_existing);
        }
        return d;
    }();
    return dir;
}

// Running a command: the package tests' (sonic_package_helpers.h).
using Ran = sonic_package_test::RunResult;
inline Ran runCommand(const std::vector<std::string>& argv) {
    return sonic_package_test::run(argv);
}

inline void writeJson(const fs::path& p, const json& j) {
    std::ofstream(p) << j.dump(2) << "\n";
}

}  // namespace twinrail::sonicrelease_test
