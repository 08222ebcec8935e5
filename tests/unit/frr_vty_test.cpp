// FRR's vty over TCP without FRR: the telnet filter and the answer reader fed byte streams
// cut everywhere, the routing of vtysh arguments onto zebra and bgpd, the running-config
// merge, and the password file. The bytes are those FRR 8.4.4 sends (see vty_protocol.h).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "twinrail/frr/running_config.h"
#include "twinrail/frr/vty_protocol.h"
#include "twinrail/frr/vty_routing.h"
#include "twinrail/frr/vty_tcp_channel.h"

using namespace twinrail::frr;
using Status = VtyReplyReader::Status;

namespace {

const std::string kIacs = "\xff\xfb\x01\xff\xfb\x03\xff\xfe\x22\xff\xfd\x1f";  // FRR's four
const std::string kBanner =
    "\r\nHello, this is FRRouting (version 8.4.4).\r\n\r\nUser Access "
    "Verification\r\n\r\n" +
    kIacs + "Password: ";

// Feeds `bytes` cut into pieces of `step` bytes through a fresh filter and `reader`.
Status feedInPieces(VtyReplyReader& reader, const std::string& bytes, size_t step) {
    TelnetFilter telnet;
    Status last = Status::NeedMore;
    for (size_t i = 0; i < bytes.size(); i += step) {
        last = reader.feed(telnet.filter(bytes.substr(i, step)));
        if (last != Status::NeedMore && i + step < bytes.size()) return Status::Malformed;
    }
    return last;
}

// What FRR sends back for `command` sent with `marker`: echo, output, prompt, the
// marker's echo, the prompt again.
std::string answer(const std::string& command, const std::string& output, const std::string& prompt,
                   const std::string& marker) {
    return command + "\r\n" + output + prompt + "! " + marker + "\r\n" + prompt;
}

}  // namespace

TEST(TelnetFilter, StripsNegotiationSplitAnywhere) {
    using namespace std::string_literals;
    // NAWS subnegotiation (with a NUL inside), IAC IAC, a two-byte NOP.
    const std::string bytes =
        "ab" + kIacs + "c\xff\xff"s + "d\xff\xfa\x1f\x00\x50\xff\xf0"s + "e\xff\xf1"s + "f";
    const std::string want =
        "abc\xff"
        "def";
    for (size_t step = 1; step <= bytes.size(); ++step) {
        TelnetFilter telnet;
        std::string got;
        for (size_t i = 0; i < bytes.size(); i += step) got += telnet.filter(bytes.substr(i, step));
        EXPECT_EQ(got, want) << "pieces of " << step;
    }
}

TEST(TelnetFilter, DropsNulBytes) {
    TelnetFilter telnet;
    EXPECT_EQ(telnet.filter(std::string("a\0b", 3)), "ab");
}

TEST(VtyLine, RefusesWhatTheVtyWouldEditOrDrop) {
    EXPECT_FALSE(checkVtyLine("route-map TR-OUT-swp1 permit 10"));
    EXPECT_FALSE(checkVtyLine(""));
    ASSERT_TRUE(checkVtyLine("show version\nwrite"));
    EXPECT_NE(checkVtyLine("show version\nwrite")->find("0x0a at offset 12"), std::string::npos);
    EXPECT_TRUE(checkVtyLine("show\tx"));
    EXPECT_TRUE(checkVtyLine("show\x7f"));
    EXPECT_TRUE(checkVtyLine("description caf\xc3\xa9"));                      // dropped by FRR
    EXPECT_TRUE(checkVtyLine("description \xff\xfb\x01"));                     // would be telnet
    EXPECT_NE(checkVtyLine("show ver?sion")->find("'?'"), std::string::npos);  // help
    EXPECT_TRUE(checkVtyLine(std::string(kMaxVtyLine + 1, 'x')));              // cut at 4095
    EXPECT_FALSE(checkVtyLine(std::string(kMaxVtyLine, 'x')));
}

