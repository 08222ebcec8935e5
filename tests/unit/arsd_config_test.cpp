// arsd's config beyond the ARS tables (ports, pins, fabric), and the service hooks that
// ship: bad config refused with 78 at start, a later config applied as SIGHUP applies it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "arsd_harness.h"
#include "config.h"
#include "service_hooks.h"
#include "twinrail/common/sysexits.h"

namespace twinrail::arsd::test {
namespace {

nlohmann::json leafDoc() {
    return nlohmann::json::parse(R"({
      "PORT": {"up1": {}, "up2": {}, "host1": {}, "host2": {}},
      "UPLINK_PIN": {"host1": {"uplink": "up1"}},
      "SWITCH_HASH": {"GLOBAL": {"ecmp_hash_algorithm": "RANDOM"}}
    })");
}

TEST(ArsdConfig, PortsPinsAndFabricComeFromTheDocument) {
    auto parsed = parseConfig(leafDoc());
    ASSERT_TRUE(std::holds_alternative<Config>(parsed)) << std::get<std::string>(parsed);
    const auto& c = std::get<Config>(parsed);
    EXPECT_TRUE(c.ars.enabled);
    EXPECT_EQ(c.ars.datapath.mode, ars::AssignMode::PacketRandom);
    EXPECT_EQ(c.ports, (std::set<std::string>{"up1", "up2", "host1", "host2"}));
    EXPECT_EQ(c.pinned, (std::set<std::string>{"host1"}));
    // No PATHQD_PORT: every port but the pinned host ports.
    EXPECT_EQ(c.fabric, (std::set<std::string>{"up1", "up2", "host2"}));
    EXPECT_EQ(c.ars.selector, ars::NhgSelector::Global);
    EXPECT_EQ(sampledPorts(c), c.fabric);  // spray without ARS_INTERFACES
}

TEST(ArsdConfig, PathqdPortsAreTheFabricWhenPresent) {
    auto doc = leafDoc();
    doc["PATHQD_PORT"] = {{"up1", {{"role", "uplink"}}}, {"up2", {{"role", "uplink"}}}};
    auto c = std::get<Config>(parseConfig(doc));
    EXPECT_EQ(c.fabric, (std::set<std::string>{"up1", "up2"}));
}

TEST(ArsdConfig, HostileTablesAreNamedInTheError) {
    auto doc = leafDoc();
    doc["UPLINK_PIN"] = 5;
    auto parsed = parseConfig(doc);
    ASSERT_TRUE(std::holds_alternative<std::string>(parsed));
    EXPECT_EQ(std::get<std::string>(parsed), "UPLINK_PIN: must be an object of keys");
    doc = leafDoc();
    doc["UPLINK_PIN"]["Ethernet99"] = {{"uplink", "up1"}};
    EXPECT_EQ(std::get<std::string>(parseConfig(doc)),
              "UPLINK_PIN|Ethernet99: not a PORT of this switch");
    EXPECT_TRUE(std::holds_alternative<std::string>(parseConfig(nlohmann::json::array())));
}

TEST(ArsdService, BadConfigIsRefusedWith78BeforeAnythingIsAttached) {
    Harness h;
    auto path = std::filesystem::temp_directory_path() /
                ("arsd-bad-" + std::to_string(::getpid()) + ".json");
    auto doc = leafDoc();
    doc["PORT"] = "not a table";
    std::ofstream(path) << doc.dump();
    std::string a0 = "arsd", a1 = "--config", a2 = path.string(), a3 = "--no-state-db";
    std::vector<char*> argv{a0.data(), a1.data(), a2.data(), a3.data(), nullptr};
    int rc =
        service::serviceMain(serviceSpec(), 4, argv.data(),
                             serviceHooks([&h](boost::asio::io_context&) { return h.edges(); }));
    std::filesystem::remove(path);
    EXPECT_EQ(rc, exitcode::kConfig);
    EXPECT_EQ(h.datapathsMade, 0);
}

TEST(ArsdService, ALaterConfigIsAppliedAndStopDetaches) {
    Harness h;
    auto hooks = serviceHooks([&h](boost::asio::io_context&) { return h.edges(); });
    service::CommonOptions options;
    service::StartContext ctx{h.io, options, std::nullopt};
    ASSERT_FALSE(hooks.check(leafDoc()).has_value());
    auto running = hooks.start(leafDoc(), ctx);
    EXPECT_EQ(h.dp.attached, (std::set<int>{11, 12, 21, 22}));
    EXPECT_EQ(h.dp.pinned, (std::set<int>{21}));
    // SIGHUP: the host checks, then applies; here UPLINK_PIN moves to host2.
    auto next = leafDoc();
    next["UPLINK_PIN"] = {{"host2", {{"uplink", "up2"}}}};
    ASSERT_FALSE(hooks.check(next).has_value());
    running->apply(next);
    EXPECT_EQ(h.dp.pinned, (std::set<int>{22}));
    // A bad one is refused by the check; the host never applies it.
    next["PORT"] = 1;
    EXPECT_TRUE(hooks.check(next).has_value());
    running->stop();
    EXPECT_TRUE(h.dp.attached.empty());
}

}  // namespace
}  // namespace twinrail::arsd::test
