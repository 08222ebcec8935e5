// The one name grammar (twinrail/common/names.h) and every place that applies it: the
// config readers, the plan reader, the planner's output paths, vtysh and the lab's
// script splitting. Pure functions and temporary folders only: no vtysh, no namespaces.
#include "twinrail/common/names.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <string>

#include "config.h"
#include "plan_files.h"
#include "twinrail/frr/daemon_vty.h"
#include "twinrail/frr/vtysh.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/shell.h"
#include "twinrail/plan/evpn_mh.h"
#include "twinrail/plan/plan.h"

namespace names = twinrail::names;
namespace plan = twinrail::plan;
namespace fs = std::filesystem;
using names::Kind;
using nlohmann::json;

namespace {

const std::string kNul("a\0b", 3);

}  // namespace

TEST(Names, AcceptsSonicAndLabNames) {
    for (const char* n : {"Ethernet0", "Ethernet0.10", "PortChannel01", "swp1", "swp33s0", "bond0",
                          "br-rail1", "eth_1"})
        EXPECT_TRUE(names::valid(n, Kind::Interface)) << n;
    for (const char* n : {"p1-leaf1", "srv1-nic1", "srv1", "nic1", "p2-spine2", "CX864E-N",
                          "generic-64x400G", "lab-4x200G"})
        EXPECT_TRUE(names::valid(n, Kind::Node)) << n;
    EXPECT_TRUE(names::valid("TWINRAIL-HOSTROUTES-V6", Kind::RouteMap));
    for (const char* p : {"Ethernet*", "swp*", "*", "swp[1-4]s?", "Ethernet[0-9][0-9]*"})
        EXPECT_TRUE(names::valid(p, Kind::InterfacePattern)) << p;
}

TEST(Names, RefusesWhatAShellVtyshOrPathWouldRead) {
    for (Kind k : {Kind::Interface, Kind::InterfacePattern, Kind::Node, Kind::RouteMap}) {
        for (const std::string& n :
             {std::string(""),         std::string("\n"),          std::string("swp1\nexit"),
              std::string("a\tb"),     std::string("a\rb"),        kNul,
              std::string("a\x7f"),    std::string("swp1!"),       std::string(".."),
              std::string("a..b"),     std::string("a/b"),         std::string("/etc"),
              std::string("-leading"), std::string("caf\xc3\xa9"), std::string("a b"),
              std::string("a;b"),      std::string("$(x)"),        std::string("`x`"),
              std::string("a|b"),      std::string("a&b"),         std::string("a'b"),
              std::string("a\"b"),     std::string("a\\b"),        std::string("a>b"),
              std::string("~root")})
            EXPECT_FALSE(names::valid(n, k)) << names::printable(n) << " as " << names::kindName(k);
    }
    EXPECT_FALSE(names::valid("Ethernet*", Kind::Interface));  // a glob is a pattern only
    EXPECT_FALSE(names::valid("swp?", Kind::Node));
}

TEST(Names, LengthsAreWhatTheyName) {
    EXPECT_TRUE(names::valid(std::string(15, 'e'), Kind::Interface));
    EXPECT_FALSE(names::valid(std::string(16, 'e'), Kind::Interface));  // IFNAMSIZ - 1
    EXPECT_FALSE(names::valid(std::string(16, 'e'), Kind::InterfacePattern));
    EXPECT_TRUE(names::valid(std::string(15, 'e') + "*", Kind::InterfacePattern));
    EXPECT_TRUE(names::valid(std::string(63, 'n'), Kind::Node));
    EXPECT_FALSE(names::valid(std::string(64, 'n'), Kind::Node));
    EXPECT_FALSE(names::valid(std::string(64, 'r'), Kind::RouteMap));
}

TEST(Names, ReasonsSayWhereAndPrintableHidesTheBytes) {
    EXPECT_EQ(*names::check("swp1\nexit", Kind::Interface),
              "contains a control character at offset 4");
    EXPECT_NE(names::check("a..b", Kind::Node)->find(".."), std::string::npos);
    EXPECT_NE(names::check(std::string(16, 'e'), Kind::Interface)->find("15"), std::string::npos);
    EXPECT_EQ(names::printable("swp1\nexit"), "swp1\\x0aexit");
    EXPECT_EQ(names::printable(kNul), "a\\x00b");
    EXPECT_EQ(names::printable("a\\b"), "a\\x5cb");  // no forged escapes either
    EXPECT_EQ(names::printable(std::string(100, 'x'), 4), "xxxx...");
}