TEST(VtyPrompt, RecognisesPromptsOnly) {
    EXPECT_TRUE(isPrompt("leaf1> "));
    EXPECT_TRUE(isPrompt("leaf1# "));
    EXPECT_TRUE(isPrompt("leaf1(config-route-map)# "));
    EXPECT_FALSE(isPrompt("leaf1#"));
    EXPECT_FALSE(isPrompt("description a# "));
    EXPECT_FALSE(isPrompt("# "));
    EXPECT_TRUE(isConfigPrompt("sw(config-router-af)# "));
    EXPECT_FALSE(isConfigPrompt("sw# "));
}

TEST(VtyError, ConfigFailsOnAnyPercentLineExecOnlyOnParserErrors) {
    EXPECT_EQ(vtyError("% [BGP] Unknown command: foo bar\n", false),
              "% [BGP] Unknown command: foo bar");
    EXPECT_TRUE(vtyError("% Ambiguous command: sh\n", false));
    EXPECT_TRUE(vtyError("% Command incomplete: router\n", false));
    EXPECT_TRUE(vtyError("% Invalid input detected\n", false));
    EXPECT_TRUE(vtyError("line\n% Configuration failed.\n", true));
    EXPECT_TRUE(vtyError("% Malformed community-list value\n", true));
    // vtysh exits 0 on these: so does this channel.
    EXPECT_FALSE(vtyError("% BGP instance not found\n", false));
    EXPECT_FALSE(vtyError("% BGP: Unknown neighbor - \"swp9\"\n", false));
    EXPECT_FALSE(vtyError("The route-map 'NOPE' does not exist.\n", true));
    EXPECT_FALSE(vtyError("{\"a\": \"% not at line start\"}\n", true));
}

TEST(VtyReplyReader, LoginPasswordPromptThenPromptInAnyPieces) {
    for (size_t step = 1; step <= kBanner.size(); ++step) {
        VtyReplyReader reader(1 << 20);
        reader.expectLogin();
        EXPECT_EQ(feedInPieces(reader, kBanner, step), Status::PasswordPrompt) << step;
    }
    VtyReplyReader reader(1 << 20);
    reader.expectLogin();
    EXPECT_EQ(reader.feed("\r\nleaf-1> "), Status::Prompt);
    EXPECT_EQ(reader.prompt(), "leaf-1> ");
    reader.expectLogin();  // a wrong password: asked again
    EXPECT_EQ(reader.feed("\r\nPass"), Status::NeedMore);
    EXPECT_EQ(reader.feed("word: "), Status::PasswordPrompt);
}

TEST(VtyReplyReader, CommandOutputUpToTheMarkedPrompt) {
    const std::string marker = vtyMarker(0x0123456789abcdefULL);
    EXPECT_EQ(marker, "twinrail-0123456789abcdef");
    const std::string bytes = answer("show bgp summary json", "{}\r\n", "leaf1# ", marker);
    for (size_t step = 1; step <= bytes.size(); ++step) {
        VtyReplyReader reader(1 << 20);
        reader.expectCommand("show bgp summary json", marker);
        ASSERT_EQ(feedInPieces(reader, bytes, step), Status::Done) << step;
        EXPECT_EQ(reader.output(), "{}\n");
        EXPECT_EQ(reader.prompt(), "leaf1# ");
    }
}

TEST(VtyReplyReader, NotFooledByPromptLikeOutput) {
    // The output holds the prompt, a prompt-like line and an old marker; it stops only at
    // this command's marker.
    const std::string marker = vtyMarker(42);
    const std::string output =
        "leaf1# \r\nleaf1(config)# \r\n! " + vtyMarker(41) + "\r\nleaf1# ! twinrail-\r\n";
    const std::string bytes = answer("show running-config", output, "leaf1# ", marker);
    VtyReplyReader reader(1 << 20);
    reader.expectCommand("show running-config", marker);
    // Cut right after each prompt-like piece: still waiting.
    const size_t cut = std::string("show running-config\r\nleaf1# ").size();
    EXPECT_EQ(reader.feed(bytes.substr(0, cut)), Status::NeedMore);
    EXPECT_EQ(reader.feed(bytes.substr(cut)), Status::Done);
    EXPECT_EQ(reader.output(),
              "leaf1# \nleaf1(config)# \n! " + vtyMarker(41) + "\nleaf1# ! twinrail-\n");
}

