// The SONiC Application Extension package (packaging/sonic, docs/sonic-package.md), offline:
// the generated manifest against sonic-package-manager's schema (keys and types, encoded in
// tests/fixtures/sonic-package/manifest_schema.json), the labels against their sources
// (debian/, proto/), init-cfg through `twinrail sonic-check`, the supervisor and Dockerfile
// against the files they name, and the click plugins run with /usr/bin/python3 (Debian's
// python3-click) against a fake DB (tests/fixtures/sonic-package/run_plugin.py).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kSource = TWINRAIL_SOURCE_DIR;
const fs::path kPackaging = kSource / "packaging" / "sonic";
const fs::path kFixtures = kSource / "tests" / "fixtures" / "sonic-package";
const fs::path kYangStubs = kSource / "tests" / "fixtures" / "sonic-yang-stubs";
constexpr const char* kPython = "/usr/bin/python3";  // Debian's, with python3-click

std::string readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

void writeFile(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

struct RunResult {
    int exit = -1;
    std::string out;  // stdout and stderr
};

// Every argument single-quoted: the paths are the test's own, but a space must not split one.
RunResult run(const std::vector<std::string>& argv) {
    std::string command;
    for (const auto& arg : argv) {
        std::string quoted = "'";
        for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
        command += quoted + "' ";
    }
    command += "2>&1";
    RunResult result;
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) return result;
    std::array<char, 4096> buffer{};
    size_t n = 0;
    while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
        result.out.append(buffer.data(), n);
    int status = pclose(pipe);
    result.exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

class TempDir {
  public:
    TempDir() {
        std::string pattern = (fs::temp_directory_path() / "twinrail-sonic-pkg.XXXXXX").string();
        path_ = mkdtemp(pattern.data()) != nullptr ? fs::path(pattern) : fs::path();
    }
    ~TempDir() {
        std::error_code ec;
        if (!path_.empty()) fs::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const fs::path& path() const { return path_; }

  private:
    fs::path path_;
};

// Runs the generator; the manifest and labels land in `out`.
RunResult generate(const fs::path& out, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {kPython, (kPackaging / "gen_manifest.py").string(),
                                     "--out-dir", out.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run(argv);
}

json generatedManifest(const TempDir& dir) {
    RunResult r = generate(dir.path(), {"--yang-dir", (kFixtures / "yang").string()});
    EXPECT_EQ(r.exit, 0) << r.out;
    return json::parse(readFile(dir.path() / "manifest.json"), nullptr, false);
}

// --- sonic-package-manager's schema, as the fixture encodes it ---------------------------

bool kindMatches(const std::string& kind, const json& v) {
    static const std::regex semver(R"(^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$)");
    static const std::regex constraint(
        R"(^[A-Za-z0-9_-]+((\^|~|>=|<=|>|<|==|!=)(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*))?$)");
    if (kind == "string") return v.is_string();
    if (kind == "bool") return v.is_boolean();
    if (kind == "dict" || kind == "object") return v.is_object();
    if (kind == "array") return v.is_array();
    if (kind == "semver") return v.is_string() && std::regex_match(v.get<std::string>(), semver);
    if (kind == "constraint") {
        return v.is_object() ||
               (v.is_string() && std::regex_match(v.get<std::string>(), constraint));
    }
    if (kind == "string-or-list") {
        if (v.is_string()) return true;
        if (!v.is_array()) return false;
        return std::all_of(v.begin(), v.end(), [](const json& item) { return item.is_string(); });
    }
    return false;
}

// One line per problem, naming the manifest path. Unknown keys are errors here: the package
// manager drops them silently, which would hide a typo such as "reconcile".
void schemaErrors(const json& schema, const json& v, const std::string& where,
                  std::vector<std::string>& errors) {
    const std::string kind = schema.value("kind", "");
    if (!kindMatches(kind, v)) {
        errors.push_back(where + ": not a " + kind + ": " + v.dump());
        return;
    }
    if (kind == "array") {
        for (size_t i = 0; i < v.size(); ++i) {
            schemaErrors(schema["items"], v[i], where + "[" + std::to_string(i) + "]", errors);
        }
    } else if (kind == "object") {
        const json& fields = schema["fields"];
        for (const auto& [key, value] : v.items()) {
            if (!fields.contains(key)) {
                errors.push_back(where + "." + key + ": unknown key");
            } else {
                schemaErrors(fields[key], value, where + "." + key, errors);
            }
        }
        for (const auto& [key, spec] : fields.items()) {
            if (spec.value("required", false) && !v.contains(key))
                errors.push_back(where + "." + key + ": required, missing");
        }
    }
}

std::vector<std::string> manifestErrors(const json& manifest) {
    json schema = json::parse(readFile(kFixtures / "manifest_schema.json"));
    std::vector<std::string> errors;
    schemaErrors(schema, manifest, "manifest", errors);
    return errors;
}

TEST(SonicManifest, MatchesSonicPackageManagerSchema) {
    TempDir dir;
    json manifest = generatedManifest(dir);
    ASSERT_TRUE(manifest.is_object());
    auto errors = manifestErrors(manifest);
    EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors.front());
    // What install and the finalizer rely on, beyond types.
    EXPECT_EQ(manifest["service"]["name"], manifest["package"]["name"]);
    EXPECT_EQ(manifest["package"]["depends"][0], "database^1.0.0");
    EXPECT_TRUE(manifest["container"]["privileged"].get<bool>());
}

TEST(SonicManifest, SchemaCheckRefusesWrongTypesUnknownKeysAndMissingFields) {
    TempDir dir;
    const json good = generatedManifest(dir);
    struct Case {
        const char* pointer;
        json value;
        const char* expected;
    };
    const std::vector<Case> cases = {
        {"/container/privileged", "yes", "manifest.container.privileged: not a bool"},
        {"/package/version", "0.1", "manifest.package.version: not a semver"},
        {"/package/depends/0", "database >= one", "manifest.package.depends[0]: not a constraint"},
        {"/processes/0/reconcile", true, "manifest.processes[0].reconcile: unknown key"},
        {"/cli/show", 7, "manifest.cli.show: not a string-or-list"},
        {"/container/volumes", "/a:/b", "manifest.container.volumes: not a array"},
    };
    for (const auto& c : cases) {
        json bad = good;
        bad[json::json_pointer(c.pointer)] = c.value;
        auto errors = manifestErrors(bad);
        ASSERT_EQ(errors.size(), 1U) << c.pointer;
        EXPECT_EQ(errors[0].rfind(c.expected, 0), 0U) << errors[0];
    }
    json missing = good;
    missing["service"].erase("name");
    auto errors = manifestErrors(missing);
    ASSERT_EQ(errors.size(), 1U);
    EXPECT_EQ(errors[0], "manifest.service.name: required, missing");
}

TEST(SonicManifest, NameVersionAndDescriptionComeFromDebian) {
    TempDir dir;
    json manifest = generatedManifest(dir);
    std::string changelog = readFile(kSource / "debian" / "changelog");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(changelog, m, std::regex(R"(^(\S+) \(([^)]+)\))")));
    EXPECT_EQ(manifest["package"]["name"], m[1].str());
    EXPECT_EQ(manifest["package"]["version"], m[2].str());
    std::string control = readFile(kSource / "debian" / "control");
    auto package = control.find("Package: " + m[1].str());
    ASSERT_NE(package, std::string::npos);
    auto description = control.find("Description: ", package);
    ASSERT_NE(description, std::string::npos);
    description += 13;
    EXPECT_EQ(manifest["package"]["description"],
              control.substr(description, control.find('\n', description) - description));
}

// init-cfg holds what SONiC needs beyond the daemons' own defaults, and nothing else: the
// package manager writes each of its fields over the operator's at every install and upgrade.
TEST(SonicManifest, InitCfgIsWhatEtcAndTheSonicOverridesChangeFromTheDefaults) {
    TempDir dir;
    json cfg = generatedManifest(dir)["package"]["init-cfg"];
    json overrides = json::parse(readFile(kPackaging / "manifest.in.json"))["init-cfg-sonic"];
    for (const auto& [daemon, table] :
         {std::pair{"hostrouted", "HOSTROUTED"}, {"pathqd", "PATHQD"}}) {
        json etc =
            json::parse(readFile(kSource / "etc" / "twinrail" / (std::string(daemon) + ".json")));
        json schema = json::parse(
            readFile(kSource / "proto" / (std::string(daemon) + "_config.schema.json")));
        const json& fields = schema["properties"][table]["properties"]["global"]["properties"];
        auto asString = [](const json& v) {
            return v.is_string() ? v.get<std::string>() : v.dump();
        };
        auto defaultOf = [&](const std::string& field) {
            return fields.contains(field) && fields[field].contains("default")
                       ? asString(fields[field]["default"])
                       : std::string();
        };
        json expected = json::object();
        for (const auto& [field, value] : etc[table]["global"].items())
            if (asString(value) != defaultOf(field)) expected[field] = asString(value);
        for (const auto& [field, value] : overrides[table]["global"].items())
            if (asString(value) != defaultOf(field)) expected[field] = asString(value);
        ASSERT_FALSE(expected.empty()) << table;  // platform/source sonic are never defaults
        EXPECT_EQ(cfg[table]["global"], expected) << table;
    }
    EXPECT_EQ(cfg.size(), 2U) << cfg.dump();
}

TEST(SonicManifest, LabelsCarryTheManifestAndEachYangModuleByteForByte) {
    TempDir dir;
    json manifest = generatedManifest(dir);
    json labels = json::parse(readFile(dir.path() / "labels.json"));
    EXPECT_EQ(json::parse(labels["com.azure.sonic.manifest"].get<std::string>()), manifest);
    for (const char* module : {"sonic-hostrouted", "sonic-pathqd"}) {
        std::string key = std::string("com.azure.sonic.yang-module.") + module;
        ASSERT_TRUE(labels.contains(key)) << key;
        EXPECT_EQ(labels[key].get<std::string>(),
                  readFile(kFixtures / "yang" / (std::string(module) + ".yang")));
    }
    EXPECT_EQ(labels.size(), 3U);
}

TEST(SonicManifest, YangLabelsAreTheProtoModules) {
    if (!fs::exists(kSource / "proto" / "sonic-hostrouted.yang") ||
        !fs::exists(kSource / "proto" / "sonic-pathqd.yang"))
        GTEST_SKIP() << "proto/sonic-hostrouted.yang or sonic-pathqd.yang not written yet";
    TempDir dir;
    RunResult r = generate(dir.path());
    ASSERT_EQ(r.exit, 0) << r.out;
    json labels = json::parse(readFile(dir.path() / "labels.json"));
    for (const char* module : {"sonic-hostrouted", "sonic-pathqd"}) {
        EXPECT_EQ(labels[std::string("com.azure.sonic.yang-module.") + module].get<std::string>(),
                  readFile(kSource / "proto" / (std::string(module) + ".yang")));
    }
}

// A copy of the generator's sources, for breaking one of them.
fs::path copySources(const TempDir& dir) {
    fs::path src = dir.path() / "src";
    for (const char* file :
         {"debian/changelog", "debian/control", "proto/hostrouted_config.schema.json",
          "proto/pathqd_config.schema.json", "etc/twinrail/hostrouted.json",
          "etc/twinrail/pathqd.json"}) {
        fs::create_directories((src / file).parent_path());
        fs::copy_file(kSource / file, src / file);
    }
    return src;
}

TEST(SonicManifest, GeneratorRefusesBadSourcesNamingTheFile) {
    TempDir dir;
    fs::path src = copySources(dir);
    const std::vector<std::string> fixtureYang = {"--source-dir", src.string(), "--yang-dir",
                                                  (kFixtures / "yang").string()};
    ASSERT_EQ(generate(dir.path(), fixtureYang).exit, 0);

    std::string changelog = readFile(src / "debian" / "changelog");
    writeFile(src / "debian" / "changelog",
              std::regex_replace(changelog, std::regex(R"(\(([0-9.]+)\))"), "($1-1)"));
    RunResult revision = generate(dir.path(), fixtureYang);
    EXPECT_EQ(revision.exit, 65);
    EXPECT_NE(revision.out.find("debian/changelog: line 1: version '0.1.0-1'"), std::string::npos)
        << revision.out;
    writeFile(src / "debian" / "changelog", changelog);

    writeFile(src / "etc" / "twinrail" / "pathqd.json", "{\"PATHQD\": ");
    RunResult broken = generate(dir.path(), fixtureYang);
    EXPECT_EQ(broken.exit, 65);
    EXPECT_NE(broken.out.find("etc/twinrail/pathqd.json: not JSON"), std::string::npos)
        << broken.out;
    fs::copy_file(kSource / "etc/twinrail/pathqd.json", src / "etc/twinrail/pathqd.json",
                  fs::copy_options::overwrite_existing);

    RunResult noYang = generate(
        dir.path(), {"--source-dir", src.string(), "--yang-dir", (dir.path() / "none").string()});
    EXPECT_EQ(noYang.exit, 66);
    EXPECT_NE(noYang.out.find("none/sonic-hostrouted.yang"), std::string::npos) << noYang.out;

    json templ = json::parse(readFile(kPackaging / "manifest.in.json"));
    templ["yang-modules"] = {"sonic-misnamed"};
    writeFile(dir.path() / "template.json", templ.dump());
    RunResult misnamed = generate(
        dir.path(), {"--source-dir", src.string(), "--yang-dir", (kFixtures / "yang").string(),
                     "--template", (dir.path() / "template.json").string()});
    EXPECT_EQ(misnamed.exit, 65);
    EXPECT_NE(misnamed.out.find("does not declare 'module sonic-misnamed {'"), std::string::npos)
        << misnamed.out;
}

// Install validates init-cfg through the package's YANG (merged with the running config);
// `twinrail sonic-check` is that check offline. The stubs stand in for sonic-port/-vlan.
TEST(SonicManifest, InitCfgPassesTheYangCheck) {
    if (!fs::exists(kSource / "proto" / "sonic-hostrouted.yang"))
        GTEST_SKIP() << "proto/sonic-hostrouted.yang not written yet";
    TempDir dir;
    RunResult gen = generate(dir.path());
    ASSERT_EQ(gen.exit, 0) << gen.out;
    json cfg = json::parse(readFile(dir.path() / "manifest.json"))["package"]["init-cfg"];
    auto check = [&](const json& doc) {
        writeFile(dir.path() / "init-cfg.json", doc.dump());
        return run({TWINRAIL_CLI, "sonic-check", (dir.path() / "init-cfg.json").string(),
                    "--yang-dir", kYangStubs.string(), "--yang-dir", (kSource / "proto").string()});
    };
    RunResult valid = check(cfg);
    EXPECT_EQ(valid.exit, 0) << valid.out;
    json bad = cfg;
    bad["HOSTROUTED"]["global"]["keepalive"] = "three";
    RunResult invalid = check(bad);
    EXPECT_EQ(invalid.exit, 65) << invalid.out;
    EXPECT_NE(invalid.out.find("\"three\""), std::string::npos) << invalid.out;
}

// --- the image: supervisor, Dockerfile, staging script ------------------------------------

TEST(SonicPackageFiles, EveryProcessIsSupervisedAndCritical) {
    TempDir dir;
    json manifest = generatedManifest(dir);
    std::string supervisor = readFile(kPackaging / "supervisord.conf");
    std::string critical = readFile(kPackaging / "critical_processes");
    ASSERT_FALSE(manifest["processes"].empty());
    for (const auto& process : manifest["processes"]) {
        std::string name = process["name"];
        EXPECT_NE(supervisor.find("[program:" + name + "]"), std::string::npos) << name;
        EXPECT_NE(supervisor.find("/usr/sbin/" + name +
                                  " --db-config "
                                  "/var/run/redis/sonic-db/database_config.json"),
                  std::string::npos)
            << name;
        EXPECT_NE(critical.find("program:" + name + "\n"), std::string::npos) << name;
        // The .deb ships the binary the supervisor starts.
        EXPECT_NE(readFile(kSource / "scripts" / "package.sh").find("/usr/sbin/" + name),
                  std::string::npos)
            << name;
    }
}

TEST(SonicPackageFiles, DockerfileCopiesOnlyFilesThatExist) {
    std::istringstream dockerfile(readFile(kPackaging / "Dockerfile"));
    std::string script = readFile(kSource / "scripts" / "sonic-package.sh");
    std::vector<std::string> destinations;
    std::string line;
    int copies = 0;
    while (std::getline(dockerfile, line)) {
        if (line.rfind("COPY ", 0) != 0) continue;
        std::istringstream words(line.substr(5));
        std::vector<std::string> args;
        for (std::string w; words >> w;)
            if (w.rfind("--", 0) != 0) args.push_back(w);
        ASSERT_GE(args.size(), 2U) << line;
        for (size_t i = 0; i + 1 < args.size(); ++i, ++copies) {
            if (args[i] == "twinrail.deb") {  // staged by the script, from scripts/package.sh
                EXPECT_NE(script.find("\"$context/twinrail.deb\""), std::string::npos);
                continue;
            }
            EXPECT_TRUE(fs::is_regular_file(kPackaging / args[i])) << args[i];
            // The script stages it (itself or its directory) into the build context.
            std::string top = args[i].substr(0, args[i].find('/'));
            EXPECT_NE(script.find("packaging/sonic/" + top), std::string::npos) << args[i];
            std::string dest = args.back();
            destinations.push_back(dest.back() == '/' ? dest + fs::path(args[i]).filename().string()
                                                      : dest);
        }
    }
    EXPECT_GE(copies, 5);
    TempDir dir;
    json cli = generatedManifest(dir)["cli"];
    for (const char* command : {"show", "config"}) {
        std::string path = cli[command];
        EXPECT_NE(std::find(destinations.begin(), destinations.end(), path), destinations.end())
            << command << " plugin " << path << " is not copied into the image";
    }
    std::smatch entry;
    std::string text = readFile(kPackaging / "Dockerfile");
    ASSERT_TRUE(std::regex_search(text, entry, std::regex(R"re(ENTRYPOINT \["([^"]+)"\])re")));
    EXPECT_NE(std::find(destinations.begin(), destinations.end(), entry[1].str()),
              destinations.end());
}

// --- the click plugins, against a fake DB ---------------------------------------------------

json plugin(const std::string& file, const std::vector<std::string>& args,
            const fs::path& db = kFixtures / "fake_db.json") {
    std::vector<std::string> argv = {kPython, (kFixtures / "run_plugin.py").string(),
                                     (kPackaging / "cli" / file).string(), db.string(), "--"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult r = run(argv);
    json result = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(result.is_discarded()) << r.out;
    return result;
}

TEST(SonicCli, ShowHostsSortsAddressesAndFilters) {
    json all = plugin("show_twinrail.py", {"twinrail", "hosts"});
    ASSERT_EQ(all["exit_code"], 0) << all.dump();
    std::string out = all["stdout"];
    auto v4small = out.find("10.128.0.3 "), v4big = out.find("10.128.0.21 "),
         v6 = out.find("fd00:128::21");
    ASSERT_NE(v4small, std::string::npos) << out;
    EXPECT_LT(v4small, v4big);
    EXPECT_LT(v4big, v6);
    EXPECT_NE(out.find("Total hosts: 3"), std::string::npos);

    std::string installed =
        plugin("show_twinrail.py", {"twinrail", "hosts", "--state", "installed"})["stdout"];
    EXPECT_EQ(installed.find("10.128.0.3 "), std::string::npos) << installed;
    std::string vlan =
        plugin("show_twinrail.py", {"twinrail", "hosts", "-i", "Vlan1002"})["stdout"];
    EXPECT_NE(vlan.find("Total hosts: 1"), std::string::npos) << vlan;
    EXPECT_NE(vlan.find("fd00:128::21"), std::string::npos);
}

TEST(SonicCli, ShowQualityOrdersPortsAndNeutralisesControlCharacters) {
    json r = plugin("show_twinrail.py", {"twinrail", "quality"});
    ASSERT_EQ(r["exit_code"], 0) << r.dump();
    std::string out = r["stdout"];
    EXPECT_LT(out.find("Ethernet8 "), out.find("Ethernet16 ")) << out;
    EXPECT_NE(out.find("30/32"), std::string::npos);
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << "an escape sequence reached the terminal";
    EXPECT_NE(out.find("09:30:00Z?[2J"), std::string::npos);
}

TEST(SonicCli, ShowClaimsAndWeightsReadOnlyTheirTables) {
    std::string claims = plugin("show_twinrail.py", {"twinrail", "claims"})["stdout"];
    EXPECT_NE(claims.find("10.128.0.21  Ethernet16"), std::string::npos) << claims;
    EXPECT_NE(claims.find("bound-elsewhere"), std::string::npos);
    std::string weights = plugin("show_twinrail.py", {"twinrail", "weights"})["stdout"];
    EXPECT_NE(weights.find("Ethernet8=25 Ethernet16=75  12"), std::string::npos) << weights;
    EXPECT_EQ(weights.find("NOT_OURS"), std::string::npos);
}

TEST(SonicCli, ShowOnAnEmptyStateDbPrintsHeadersOnly) {
    TempDir dir;
    writeFile(dir.path() / "empty.json", "{\"STATE_DB\": {}}");
    for (const char* table : {"hosts", "claims", "quality", "weights"}) {
        json r = plugin("show_twinrail.py", {"twinrail", table}, dir.path() / "empty.json");
        EXPECT_EQ(r["exit_code"], 0) << table << r.dump();
        EXPECT_NE(r["stdout"].get<std::string>().find("---"), std::string::npos) << table;
    }
}

TEST(SonicCli, ConfigWritesACheckedFieldAndNothingElse) {
    json r = plugin("config_twinrail.py", {"twinrail", "hostrouted", "keepalive", "4"});
    ASSERT_EQ(r["exit_code"], 0) << r.dump();
    json expected = json::parse(readFile(kFixtures / "fake_db.json"))["CONFIG_DB"];
    expected["HOSTROUTED"]["global"]["keepalive"] = "4";
    EXPECT_EQ(r["config_db"], expected);
    json enumValue =
        plugin("config_twinrail.py", {"twinrail", "pathqd", "weight-audit-source", "sonic"});
    EXPECT_EQ(enumValue["exit_code"], 0) << enumValue.dump();
    EXPECT_EQ(enumValue["config_db"]["PATHQD"]["global"]["weight_audit_source"], "sonic");
}

TEST(SonicCli, ConfigRefusesBadValuesNamingTableKeyAndField) {
    const json original = json::parse(readFile(kFixtures / "fake_db.json"))["CONFIG_DB"];
    struct Case {
        std::vector<std::string> args;
        const char* where;
    };
    const std::vector<Case> cases = {
        {{"hostrouted", "keepalive", "-1"}, "HOSTROUTED|global keepalive"},
        {{"hostrouted", "keepalive", "5"}, "HOSTROUTED|global keepalive: holdtime 9 must be"},
        {{"hostrouted", "holdtime", "09"}, "HOSTROUTED|global holdtime"},
        {{"hostrouted", "max-routes", "1e6"}, "HOSTROUTED|global max_routes"},
        {{"hostrouted", "advertise", "network-table;reboot"}, "HOSTROUTED|global advertise"},
        {{"pathqd", "levels", "101"}, "PATHQD|global levels"},
        {{"pathqd", "sample-interval-ms", "9"}, "PATHQD|global sample_interval_ms"},
    };
    for (const auto& c : cases) {
        std::vector<std::string> args = {"twinrail"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        json r = plugin("config_twinrail.py", args);
        EXPECT_EQ(r["exit_code"], 65) << c.where << r.dump();
        EXPECT_EQ(r["stderr"].get<std::string>().rfind(std::string("Error: ") + c.where, 0), 0U)
            << r.dump();
        EXPECT_EQ(r["config_db"], original) << c.where;
    }
}

}  // namespace
