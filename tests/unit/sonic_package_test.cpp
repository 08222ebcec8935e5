// The SONiC Application Extension package (packaging/sonic, docs/sonic-package.md), offline:
// the generated manifest against sonic-package-manager's schema (keys and types, encoded in
// tests/fixtures/sonic-package/manifest_schema.json), the labels against their sources
// (debian/, proto/), init-cfg through `twinrail sonic-check`, the supervisor and Dockerfile
// against the files they name, and the click plugins run with /usr/bin/python3 (Debian's
// python3-click) against a fake DB (tests/fixtures/sonic-package/run_plugin.py). The image's
// files: sonic_package_files_test.cpp; the click plugins: sonic_package_cli_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "sonic_package_helpers.h"

namespace {

using namespace twinrail::sonic_package_test;

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

// No init-cfg: nothing for sonic-package-manager to write at install or upgrade.
TEST(SonicManifest, HasNoInitCfg) {
    TempDir dir;
    json manifest = generatedManifest(dir);
    EXPECT_FALSE(manifest["package"].contains("init-cfg")) << manifest["package"].dump();
    json templ = json::parse(readFile(kPackaging / "manifest.in.json"));
    templ["package"]["init-cfg"] = {{"HOSTROUTED", {{"global", {{"platform", "sonic"}}}}}};
    writeFile(dir.path() / "template.json", templ.dump());
    RunResult refused =
        generate(dir.path(), {"--template", (dir.path() / "template.json").string()});
    EXPECT_EQ(refused.exit, 65);
    EXPECT_NE(refused.out.find("init-cfg: none, ever"), std::string::npos) << refused.out;
}

// What the container needs of the switch: the Docker socket (FRR in the bgp container,
// docs/sonic.md) and the switch's own YANG models, read-only, where `twinrail sonic-check`
// and --check-config look for them by default.
TEST(SonicManifest, TheContainerGetsTheDockerSocketAndTheSwitchsModels) {
    TempDir dir;
    json volumes = generatedManifest(dir)["container"]["volumes"];
    EXPECT_NE(
        std::find(volumes.begin(), volumes.end(), "/var/run/docker.sock:/var/run/docker.sock"),
        volumes.end())
        << volumes.dump();
    EXPECT_NE(std::find(volumes.begin(), volumes.end(),
                        "/usr/local/yang-models:/usr/local/yang-models:ro"),
              volumes.end())
        << volumes.dump();
    EXPECT_NE(readFile(kSource / "tools/twinrail/sonic_check.h")
                  .find("kSonicYangDir = \"/usr/local/yang-models\""),
              std::string::npos);
    const std::string entry = readFile(kPackaging / "entrypoint.sh");
    EXPECT_NE(entry.find("--frr docker --frr-container"), std::string::npos);
    EXPECT_EQ(entry.find("vty-tcp"), std::string::npos);
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

}  // namespace
