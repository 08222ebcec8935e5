#include "twinrail/service/yang_check.h"

#include <filesystem>

#include "twinrail/sonic/check.h"

namespace twinrail::service {
namespace {

constexpr const char* kSonicYangDir = "/usr/local/yang-models";
constexpr const char* kTwinrailYangDir = "/usr/share/twinrail/yang";

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
    return out;
}

bool isDirectory(const std::string& path) {
    std::error_code ec;
    return std::filesystem::is_directory(path, ec);
}

}  // namespace

YangCheckOutcome checkConfigYang(const std::vector<std::string>& tables,
                                 const std::vector<std::string>& yangDirs,
                                 const nlohmann::json& doc) {
    YangCheckOutcome out;
    std::vector<std::string> present;
    for (const auto& t : tables)
        if (doc.is_object() && doc.contains(t)) present.push_back(t);
    if (present.empty()) return out;  // nothing of ours to check

    std::vector<std::string> dirs;
    if (!yangDirs.empty()) {
        for (const auto& d : yangDirs) {
            if (!isDirectory(d)) {
                out.error = "--yang-dir " + d + ": no such directory";
                return out;
            }
        }
        dirs = yangDirs;
    } else {
        for (const char* d : {kSonicYangDir, kTwinrailYangDir})
            if (isDirectory(d)) dirs.emplace_back(d);
    }
    if (dirs.empty()) {
        out.notices.push_back(std::string("YANG check skipped: neither ") + kSonicYangDir +
                              " (SONiC's models) nor " + kTwinrailYangDir +
                              " (twinrail's) exists; the daemon's own check passed");
        return out;
    }

    sonic::YangContext yang;
    std::vector<std::string> loadProblems;
    for (const auto& d : dirs)
        for (auto& p : yang.loadDirectory(d)) loadProblems.push_back(std::move(p));
    auto schema = yang.schemaModel();
    std::vector<std::string> modelled, unmodelled;
    for (const auto& t : present) (schema.table(t) ? modelled : unmodelled).push_back(t);
    if (modelled.empty()) {
        out.notices.push_back("YANG check skipped: no YANG model of " + joined(present) +
                              " loaded from " + joined(dirs) +
                              " (twinrail's modules import SONiC's, so they load only beside "
                              "SONiC's models); the daemon's own check passed");
        for (const auto& p : loadProblems) out.notices.push_back("YANG: " + p);
        return out;
    }
    auto checked = sonic::checkTables(yang, schema, doc, present);
    for (const auto& u : checked.unchecked) out.notices.push_back("YANG: not checked: " + u);
    std::string lines;
    for (const auto& p : checked.report.problems) lines += "\n  " + p.str();
    if (!checked.report.tablesWithoutModel.empty())
        lines += "\n  " + checked.report.missingModelsLine();
    if (!lines.empty()) out.error = "fails YANG validation:" + lines;
    return out;
}

}  // namespace twinrail::service
