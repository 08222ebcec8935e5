// The vty-over-TCP channel against real FRR 8.4: zebra and bgpd in namespace tfv<pid>a,
// started with -A 127.0.0.1 and a vty password, as SONiC's bgp container runs them. The
// test process enters the namespace (setns) so that 127.0.0.1 is FRR's, and compares what
// the channel sees and does with what vtysh sees.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <thread>

#include "twinrail/frr/running_config.h"
#include "twinrail/frr/vty_tcp_channel.h"
#include "twinrail/lab/fabric.h"
#include "twinrail/lab/shell.h"

using namespace twinrail;
using namespace std::chrono_literals;

namespace {

constexpr const char* kPassword = "tfv-Secret1";

class FrrVty : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        if (::geteuid() != 0 || !std::filesystem::exists("/usr/lib/frr/zebra")) return;
        fabric_ = std::make_unique<lab::Fabric>("tfv" + std::to_string(::getpid()));
        fabric_->addNode("a");
        fabric_->startFrr("a", std::string("frr defaults datacenter\npassword ") + kPassword +
                                   "\n!\nrouter bgp 65001\n bgp router-id 10.0.0.1\n!\n");
        // Sockets made from now on are in the namespace: 127.0.0.1 is FRR's there.
        home_ = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        const int target = ::open(("/var/run/netns/" + ns()).c_str(), O_RDONLY | O_CLOEXEC);
        if (home_ < 0 || target < 0 || ::setns(target, CLONE_NEWNET) != 0) fabric_.reset();
        if (target >= 0) ::close(target);
    }
    static void TearDownTestSuite() {
        if (home_ >= 0) {
            ::setns(home_, CLONE_NEWNET);
            ::close(home_);
            home_ = -1;
        }
        fabric_.reset();  // stops zebra, bgpd, staticd, removes the namespace
    }
    void SetUp() override {
        if (!fabric_) GTEST_SKIP() << "needs root and FRR in /usr/lib/frr";
    }
    static std::string ns() { return fabric_->ns("a"); }
    static std::string vtysh(const std::vector<std::string>& args) {
        lab::Argv argv{"vtysh", "-N", ns()};
        argv.insert(argv.end(), args.begin(), args.end());
        return lab::run(argv).out;
    }

    std::unique_ptr<frr::Channel> channel(const std::string& password,
                                          std::chrono::milliseconds timeout = 5s) {
        frr::VtyTcpOptions options;
        options.password = password;
        options.timeout = timeout;
        options.reconnectMin = 100ms;
        options.reconnectMax = 500ms;
        return frr::makeVtyTcpFrr(io_, options);
    }
    bool runUntil(const std::function<bool()>& done, std::chrono::milliseconds limit = 10s) {
        auto end = std::chrono::steady_clock::now() + limit;
        while (!done() && std::chrono::steady_clock::now() < end) {
            io_.restart();
            io_.run_for(10ms);
        }
        return done();
    }
    struct Answer {
        bool done = false;
        bool ok = false;
        std::string text;
    };
    Answer show(frr::Channel& frr, const std::string& command) {
        auto answer = std::make_shared<Answer>();
        frr.show(command, [answer](bool ok, std::string text) {
            *answer = Answer{true, ok, std::move(text)};
        });
        EXPECT_TRUE(runUntil([answer] { return answer->done; })) << command;
        return *answer;
    }
    ProcessResult run(frr::Channel& frr, std::vector<std::string> args) {
        auto result = std::make_shared<std::optional<ProcessResult>>();
        frr.run(std::move(args), [result](ProcessResult r) { *result = std::move(r); });
        EXPECT_TRUE(runUntil([result] { return result->has_value(); }));
        return result->value_or(ProcessResult{});
    }
    Answer showRunning(frr::Channel& frr) {
        auto answer = std::make_shared<Answer>();
        frr.showRunning([answer](bool ok, std::string text) {
            *answer = Answer{true, ok, std::move(text)};
        });
        EXPECT_TRUE(runUntil([answer] { return answer->done; }));
        return *answer;
    }

    boost::asio::io_context io_;
    static std::unique_ptr<lab::Fabric> fabric_;
    static int home_;
};