namespace hr = twinrail::hostrouted;

namespace {

hr::ConfigError hostroutedError(const json& doc) {
    auto r = hr::parseConfig(doc);
    EXPECT_TRUE(std::holds_alternative<hr::ConfigError>(r)) << doc.dump();
    return std::holds_alternative<hr::ConfigError>(r) ? std::get<hr::ConfigError>(r)
                                                      : hr::ConfigError{};
}

}  // namespace

TEST(NamesInConfig, HostroutedRefusesBadNamesNamingTheField) {
    auto e = hostroutedError({{"HOSTROUTED_INTERFACE", {{"swp1\nexit", json::object()}}}});
    EXPECT_EQ(e.where, "HOSTROUTED_INTERFACE|swp1\\x0aexit");
    EXPECT_NE(e.what.find("control character"), std::string::npos) << e.what;
    EXPECT_EQ(e.str().find('\n'), std::string::npos) << "the log line stays one line";

    e = hostroutedError({{"UPLINK_PIN", {{"swp3", {{"uplink", "swp1;reboot"}}}}}});
    EXPECT_EQ(e.where, "UPLINK_PIN|swp3 field uplink");
    EXPECT_NE(e.what.find("swp1;reboot"), std::string::npos) << e.what;

    e = hostroutedError({{"UPLINK_PIN", {{"Ethernet0123456789", {{"uplink", "swp1"}}}}}});
    EXPECT_EQ(e.where, "UPLINK_PIN|Ethernet0123456789");

    e = hostroutedError({{"UPLINK_PIN", {{"swp3", {{"uplink", "swp*"}}}}}});
    EXPECT_EQ(e.where, "UPLINK_PIN|swp3 field uplink");

    e = hostroutedError(
        {{"HOSTROUTED",
          {{"global", {{"evpn_peer", "10.0.0.2"}, {"evpn_peer_interface", "../aux"}}}}}});
    EXPECT_EQ(e.where, "HOSTROUTED|global field evpn_peer_interface");

    e = hostroutedError({{"HOSTROUTED", {{"global", {{"evpn_vty", "zebra.vty\nx"}}}}}});
    EXPECT_EQ(e.where, "HOSTROUTED|global field evpn_vty");

    e = hostroutedError({{"HOSTROUTED", {{"glob\x1b[2Jal", json::object()}}}});
    EXPECT_EQ(e.where, "HOSTROUTED|glob\\x1b[2Jal");
}

TEST(NamesInConfig, HostroutedStillTakesGlobsAndSonicNames) {
    json doc = {{"HOSTROUTED_INTERFACE",
                 {{"Ethernet0.10", json::object()},
                  {"swp[1-4]s?", json::object()},
                  {"PortChannel01", json::object()}}},
                {"UPLINK_PIN", {{"Ethernet0", {{"uplink", "Ethernet64"}}}}}};
    auto r = hr::parseConfig(doc);
    ASSERT_TRUE(std::holds_alternative<hr::Config>(r)) << std::get<hr::ConfigError>(r).str();
    EXPECT_TRUE(std::get<hr::Config>(r).managesInterface("swp2s0"));
}

namespace {

json labPlanJson(plan::Attach attach = plan::Attach::Bond) {
    auto built = plan::buildPlan(twinrail::lab::defaultLabRequest(attach));
    EXPECT_TRUE(std::holds_alternative<plan::Plan>(built));
    return plan::toJson(std::get<plan::Plan>(built));
}

std::string planError(const json& j) {
    auto r = plan::planFromJson(j);
    EXPECT_TRUE(std::holds_alternative<plan::SizingError>(r)) << "accepted";
    return std::holds_alternative<plan::SizingError>(r) ? std::get<plan::SizingError>(r).message
                                                        : "";
}

}  // namespace