TEST(VtyReplyReader, OutputWithoutFinalNewlineAndEmptyCommand) {
    const std::string marker = vtyMarker(7);
    VtyReplyReader reader(1 << 20);
    reader.expectCommand("show x", marker);
    EXPECT_EQ(reader.feed(answer("show x", "no newline", "h(config)# ", marker)), Status::Done);
    EXPECT_EQ(reader.output(), "no newline");
    EXPECT_EQ(reader.prompt(), "h(config)# ");
    reader.expectCommand("", marker);  // the keepalive
    EXPECT_EQ(reader.feed("\r\nh# ! " + marker + "\r\nh# "), Status::Done);
    EXPECT_EQ(reader.output(), "");
}

TEST(VtyReplyReader, MalformedAnswersAreErrors) {
    const std::string marker = vtyMarker(9);
    VtyReplyReader reader(1 << 20);
    reader.expectCommand("description " + std::string(10, 'x'), marker);
    // FRR cut the line: the echo is not what was sent.
    EXPECT_EQ(reader.feed(answer("description xxxx", "", "h# ", marker)), Status::Malformed);
    EXPECT_NE(reader.problem().find("echo"), std::string::npos);
    reader.expectCommand("show x", marker);
    EXPECT_EQ(reader.feed("show x\r\nh# ! " + marker + "\r\nother# "), Status::Malformed);
    reader.expectCommand("show x", marker);
    EXPECT_EQ(reader.feed("show x\r\nh# ! " + marker + "\r\nh# \r\nmore"), Status::Malformed);
}

TEST(VtyReplyReader, HostileServerWithoutPromptIsBounded) {
    const size_t limit = size_t{1} << 20;
    VtyReplyReader reader(limit);
    reader.expectCommand("show x", vtyMarker(1));
    const std::string chunk(size_t{64} * 1024, 'y');
    Status status = Status::NeedMore;
    size_t fed = 0;
    while (status == Status::NeedMore && fed < 8 * limit) {
        status = reader.feed(chunk);
        fed += chunk.size();
    }
    EXPECT_EQ(status, Status::TooLarge);
    EXPECT_LE(fed, limit + chunk.size());
    EXPECT_TRUE(reader.received().empty());  // nothing kept past the bound
    reader.expectLogin();                    // a banner that never asks
    status = Status::NeedMore;
    for (fed = 0; status == Status::NeedMore && fed < 8 * limit; fed += chunk.size())
        status = reader.feed(chunk);
    EXPECT_EQ(status, Status::TooLarge);
}

TEST(VtyRouting, ConfigLinesGoToTheDaemonThatOwnsThem) {
    EXPECT_EQ(configLineOwner("router bgp 65101"), FrrDaemon::Bgpd);
    EXPECT_EQ(configLineOwner("route-map TR-IN-swp1 permit 10"), FrrDaemon::Bgpd);
    EXPECT_EQ(configLineOwner("no route-map TR-IN-swp1"), FrrDaemon::Bgpd);
    EXPECT_EQ(configLineOwner("ipv6 prefix-list HR seq 5 permit ::/0 ge 128"), FrrDaemon::Bgpd);
    EXPECT_EQ(configLineOwner("bgp community-list standard X permit 1:1"), FrrDaemon::Bgpd);
    EXPECT_EQ(configLineOwner("bgp as-path access-list A permit _1_"), FrrDaemon::Bgpd);
    EXPECT_EQ(configLineOwner("ip import-table 10"), FrrDaemon::Zebra);
    EXPECT_EQ(configLineOwner("no ip import-table 10"), FrrDaemon::Zebra);
    EXPECT_EQ(configLineOwner("ip protocol bgp route-map RM"), FrrDaemon::Zebra);
    EXPECT_EQ(configLineOwner("interface Ethernet0"), FrrDaemon::Zebra);
    EXPECT_FALSE(configLineOwner("neighbor swp1 route-map X in"));  // under a block
    EXPECT_FALSE(configLineOwner("bgpx"));
    EXPECT_EQ(execCommandOwner("show bgp neighbors json"), FrrDaemon::Bgpd);
    EXPECT_EQ(execCommandOwner("clear bgp ipv4 unicast swp1 soft in"), FrrDaemon::Bgpd);
    EXPECT_EQ(execCommandOwner("show ip route table json"), FrrDaemon::Zebra);
    EXPECT_EQ(execCommandOwner("show evpn arp-cache vni all json"), FrrDaemon::Zebra);
    EXPECT_FALSE(execCommandOwner("write memory"));
}

