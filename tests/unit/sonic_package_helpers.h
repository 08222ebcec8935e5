// What the SONiC package tests share (sonic_package_test.cpp, sonic_package_files_test.cpp,
// sonic_package_cli_test.cpp): where the package's sources are, running a command, a
// temporary directory, and the manifest the generator writes.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace twinrail::sonic_package_test {

namespace fs = std::filesystem;
using nlohmann::json;

inline const fs::path kSource = TWINRAIL_SOURCE_DIR;
inline const fs::path kPackaging = kSource / "packaging" / "sonic";
inline const fs::path kFixtures = kSource / "tests" / "fixtures" / "sonic-package";
inline constexpr const char* kPython = "/usr/bin/python3";  // Debian's, with python3-click

inline std::string readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

inline void writeFile(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

struct RunResult {
    int exit = -1;
    std::string out;  // stdout and stderr
};

// Every argument single-quoted: the paths are the test's own, but a space must not split one.
inline RunResult run(const std::vector<std::string>& argv) {
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
inline RunResult generate(const fs::path& out, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {kPython, (kPackaging / "gen_manifest.py").string(),
                                     "--out-dir", out.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run(argv);
}

inline json generatedManifest(const TempDir& dir) {
    RunResult r = generate(dir.path(), {"--yang-dir", (kFixtures / "yang").string()});
    EXPECT_EQ(r.exit, 0) << r.out;
    return json::parse(readFile(dir.path() / "manifest.json"), nullptr, false);
}

}  // namespace twinrail::sonic_package_test