TEST(NamesInPlan, ReaderRefusesBadNamesNamingTheJsonPath) {
    for (auto attach : {plan::Attach::Bond, plan::Attach::Routed, plan::Attach::EvpnMh}) {
        auto r = plan::planFromJson(labPlanJson(attach));
        EXPECT_TRUE(std::holds_alternative<plan::Plan>(r)) << "the planner's own plans pass";
    }
    json j = labPlanJson();
    j["switches"][0]["name"] = "../../etc";
    EXPECT_EQ(planError(j).rfind("plan.switches[0].name: ", 0), 0u) << planError(j);

    j = labPlanJson();
    j["servers"][1]["nics"][0]["ports"][0]["leaf_port"] = "swp1\nexit";
    auto e = planError(j);
    EXPECT_EQ(e.rfind("plan.servers[1].nics[0].ports[0].leaf_port: ", 0), 0u) << e;
    EXPECT_NE(e.find("swp1\\x0aexit"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos);

    j = labPlanJson();
    j["servers"][0]["nics"][1]["name"] = "nic2; reboot";
    EXPECT_EQ(planError(j).rfind("plan.servers[0].nics[1].name: ", 0), 0u);

    j = labPlanJson();
    j["switches"][0]["ports"][0]["peer"] = "srv1/nic1/../x";
    EXPECT_EQ(planError(j).rfind("plan.switches[0].ports[0].peer: ", 0), 0u);

    j = labPlanJson();
    j["switches"][0]["ports"][1]["peer_port"] = "-swp1";
    EXPECT_EQ(planError(j).rfind("plan.switches[0].ports[1].peer_port: ", 0), 0u);

    j = labPlanJson();
    j["switches"][0]["loopback"] = "10.0.0.1 dev lo; x";
    EXPECT_EQ(planError(j).rfind("plan.switches[0].loopback: ", 0), 0u);

    j = labPlanJson();
    j["rail_subnets"][0]["prefix"] = "10.128.0.0/24\n";
    EXPECT_EQ(planError(j).rfind("plan.rail_subnets[0].prefix: ", 0), 0u);

    j = labPlanJson();
    j["request"]["gateway_mac"] = "00:00:5e:00:01:0\n";
    EXPECT_EQ(planError(j).rfind("plan.request.gateway_mac: ", 0), 0u);
}

namespace {

// A folder of its own under the test's temporary directory, removed afterwards.
struct TempDir {
    fs::path path = fs::temp_directory_path() / ("names_test-" + std::to_string(::getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

}  // namespace

TEST(NamesInPlannerOutput, PathsStayUnderTheOutputFolder) {
    using twinrail::plantool::outputPath;
    TempDir dir;
    auto ok = outputPath(dir.path, {{"configs", ""}, {"p1-leaf1", "f"}, {"frr.conf", ""}});
    ASSERT_TRUE(std::holds_alternative<fs::path>(ok));
    EXPECT_EQ(std::get<fs::path>(ok), dir.path / "configs" / "p1-leaf1" / "frr.conf");

    auto bad = outputPath(dir.path, {{"configs", ""}, {"../../etc", "plan.switches[0].name"}});
    ASSERT_TRUE(std::holds_alternative<std::string>(bad));
    EXPECT_EQ(std::get<std::string>(bad).rfind("plan.switches[0].name: ", 0), 0u);

    auto up = outputPath(dir.path, {{"..", ""}, {"x", ""}});  // even a fixed part is checked
    ASSERT_TRUE(std::holds_alternative<std::string>(up));
    EXPECT_NE(std::get<std::string>(up).find("not under the output folder"), std::string::npos);

    // A symlink already in the folder does not carry a write out of it.
    fs::create_directories(dir.path / "configs");
    fs::create_directory_symlink("/tmp", dir.path / "configs" / "p1-leaf2");
    auto link = outputPath(dir.path, {{"configs", ""}, {"p1-leaf2", "f"}, {"frr.conf", ""}});
    EXPECT_TRUE(std::holds_alternative<std::string>(link));
}

TEST(NamesInPlannerOutput, PlanFilesRefuseAHostileNameAndWriteNothing) {
    TempDir dir;
    auto built = plan::buildPlan(twinrail::lab::defaultLabRequest());
    ASSERT_TRUE(std::holds_alternative<plan::Plan>(built));
    auto p = std::get<plan::Plan>(built);
    auto files = twinrail::plantool::planFiles(p, dir.path);
    ASSERT_TRUE(std::holds_alternative<std::vector<twinrail::plantool::OutFile>>(files));
    for (const auto& f : std::get<std::vector<twinrail::plantool::OutFile>>(files))
        EXPECT_EQ(f.path.string().rfind(dir.path.string() + "/", 0), 0u) << f.path;

    p.servers[1].name = "../../../etc/cron.d";  // a plan that bypassed the reader
    auto refused = twinrail::plantool::planFiles(p, dir.path);
    ASSERT_TRUE(std::holds_alternative<std::string>(refused));
    EXPECT_EQ(std::get<std::string>(refused).rfind("plan.servers[1].name: ", 0), 0u);
    EXPECT_TRUE(fs::is_empty(dir.path)) << "planFiles only lists; nothing was written";
}

TEST(NamesInVtysh, CommandLinesWithControlCharactersAreRefused) {
    using twinrail::frr::checkCommandLine;
    EXPECT_FALSE(checkCommandLine("show running-config"));
    EXPECT_FALSE(checkCommandLine("neighbor swp1 route-map TWINRAIL-PQ-IN-swp1 in"));
    auto nl = checkCommandLine("interface swp1\nno router bgp");
    ASSERT_TRUE(nl);
    EXPECT_NE(nl->find("0x0a"), std::string::npos) << *nl;
    for (const std::string& bad :
         {std::string("a\rb"), std::string("a\tb"), kNul, std::string("\x1b")})
        EXPECT_TRUE(checkCommandLine(bad)) << names::printable(bad);
}

TEST(NamesInVtysh, WrapperNeverStartsVtyshForARefusedLine) {
    boost::asio::io_context io;
    // /bin/echo would exit 0 if it were started: a refusal is exit code -1 and a reason.
    twinrail::frr::Vtysh vtysh(io, {"/bin/echo", ""});
    std::optional<twinrail::ProcessResult> result;
    vtysh.run({"-c", "configure terminal", "-c", "route-map X permit 10\nno router bgp"},
              [&result](twinrail::ProcessResult r) { result = std::move(r); });
    EXPECT_FALSE(result) << "the refusal is asynchronous, as a real run";
    io.run();
    ASSERT_TRUE(result);
    EXPECT_EQ(result->exitCode, -1);
    EXPECT_NE(result->err.find("refused"), std::string::npos) << result->err;
    EXPECT_EQ(result->out, "");

    twinrail::frr::DaemonVty vty(io, "/nonexistent/zebra.vty", std::chrono::seconds(1));
    std::string why;
    vty.command("show evpn es\nshow version", [&why](bool ok, std::string text) {
        EXPECT_FALSE(ok);
        why = std::move(text);
    });
    io.restart();
    io.run();
    EXPECT_NE(why.find("refused to send"), std::string::npos) << why;
}

TEST(NamesInLab, ScriptsSplitIntoArgvOrAreRefused) {
    using twinrail::lab::Argv;
    using twinrail::lab::scriptWords;
    EXPECT_EQ(scriptWords("ip  link set swp1 up"), (Argv{"ip", "link", "set", "swp1", "up"}));
    EXPECT_EQ(scriptWords("sysctl -qw net.ipv4.conf.br-rail1.arp_accept=1"),
              (Argv{"sysctl", "-qw", "net.ipv4.conf.br-rail1.arp_accept=1"}));
    for (const char* line :
         {"ip link set $(reboot) up", "a; b", "a && b", "a | b", "a > /etc/x", "echo `id`",
          "echo 'x'", "echo \"x\"", "ls *", "a\tb", "a\\b", "echo ~"})
        EXPECT_THROW(scriptWords(line), std::invalid_argument) << line;
    auto cmds =
        twinrail::lab::scriptCommands("set -e\n# comment\n\nip link set a up\nip link set b up\n");
    EXPECT_EQ(cmds, (std::vector<Argv>{{"ip", "link", "set", "a", "up"},
                                       {"ip", "link", "set", "b", "up"}}));
}

TEST(NamesInLab, ThePlannersLinkScriptsNeedNoShell) {
    auto built = plan::buildPlan(twinrail::lab::defaultLabRequest(plan::Attach::EvpnMh));
    ASSERT_TRUE(std::holds_alternative<plan::Plan>(built));
    const auto& p = std::get<plan::Plan>(built);
    for (const auto& sw : p.switches) {
        if (sw.spine) continue;
        for (bool bonds : {false, true}) {
            std::vector<twinrail::lab::Argv> cmds;
            EXPECT_NO_THROW(cmds = twinrail::lab::scriptCommands(
                                plan::evpnLinkCommands(p, plan::evpnMhLeaf(p, sw), bonds)))
                << sw.name;
            EXPECT_FALSE(cmds.empty());
        }
    }
}