TEST(VtyRouting, EnsureArgumentsSplitPerDaemon) {
    RunningConfig running = RunningConfig::parse("router bgp 65101\n");
    std::vector<ConfigLine> lines = {
        {{}, "ip import-table 10"},
        {{"router bgp", "address-family ipv4 unicast"}, "redistribute table 10"},
        {{"route-map HR-V6 permit 10"}, "match ipv6 address prefix-list HR-V6"}};
    VtyRunPlan plan = planVtyRun(vtyshBatchArgs(running, lines));
    ASSERT_EQ(plan.error, "");
    ASSERT_EQ(plan.scripts.size(), 2U);
    EXPECT_EQ(plan.scripts[0].daemon, FrrDaemon::Zebra);
    EXPECT_EQ(plan.scripts[0].lines,
              (std::vector<std::string>{"configure terminal", "ip import-table 10"}));
    EXPECT_EQ(plan.scripts[1].daemon, FrrDaemon::Bgpd);
    EXPECT_EQ(plan.scripts[1].lines,
              (std::vector<std::string>{"configure terminal", "router bgp 65101",
                                        "address-family ipv4 unicast", "redistribute table 10",
                                        "end", "configure terminal", "route-map HR-V6 permit 10",
                                        "match ipv6 address prefix-list HR-V6"}));
}

TEST(VtyRouting, ExecAfterConfigAndForcedDaemon) {
    VtyRunPlan plan =
        planVtyRun({"-d", "bgpd", "-c", "configure terminal", "-c", "route-map A permit 10", "-c",
                    "end", "-c", "clear bgp ipv4 unicast swp1 soft out"});
    ASSERT_EQ(plan.error, "");
    ASSERT_EQ(plan.scripts.size(), 1U);
    EXPECT_EQ(plan.scripts[0].lines.back(), "clear bgp ipv4 unicast swp1 soft out");
    plan = planVtyRun({"-c", "configure terminal", "-c", "route-map A permit 10", "-c",
                       "set metric 5", "-c", "end", "-c", "clear bgp ipv4 unicast swp1 soft out"});
    ASSERT_EQ(plan.scripts.size(), 1U);
    EXPECT_EQ(
        plan.scripts[0].lines,
        (std::vector<std::string>{"configure terminal", "route-map A permit 10", "set metric 5",
                                  "end", "clear bgp ipv4 unicast swp1 soft out"}));
}

TEST(VtyRouting, RefusesWhatItCannotPlaceBeforeSendingAnything) {
    auto error = [](const std::vector<std::string>& args) { return planVtyRun(args).error; };
    EXPECT_NE(error({"-c", "write memory"}).find("line 1 \"write memory\""), std::string::npos);
    EXPECT_NE(error({"-c", "configure terminal", "-c", "hostname x"}).find("-d zebra"),
              std::string::npos);
    EXPECT_NE(error({"-d", "staticd", "-c", "show x"}).find("zebra and bgpd only"),
              std::string::npos);
    EXPECT_NE(error({"-f", "/etc/frr/frr.conf"}).find("only -c and -d"), std::string::npos);
    EXPECT_NE(error({"-c"}).find("without a value"), std::string::npos);
    EXPECT_NE(error({"-c", "show bgp", "-c", "show x\nwrite"}).find("line 2"), std::string::npos);
    EXPECT_NE(error({"-c", "show ip route 10.0.0.0/8 longer?"}).find("'?'"), std::string::npos);
}