std::unique_ptr<lab::Fabric> FrrVty::fabric_;
int FrrVty::home_ = -1;

TEST_F(FrrVty, PasswordFileIsReadAndCheckedAsASecret) {
    std::string dir = (std::filesystem::temp_directory_path() / "tfv_pw_XXXXXX").string();
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    const std::string path = dir + "/frr-vty";
    std::ofstream(path) << kPassword << "\n";
    ::chmod(path.c_str(), 0644);
    std::string password;
    EXPECT_TRUE(frr::readVtyPasswordFile(path, password));
    ::chmod(path.c_str(), 0600);
    EXPECT_EQ(frr::readVtyPasswordFile(path, password), std::nullopt);
    std::filesystem::remove_all(dir);
    auto frr = channel(password);
    EXPECT_TRUE(show(*frr, "show version").ok);
}

TEST_F(FrrVty, ShowGoesToTheDaemonThatAnswers) {
    auto frr = channel(kPassword);
    Answer bgp = show(*frr, "show bgp ipv4 unicast json");
    EXPECT_TRUE(bgp.ok) << bgp.text;
    EXPECT_NE(bgp.text.find("\"routerId\": \"10.0.0.1\""), std::string::npos) << bgp.text;
    Answer routes = show(*frr, "show ip route json");
    EXPECT_TRUE(routes.ok) << routes.text;
    EXPECT_EQ(routes.text.rfind('{', 0), 0U) << routes.text;
    auto answer = std::make_shared<Answer>();
    frr->zebra("show interface brief", [answer](bool ok, std::string text) {
        *answer = Answer{true, ok, std::move(text)};
    });
    ASSERT_TRUE(runUntil([answer] { return answer->done; }));
    EXPECT_TRUE(answer->ok);
    EXPECT_NE(answer->text.find("lo"), std::string::npos) << answer->text;
    // Many commands at once: one at a time on each daemon's connection, answered in the
    // order asked there (the two daemons answer side by side).
    auto order = std::make_shared<std::vector<int>>();
    for (int i = 0; i < 20; ++i) {
        const std::string command =
            i % 2 == 0 ? "show bgp ipv4 unicast json" : "show ip route json";
        frr->show(command, [order, i](bool ok, const std::string& text) {
            order->push_back(ok && text.find('{') == 0 ? i : -1);
        });
    }
    ASSERT_TRUE(runUntil([order] { return order->size() == 20; }));
    int lastEven = -2;
    int lastOdd = -1;
    for (int i : *order) {
        ASSERT_GE(i, 0) << "a command failed";
        int& last = i % 2 == 0 ? lastEven : lastOdd;
        EXPECT_EQ(i, last + 2) << "out of order on " << (i % 2 == 0 ? "bgpd" : "zebra");
        last = i;
    }
    Answer bad = show(*frr, "show no-such-thing");
    EXPECT_FALSE(bad.ok);
    EXPECT_NE(bad.text.find("Unknown command"), std::string::npos) << bad.text;
    Answer refused = show(*frr, "show version\nwrite memory");
    EXPECT_FALSE(refused.ok);
    EXPECT_NE(refused.text.find("0x0a"), std::string::npos) << refused.text;
}

TEST_F(FrrVty, RunningConfigMatchesVtysh) {
    auto frr = channel(kPassword);
    Answer ours = showRunning(*frr);
    ASSERT_TRUE(ours.ok) << ours.text;
    auto mine = frr::RunningConfig::parse(ours.text);
    auto theirs = frr::RunningConfig::parse(vtysh({"-c", "show running-config"}));
    EXPECT_EQ(mine.bgpRouterHeader(), "router bgp 65001");
    EXPECT_EQ(mine.bgpRouterHeader(), theirs.bgpRouterHeader());
    EXPECT_EQ(mine.linesUnder({"router bgp"}, "bgp router-id"),
              theirs.linesUnder({"router bgp"}, "bgp router-id"));
    // Lines both daemons have (the vty password) are there, and once.
    EXPECT_TRUE(mine.has({{}, std::string("password ") + kPassword}));
    EXPECT_EQ(ours.text.find("password "), ours.text.rfind("password "));
}

