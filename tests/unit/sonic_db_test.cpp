// resolveDb reads SONiC's database_config.json, which may lack any key: it names what is
// missing, and never reads past what is there (a missing hostname once crashed the lab).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "twinrail/redis/sonic_db.h"

namespace twinrail::redis {
namespace {

class SonicDbConfig : public ::testing::Test {
  protected:
    std::string write(const std::string& text) {
        std::ofstream(path_) << text;
        return path_;
    }
    ~SonicDbConfig() override { std::filesystem::remove(path_); }
    std::string path_ = ::testing::TempDir() + "/database_config." + std::to_string(::getpid());
};

TEST_F(SonicDbConfig, AnInstanceWithOnlyItsSocketGivesTheSocketAndKeepsTheRest) {
    Endpoint fallback;
    fallback.host = "127.0.0.1";
    auto loc = resolveDb("STATE_DB", fallback,
                         write(R"({"INSTANCES": {"redis": {"unix_socket_path": "/run/r.sock"}},
                                   "DATABASES": {"STATE_DB": {"id": 6, "separator": "|",
                                                              "instance": "redis"}}})"));
    EXPECT_EQ(loc.id, 6);
    EXPECT_EQ(loc.separator, '|');
    EXPECT_EQ(loc.endpoint.unixSocket, "/run/r.sock");
    EXPECT_EQ(loc.endpoint.host, "127.0.0.1");
    EXPECT_EQ(loc.endpoint.port, 6379);
}

TEST_F(SonicDbConfig, MissingPiecesAreNamed) {
    auto message = [this](const std::string& text) {
        try {
            resolveDb("STATE_DB", Endpoint{}, write(text));
        } catch (const std::runtime_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message(R"({"DATABASES": {}})").find("DATABASES.STATE_DB.id missing"),
              std::string::npos);
    EXPECT_NE(message(R"({"DATABASES": {"STATE_DB": {"id": "6"}}})").find("id missing"),
              std::string::npos);
    EXPECT_NE(message(R"({"DATABASES": {"STATE_DB": {"id": 6, "instance": "x"}}})")
                  .find("INSTANCES.x missing"),
              std::string::npos);
    EXPECT_NE(message(R"([1, 2])").find("id missing"), std::string::npos);
    EXPECT_NE(message("{").find("not valid JSON"), std::string::npos);
}

}  // namespace
}  // namespace twinrail::redis