TEST(VtyRouting, MergedRunningConfigParsesAsVtyshWould) {
    const std::string zebra =
        "\nCurrent configuration:\n!\nfrr version 8.4.4\nfrr defaults "
        "datacenter\n!\nhostname leaf1\npassword zebra\n!\nip import-table "
        "10\n!\nroute-map SHARED permit 10\nexit\n!\nend\n";
    const std::string bgpd =
        "\nCurrent configuration:\n!\nfrr version 8.4.4\nfrr defaults "
        "datacenter\n!\nhostname leaf1\npassword zebra\n!\nrouter bgp 65101\n "
        "!\n address-family ipv4 unicast\n  redistribute table 10\n "
        "exit-address-family\nexit\n!\nroute-map SHARED permit 10\nexit\n!\nend\n";
    const std::string merged = mergeRunningConfigs(zebra, bgpd);
    EXPECT_EQ(merged.find("frr version"), merged.rfind("frr version"));
    EXPECT_EQ(merged.find("route-map SHARED"), merged.rfind("route-map SHARED"));
    RunningConfig running = RunningConfig::parse(merged);
    EXPECT_EQ(running.bgpRouterHeader(), "router bgp 65101");
    EXPECT_TRUE(running.has({{}, "ip import-table 10"}));
    EXPECT_TRUE(
        running.has({{"router bgp", "address-family ipv4 unicast"}, "redistribute table 10"}));
    EXPECT_TRUE(running.has({{}, "route-map SHARED permit 10"}));
    EXPECT_FALSE(running.has({{}, "ip import-table 11"}));
}

class VtyPasswordFile : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string tmpl = (std::filesystem::temp_directory_path() / "frr_vty_XXXXXX").string();
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::string write(const std::string& name, const std::string& text, mode_t mode) {
        std::string path = (dir_ / name).string();
        std::ofstream(path) << text;
        ::chmod(path.c_str(), mode);
        return path;
    }
    std::filesystem::path dir_;
};

TEST_F(VtyPasswordFile, ReadsOneWordFromAPrivateFile) {
    std::string password;
    EXPECT_EQ(readVtyPasswordFile(write("ok", "zebra\n", 0600), password), std::nullopt);
    EXPECT_EQ(password, "zebra");
}

TEST_F(VtyPasswordFile, RefusesAndNeverShowsThePassword) {
    auto refuse = [this](const std::string& name, const std::string& text, mode_t mode) {
        std::string password = "unchanged";
        auto error = readVtyPasswordFile(write(name, text, mode), password);
        EXPECT_TRUE(error) << name;
        EXPECT_EQ(password, "unchanged") << name;
        return error.value_or("");
    };
    EXPECT_NE(refuse("open", "s3cret-a\n", 0644).find("readable by group or others"),
              std::string::npos);
    EXPECT_NE(refuse("empty", "", 0600).find("empty"), std::string::npos);
    EXPECT_NE(refuse("lines", "a\nb\n", 0600).find("more than one line"), std::string::npos);
    for (const std::string text : {"two words", "tab\tx", "caf\xc3\xa9", "s3cret\x7f"}) {
        const std::string error = refuse("bad", text, 0600);
        EXPECT_NE(error.find("printable ASCII"), std::string::npos) << error;
        EXPECT_EQ(error.find(text), std::string::npos) << "the password is in: " << error;
    }
    std::string password;
    EXPECT_TRUE(readVtyPasswordFile((dir_ / "missing").string(), password));
    EXPECT_TRUE(readVtyPasswordFile(dir_.string(), password));  // a directory
}

TEST(VtyTcpOptions, ChecksBeforeConnecting) {
    VtyTcpOptions options;
    EXPECT_NE(checkVtyTcpOptions(options).value_or("").find("password"), std::string::npos);
    options.password = "zebra";
    EXPECT_EQ(checkVtyTcpOptions(options), std::nullopt);
    options.address = "localhost";  // no name lookups
    EXPECT_NE(checkVtyTcpOptions(options).value_or("").find("not an IP address"),
              std::string::npos);
    options.address = "127.0.0.1";
    options.timeout = std::chrono::milliseconds(0);
    EXPECT_TRUE(checkVtyTcpOptions(options));
}
