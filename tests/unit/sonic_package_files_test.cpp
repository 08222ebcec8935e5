// The SONiC package's image (packaging/sonic): every process the manifest names is
// supervised and critical and shipped in the .deb; the Dockerfile copies only files that
// exist and that scripts/sonic-package.sh stages, among them the click plugins and the
// entrypoint.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "sonic_package_helpers.h"

namespace {

using namespace twinrail::sonic_package_test;

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

}  // namespace
