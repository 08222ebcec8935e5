#include "sonic_check.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "twinrail/common/sysexits.h"
#include "twinrail/sonic/check.h"
#include "twinrail/sonic/merge.h"

namespace twinrail::cli {
namespace {

constexpr const char* kSonicCheckUsage =
    R"(usage: twinrail sonic-check FILE [--base FILE] [--yang-dir DIR]...
  Checks the config_db.json FILE against the YANG modules, as SONiC's `config reload`
  does: every table needs a model and every row must validate.
  --base FILE     merge FILE onto this base config_db.json first (table by table, row by
                  row, field by field: FILE's fields replace or extend the base's)
  --yang-dir DIR  load the *.yang modules of DIR (repeatable; the first DIR holding a
                  module wins). Default: /usr/local/yang-models (when it exists) and
                  /usr/share/twinrail/yang
Exit codes: 0 valid; 65 invalid (one line per error: TABLE|key: field: message);
66 a file or YANG directory cannot be read; 64 usage.
)";

struct Args {
    std::string file;
    std::string base;
    std::vector<std::string> yangDirs;
};

std::optional<Args> parseArgs(const std::vector<std::string>& args, std::string& error) {
    Args a;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& w = args[i];
        if (w == "--base" || w == "--yang-dir") {
            if (i + 1 >= args.size()) {
                error = w + " needs a value";
                return std::nullopt;
            }
            (w == "--base" ? a.base : a.yangDirs.emplace_back()) = args[++i];
        } else if (!w.empty() && w[0] == '-') {
            error = "unknown option " + w;
            return std::nullopt;
        } else if (a.file.empty()) {
            a.file = w;
        } else {
            error = "one FILE only (" + a.file + ", " + w + ")";
            return std::nullopt;
        }
    }
    if (a.file.empty()) {
        error = "no FILE";
        return std::nullopt;
    }
    return a;
}

}  // namespace

Read readJson(const std::string& path) {
    std::ifstream in(path);
    if (!in) return {{}, path + ": " + std::strerror(errno), exitcode::kNoInput};
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    if (doc.is_discarded()) return {{}, path + ": not valid JSON", exitcode::kDataErr};
    return {std::move(doc), "", exitcode::kOk};
}

std::vector<std::string> defaultYangDirs() {
    std::vector<std::string> dirs;
    std::error_code ec;
    if (std::filesystem::is_directory(kSonicYangDir, ec)) dirs.emplace_back(kSonicYangDir);
    dirs.emplace_back(kTwinrailYangDir);
    return dirs;
}

std::optional<std::string> loadYangDirs(sonic::YangContext& yang,
                                        const std::vector<std::string>& dirs,
                                        const std::string& tool) {
    for (const auto& dir : dirs) {
        std::error_code ec;
        if (!std::filesystem::is_directory(dir, ec)) return dir + ": no such YANG directory";
        // A module that does not load is reported, and its tables then lack a model.
        for (const auto& line : yang.loadDirectory(dir))
            std::cerr << tool << ": warning: " << line << "\n";
    }
    return std::nullopt;
}

int sonicCheckCommand(const std::vector<std::string>& args) {
    for (const auto& w : args) {
        if (w == "--help" || w == "-h") {
            std::cout << kSonicCheckUsage;
            return exitcode::kOk;
        }
    }
    std::string usageError;
    auto parsed = parseArgs(args, usageError);
    if (!parsed) {
        std::cerr << "twinrail sonic-check: " << usageError << "\n" << kSonicCheckUsage;
        return exitcode::kUsage;
    }
    Read overlay = readJson(parsed->file);
    if (overlay.code != exitcode::kOk) {
        std::cerr << "twinrail sonic-check: " << overlay.error << "\n";
        return overlay.code;
    }
    nlohmann::json doc = std::move(overlay.doc);
    std::vector<sonic::Problem> mergeProblems;
    if (!parsed->base.empty()) {
        Read base = readJson(parsed->base);
        if (base.code != exitcode::kOk) {
            std::cerr << "twinrail sonic-check: " << base.error << "\n";
            return base.code;
        }
        auto merged = sonic::mergeConfigDb(base.doc, doc);
        doc = std::move(merged.merged);
        mergeProblems = std::move(merged.problems);
    }

    sonic::YangContext yang;
    auto dirs = parsed->yangDirs.empty() ? defaultYangDirs() : parsed->yangDirs;
    if (auto why = loadYangDirs(yang, dirs, "twinrail sonic-check")) {
        std::cerr << "twinrail sonic-check: " << *why << "\n";
        return exitcode::kNoInput;
    }
    auto schema = yang.schemaModel();
    auto report = sonic::checkConfigDb(yang, schema, doc);
    report.problems.insert(report.problems.begin(), mergeProblems.begin(), mergeProblems.end());
    for (const auto& p : report.problems) std::cout << p.str() << "\n";
    if (!report.tablesWithoutModel.empty()) std::cout << report.missingModelsLine() << "\n";
    if (!report.ok() || !mergeProblems.empty()) return exitcode::kDataErr;
    std::cout << parsed->file << ": valid (" << (doc.is_object() ? doc.size() : 0) << " tables, "
              << yang.modules().size() << " YANG modules)\n";
    return exitcode::kOk;
}

}  // namespace twinrail::cli
