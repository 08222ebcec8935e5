// What a SONiC release's own files say, read the way a test can judge twinrail by them
// (../shared/fixtures/sonic-releases/<release>/, README.md there): the FRR container's
// start lines and names, and the release's YANG model set. The readers are deliberately
// plain (text search, libyang on the release's own models), so they share no code with
// what they check.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "twinrail/sonic/check.h"
#include "twinrail/sonic/merge.h"
#include "twinrail/sonic/yang_context.h"

namespace twinrail::sonicrelease_test {

namespace fs = std::filesystem;

inline std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Every `command=` line of docker-fpm-frr's supervisord files that starts `daemon`
// (/usr/lib/frr/<daemon>), with Jinja's {{ ... }} blocks removed.
inline std::vector<std::string> frrCommandLines(const fs::path& release,
                                                const std::string& daemon) {
    std::vector<std::string> out;
    const fs::path dir = release / "sonic-buildimage/dockers/docker-fpm-frr/frr/supervisord";
    std::error_code ec;
    for (const auto& f : fs::directory_iterator(dir, ec)) {
        std::istringstream in(slurp(f.path()));
        for (std::string line; std::getline(in, line);) {
            const std::string head = "command=/usr/lib/frr/" + daemon + " ";
            if (line.rfind(head, 0) != 0) continue;
            out.push_back(
                std::regex_replace(line.substr(head.size()), std::regex(R"(\{\{.*?\}\})"), ""));
        }
    }
    return out;
}

// `$(DOCKER_FPM_FRR)_<FIELD> = value` of rules/docker-fpm-frr.mk.
inline std::string fpmFrrRule(const fs::path& release, const std::string& field) {
    std::istringstream in(slurp(release / "sonic-buildimage/rules/docker-fpm-frr.mk"));
    const std::string head = "$(DOCKER_FPM_FRR)_" + field + " = ";
    for (std::string line; std::getline(in, line);)
        if (line.rfind(head, 0) == 0) return line.substr(head.size());
    return "";
}

// The release's YANG model set as a switch has it in /usr/local/yang-models: the rendered
// templates (sonic-types and the others most modules import) and the plain models, copied
// into one fresh folder (each side imports the other's modules; README.md's advice).
inline std::vector<fs::path> modelDirs(const fs::path& release) {
    const fs::path dir =
        fs::temp_directory_path() /
        ("twinrail-yang-" + release.filename().string() + "-" + std::to_string(::getpid()));
    if (!fs::exists(dir)) {
        fs::create_directories(dir);
        for (const fs::path& from :
             {release / "generated/yang-models",
              release / "sonic-buildimage/src/sonic-yang-models/yang-models"}) {
            for (const auto& f : fs::directory_iterator(from)) {
                if (f.path().extension() == ".yang")
                    fs::copy_file(f.path(), dir / f.path().filename(),
                                  fs::copy_options::overwrite_existing);
            }
        }
    }
    return {dir};
}

// A libyang context with a release's models, and optionally more directories after them
// (the package's), checking a config_db.json as `config reload` does.
struct ReleaseModels {
    sonic::YangContext yang;
    sonic::SchemaModel schema;
    explicit ReleaseModels(const std::vector<fs::path>& dirs) {
        for (const auto& d : dirs) {
            for (const auto& failed : yang.loadDirectory(d.string()))
                ADD_FAILURE() << "did not load: " << failed;
        }
        schema = yang.schemaModel();
    }
    // One line per problem; empty when the whole document validates.
    std::vector<std::string> check(const nlohmann::json& configDb) const {
        std::vector<std::string> out;
        auto report = sonic::checkConfigDb(yang, schema, configDb);
        for (const auto& p : report.problems) out.push_back(p.str());
        if (!report.tablesWithoutModel.empty()) out.push_back(report.missingModelsLine());
        return out;
    }
    bool accepts(const nlohmann::json& configDb) const { return check(configDb).empty(); }
};

}  // namespace twinrail::sonicrelease_test