TEST_F(FrrVty, EnsureAndRunRoundTrip) {
    auto frr = channel(kPassword);
    const std::vector<frr::ConfigLine> required = {
        {{}, "ip import-table 10"},
        {{"router bgp", "address-family ipv4 unicast"}, "redistribute table 10"},
        {{}, "ipv6 prefix-list TFV-V6 seq 5 permit ::/0 ge 128"},
        {{"route-map TFV-V6 permit 10"}, "match ipv6 address prefix-list TFV-V6"}};
    auto first = std::make_shared<std::optional<frr::Channel::EnsureResult>>();
    frr->ensure(required, true, [first](frr::Channel::EnsureResult r) { *first = std::move(r); });
    ASSERT_TRUE(runUntil([first] { return first->has_value(); }));
    EXPECT_TRUE((*first)->reachable);
    EXPECT_EQ((*first)->error, "");
    EXPECT_EQ((*first)->added.size(), required.size());
    EXPECT_TRUE((*first)->missing.empty());
    // Each line is where FRR needs it: the import in zebra, BGP's lines in bgpd.
    EXPECT_NE(vtysh({"-d", "zebra", "-c", "show running-config"}).find("ip import-table 10"),
              std::string::npos);
    const std::string bgpd = vtysh({"-d", "bgpd", "-c", "show running-config"});
    EXPECT_NE(bgpd.find("redistribute table 10"), std::string::npos) << bgpd;
    EXPECT_NE(bgpd.find("match ipv6 address prefix-list TFV-V6"), std::string::npos) << bgpd;
    auto again = std::make_shared<std::optional<frr::Channel::EnsureResult>>();
    frr->ensure(required, false, [again](frr::Channel::EnsureResult r) { *again = std::move(r); });
    ASSERT_TRUE(runUntil([again] { return again->has_value(); }));
    EXPECT_TRUE((*again)->missing.empty());
    EXPECT_TRUE((*again)->added.empty());

    // A refused line fails the call and leaves FRR out of config mode.
    ProcessResult bad = run(*frr, {"-c", "configure terminal", "-c", "route-map TFV-X permit 10",
                                   "-c", "set metric 99999999999", "-c", "set tag 5"});
    EXPECT_EQ(bad.exitCode, 1);
    EXPECT_NE(bad.err.find("set metric 99999999999"), std::string::npos) << bad.err;
    EXPECT_EQ(vtysh({"-c", "show running-config"}).find("set tag 5"), std::string::npos);
    EXPECT_TRUE(show(*frr, "show bgp summary json").ok);  // not stuck in a config node
    // A warning vtysh exits 0 on is no failure here either.
    EXPECT_EQ(run(*frr, {"-c", "clear bgp ipv4 unicast 192.0.2.9 soft in"}).exitCode, 0);
    ProcessResult refused = run(*frr, {"-c", "configure terminal", "-c", "hostname x"});
    EXPECT_EQ(refused.exitCode, -1);
    EXPECT_NE(refused.err.find("-d zebra"), std::string::npos) << refused.err;
}

TEST_F(FrrVty, WrongPasswordFailsCleanly) {
    auto frr = channel("not-the-password");
    auto started = std::chrono::steady_clock::now();
    Answer answer = show(*frr, "show version");
    EXPECT_FALSE(answer.ok);
    EXPECT_NE(answer.text.find("refused the password"), std::string::npos) << answer.text;
    EXPECT_EQ(answer.text.find("not-the-password"), std::string::npos);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
    Answer running = showRunning(*frr);
    EXPECT_FALSE(running.ok);
}

TEST_F(FrrVty, HungDaemonTimesOutAndRecovers) {
    auto frr = channel(kPassword, 700ms);
    ASSERT_TRUE(show(*frr, "show version").ok);
    std::ifstream pidFile(fabric_->frrDir("a") + "/bgpd.pid");
    pid_t pid = 0;
    ASSERT_TRUE(pidFile >> pid);
    ::kill(pid, SIGSTOP);
    ProcessResult stuck = run(*frr, {"-c", "show bgp summary json"});
    ::kill(pid, SIGCONT);
    EXPECT_TRUE(stuck.timedOut);
    EXPECT_NE(stuck.err.find("no answer"), std::string::npos) << stuck.err;
    EXPECT_TRUE(show(*frr, "show bgp summary json").ok);  // a new connection
}

