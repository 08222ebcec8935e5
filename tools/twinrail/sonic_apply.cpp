#include "sonic_apply.h"

#include <filesystem>
#include <fstream>
#include <iostream>

#include "sonic_check.h"
#include "twinrail/common/names.h"
#include "twinrail/common/sysexits.h"
#include "twinrail/plan/sonic_apply.h"
#include "twinrail/sonic/check.h"

namespace twinrail::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kUsage =
    R"(usage: twinrail sonic-apply SWITCH_DIR --running FILE --out DIR [--yang-dir DIR]...
  Turns a switch's plan (SWITCH_DIR: configs/<switch> of `twinrail-plan --nos sonic`:
  config_db.overlay.json, frr.conf, breakouts.json, sonic-target.json) and the switch's
  running config (FILE: `show runningconfiguration all` there) into the switch's
  deployment, in SONiC's order, with SONiC's own CLI (docs/sonic.md, "Deploying"):
    DIR/apply.sh                 the steps; run it on the switch as root
    DIR/config_db.overlay.json   what its `config load` step merges
    DIR/frr.conf                 the bgp container's split-unified frr.conf
    DIR/config_db.target.json    CONFIG_DB after the steps (as checked)
    DIR/deletions.txt            the rows it deletes, and why
    DIR/config_db.patch.json     the same change for `config apply-patch`, when no
                                 breakout or QoS reload is needed (a deployed switch)
  The target must pass the release's YANG models and twinrail's (--yang-dir, repeatable;
  default /usr/local/yang-models and /usr/share/twinrail/yang) and orchagent's interface
  overlap rule; nothing is written otherwise.
Exit codes: 0 written; 64 usage; 65 refused (the reason, or every YANG error); 66 a file
or YANG directory cannot be read; 73 DIR cannot be written.
)";

struct Args {
    std::string switchDir;
    std::string running;
    std::string out;
    std::vector<std::string> yangDirs;
};

std::optional<Args> parse(const std::vector<std::string>& args, std::string& error) {
    Args a;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& w = args[i];
        if (w == "--running" || w == "--out" || w == "--yang-dir") {
            if (i + 1 >= args.size()) {
                error = w + " needs a value";
                return std::nullopt;
            }
            const std::string& v = args[++i];
            if (w == "--running") a.running = v;
            if (w == "--out") a.out = v;
            if (w == "--yang-dir") a.yangDirs.push_back(v);
        } else if (!w.empty() && w[0] == '-') {
            error = "unknown option " + w;
            return std::nullopt;
        } else if (a.switchDir.empty()) {
            a.switchDir = w;
        } else {
            error = "one SWITCH_DIR only";
            return std::nullopt;
        }
    }
    if (a.switchDir.empty() || a.running.empty() || a.out.empty()) {
        error = "SWITCH_DIR, --running and --out are needed";
        return std::nullopt;
    }
    return a;
}

std::optional<std::string> readText(const fs::path& p, std::string& out) {
    std::ifstream in(p);
    if (!in) return p.string() + ": cannot read it";
    out.assign(std::istreambuf_iterator<char>(in), {});
    return std::nullopt;
}

// The plan's files and the running config; a failure as (code, message).
std::variant<plan::SonicApplyInput, std::pair<int, std::string>> readInput(const Args& a,
                                                                           std::string& frr) {
    plan::SonicApplyInput in;
    const fs::path dir = a.switchDir;
    Read running = readJson(a.running);
    Read overlay = readJson((dir / "config_db.overlay.json").string());
    Read breakouts = readJson((dir / "breakouts.json").string());
    Read target = readJson((dir / "sonic-target.json").string());
    for (const Read* r : {&running, &overlay, &breakouts, &target})
        if (r->code != exitcode::kOk) return std::pair{r->code, r->error};
    if (auto why = readText(dir / "frr.conf", frr)) return std::pair{exitcode::kNoInput, *why};
    auto b = plan::parseSonicBreakouts(breakouts.doc);
    if (auto* why = std::get_if<std::string>(&b)) return std::pair{exitcode::kDataErr, *why};
    auto o = plan::parseSonicTarget(target.doc);
    if (auto* why = std::get_if<std::string>(&o)) return std::pair{exitcode::kDataErr, *why};
    if (!overlay.doc.is_object() || !running.doc.is_object())
        return std::pair{exitcode::kDataErr, std::string("a config_db.json is not an object")};
    in.running = std::move(running.doc);
    in.overlay = std::move(overlay.doc);
    in.breakouts = std::get<0>(b);
    in.options = std::get<plan::SonicOptions>(o);
    in.frrConf = frr;
    return in;
}