TEST_F(FrrVty, IdleConnectionIsKeptAliveWithoutFalseRestarts) {
    frr::VtyTcpOptions options;
    options.password = kPassword;
    options.keepalive = 50ms;  // many empty lines while idle, each answered by a prompt
    auto frr = frr::makeVtyTcpFrr(io_, options);
    auto restarted = std::make_shared<std::vector<std::string>>();
    frr->watchRestarts([restarted](const std::string& daemon) { restarted->push_back(daemon); });
    ASSERT_TRUE(show(*frr, "show version").ok);
    runUntil([] { return false; }, 600ms);
    EXPECT_TRUE(restarted->empty());
    EXPECT_TRUE(show(*frr, "show bgp ipv4 unicast json").ok);
}

TEST_F(FrrVty, BgpdRestartIsReported) {
    auto frr = channel(kPassword);
    auto restarted = std::make_shared<std::vector<std::string>>();
    frr->watchRestarts([restarted](const std::string& daemon) { restarted->push_back(daemon); });
    ASSERT_TRUE(show(*frr, "show bgp summary json").ok);
    EXPECT_TRUE(restarted->empty());
    lab::stopFrrDaemons({ns()}, {"bgpd"}, SIGKILL);
    lab::startFrrDaemons(ns(), {"bgpd"});  // and its config, password included
    ASSERT_TRUE(runUntil([restarted] { return !restarted->empty(); }));
    EXPECT_EQ(*restarted, std::vector<std::string>{"bgpd"});
    EXPECT_TRUE(show(*frr, "show bgp summary json").ok);
    frr->stopWatching();
}

// A server that logs in as FRR does, then answers a command with megabytes and no prompt:
// the channel gives up at maxReply instead of growing. No FRR, no root.
TEST(FrrVtyHostile, AnswerWithoutPromptIsBounded) {
    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(listener, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), len), 0);
    ASSERT_EQ(::listen(listener, 1), 0);
    ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    std::thread server([listener] {
        const int fd = ::accept(listener, nullptr, nullptr);
        if (fd < 0) return;
        auto say = [fd](const std::string& text) {
            ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
        };
        auto lines = [fd](int count) {  // reads `count` lines; returns them
            std::string got;
            char c = 0;
            while (count > 0 && ::recv(fd, &c, 1, 0) == 1) {
                got.push_back(c);
                if (c == '\n') --count;
            }
            return got;
        };
        say("\r\nUser Access Verification\r\n\r\n\xff\xfb");  // IAC WILL cut here
        say("\x01Password: ");
        lines(1);
        say("\r\nh> ");
        lines(1);
        say("enable\r\nh# ");
        std::string termLength = lines(2);
        std::string marker = termLength.substr(termLength.find('!'));
        marker.pop_back();
        say("terminal length 0\r\nh# " + marker + "\r\nh# ");
        lines(2);
        const std::string flood(size_t{64} * 1024, 'y');
        for (int i = 0; i < 64; ++i) say(flood);  // 4 MiB, no prompt
        ::close(fd);
    });
    boost::asio::io_context io;
    frr::VtyTcpOptions options;
    options.password = "x";
    options.zebraPort = ntohs(addr.sin_port);
    options.maxReply = size_t{1} << 20;
    auto frr = frr::makeVtyTcpFrr(io, options);
    std::optional<std::pair<bool, std::string>> answer;
    frr->zebra("show x",
               [&answer](bool ok, std::string text) { answer.emplace(ok, std::move(text)); });
    auto end = std::chrono::steady_clock::now() + 10s;
    while (!answer && std::chrono::steady_clock::now() < end) io.run_for(10ms);
    server.join();
    ::close(listener);
    ASSERT_TRUE(answer);
    EXPECT_FALSE(answer->first);
    EXPECT_NE(answer->second.find("larger than 1048576"), std::string::npos) << answer->second;
}

}  // namespace