// Every word of every step goes into a bash script: quoted there, and plain text only.
std::optional<std::string> unsafeWord(const std::vector<plan::SonicApplyStep>& steps) {
    for (const auto& s : steps) {
        for (const auto& w : s.argv) {
            if (w.empty() || w.size() > 4096 || names::printable(w, 5000) != w)
                return "a command word \"" + names::printable(w, 80) + "\" is not plain text";
        }
    }
    return std::nullopt;
}

// YANG (the release's models and ours) and orchagent's overlap rule on the target.
std::vector<std::string> checkTarget(const json& target, const std::vector<std::string>& dirs,
                                     int& code) {
    sonic::YangContext yang;
    if (auto why = loadYangDirs(yang, dirs, "twinrail sonic-apply")) {
        code = exitcode::kNoInput;
        return {*why};
    }
    std::vector<std::string> problems;
    auto schema = yang.schemaModel();
    auto report = sonic::checkConfigDb(yang, schema, target);
    for (const auto& p : report.problems) problems.push_back(p.str());
    if (!report.tablesWithoutModel.empty()) problems.push_back(report.missingModelsLine());
    for (auto& p : plan::overlappingRouterInterfaces(target)) problems.push_back(std::move(p));
    code = problems.empty() ? exitcode::kOk : exitcode::kDataErr;
    return problems;
}

int writeBundle(const Args& a, const plan::SonicApply& s, const std::string& frr,
                const json& overlay, const plan::SonicOptions& options) {
    std::error_code ec;
    fs::create_directories(a.out, ec);
    const fs::path out = a.out;
    const std::string header = "# twinrail sonic-apply, for SONiC " +
                               plan::sonicReleaseName(options.release) +
                               ": run on the switch, as root. What each step does and why: "
                               "docs/sonic.md (Deploying).\n";
    std::string deletions;
    for (const auto& [key, why] : s.deletions) deletions += key + "\t" + why + "\n";
    const std::vector<std::pair<std::string, std::string>> files = {
        {"apply.sh", plan::sonicApplyScript(s.steps, header)},
        {"config_db.overlay.json", overlay.dump(2) + "\n"},
        {"frr.conf", frr},
        {"config_db.target.json", s.target.dump(2) + "\n"},
        {"deletions.txt", deletions},
        {"config_db.patch.json", s.patchApplies ? s.patch.dump(2) + "\n" : ""}};
    fs::remove(out / "config_db.patch.json", ec);  // from an earlier run, maybe
    for (const auto& [name, text] : files) {
        if (name == "config_db.patch.json" && !s.patchApplies) continue;
        std::ofstream f(out / name, std::ios::trunc);
        f << text;
        if (!f) {
            std::cerr << "twinrail sonic-apply: " << (out / name).string() << ": cannot write\n";
            return exitcode::kCantCreate;
        }
    }
    fs::permissions(out / "apply.sh", fs::perms::owner_exec, fs::perm_options::add, ec);
    std::cout << "wrote " << out.string() << "/apply.sh: " << s.steps.size() << " steps, "
              << s.deletions.size() << " rows deleted\n";
    return exitcode::kOk;
}

}  // namespace

int sonicApplyCommand(const std::vector<std::string>& args) {
    for (const auto& w : args) {
        if (w == "--help" || w == "-h") {
            std::cout << kUsage;
            return exitcode::kOk;
        }
    }
    std::string error;
    auto a = parse(args, error);
    if (!a) {
        std::cerr << "twinrail sonic-apply: " << error << "\n" << kUsage;
        return exitcode::kUsage;
    }
    std::string frr;
    auto in = readInput(*a, frr);
    if (auto* e = std::get_if<std::pair<int, std::string>>(&in)) {
        std::cerr << "twinrail sonic-apply: " << e->second << "\n";
        return e->first;
    }
    const auto& input = std::get<plan::SonicApplyInput>(in);
    auto applied = plan::sonicApply(input);
    if (auto* why = std::get_if<std::string>(&applied)) {
        std::cerr << "twinrail sonic-apply: " << *why << "\n";
        return exitcode::kDataErr;
    }
    const auto& s = std::get<plan::SonicApply>(applied);
    if (auto why = unsafeWord(s.steps)) {
        std::cerr << "twinrail sonic-apply: " << *why << "\n";
        return exitcode::kDataErr;
    }
    int code = exitcode::kOk;
    auto problems =
        checkTarget(s.target, a->yangDirs.empty() ? defaultYangDirs() : a->yangDirs, code);
    if (code != exitcode::kOk) {
        for (const auto& p : problems) std::cerr << "twinrail sonic-apply: " << p << "\n";
        return code;
    }
    return writeBundle(*a, s, frr, input.overlay, input.options);
}

}  // namespace twinrail::cli
