// FRR through the Docker Engine API against the real thing: Docker's engine, and FRR in a
// container of its own in a namespace (the lab's frr_container.h, as SONiC's bgp container:
// bgpd with -P 0, its vty sockets inside the container). show, running-config, run,
// ensure, zebra commands in order, a container restart heard from Docker's events, a
// stopped container, a wrong name, a silent engine (the deadline). Root and dockerd.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <memory>

#include "twinrail/frr/docker_channel.h"
#include "twinrail/frr/docker_engine.h"
#include "twinrail/lab/fabric.h"
#include "twinrail/lab/frr_container.h"
#include "twinrail/lab/process.h"
#include "twinrail/lab/shell.h"

namespace frr = twinrail::frr;
namespace lab = twinrail::lab;
using namespace std::chrono_literals;

namespace {

// Runs the loop until `done` or `timeout`.
bool runUntil(boost::asio::io_context& io, const std::function<bool()>& done,
              std::chrono::milliseconds timeout) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    io.restart();
    while (!done() && std::chrono::steady_clock::now() < end) io.run_for(20ms);
    return done();
}

class FrrInContainer : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_EQ(lab::run({"docker", "info"}).rc, 0) << "no Docker engine answers";
        fabric_ = std::make_unique<lab::Fabric>(lab::uniquePrefix("tfd"));
        fabric_->addNode("r1");
        ns_ = fabric_->ns("r1");
        lab::startFrrContainer(ns_,
                               "frr defaults datacenter\nhostname r1\n!\nrouter bgp 65001\n"
                               " bgp router-id 10.0.0.1\nexit\n!\n",
                               false);
        frr::DockerFrrOptions o;
        o.container = lab::frrContainerName(ns_);
        channel_ = frr::makeDockerFrr(io_, o);
    }
    void TearDown() override {
        channel_.reset();
        lab::removeFrrContainers({ns_});
        std::error_code ec;
        std::filesystem::remove_all("/etc/frr/" + ns_, ec);
        std::filesystem::remove_all("/var/run/frr/" + ns_, ec);
        fabric_.reset();
    }
    std::pair<bool, std::string> show(const std::string& command) {
        std::optional<std::pair<bool, std::string>> got;
        channel_->show(command, [&got](bool ok, std::string text) { got.emplace(ok, text); });
        EXPECT_TRUE(runUntil(
            io_, [&got] { return got.has_value(); }, 30s))
            << command;
        return got.value_or(std::pair{false, std::string("no answer")});
    }

    boost::asio::io_context io_;
    std::unique_ptr<lab::Fabric> fabric_;
    std::string ns_;
    std::unique_ptr<frr::Channel> channel_;
};

}  // namespace

TEST_F(FrrInContainer, ShowRunAndEnsureReachBgpdWhoseVtyPortIsClosed) {
    auto [ok, version] = show("show version");
    ASSERT_TRUE(ok) << version;
    EXPECT_NE(version.find("FRRouting"), std::string::npos) << version;
    // bgpd's TCP vty is closed (-P 0) and its unix socket is not on the switch: the exec
    // is the only way in, as on SONiC 202505 and later.
    auto tcp = fabric_->run("r1", {"bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/2605"});
    EXPECT_NE(tcp.rc, 0) << "bgpd's vty TCP port answered";
    EXPECT_FALSE(std::filesystem::exists("/var/run/frr/" + ns_ + "/bgpd.vty"));

    std::optional<twinrail::ProcessResult> ran;
    channel_->run({"-c", "configure terminal", "-c", "route-map TWINRAIL-T permit 10", "-c",
                   " set extcommunity bandwidth 100"},
                  [&ran](twinrail::ProcessResult r) { ran = std::move(r); });
    ASSERT_TRUE(runUntil(
        io_, [&ran] { return ran.has_value(); }, 30s));
    EXPECT_EQ(ran->exitCode, 0) << ran->err << ran->out;

    std::optional<frr::Channel::EnsureResult> ensured;
    const std::vector<frr::ConfigLine> want{
        {{"router bgp 65001"}, "bgp bestpath as-path multipath-relax"},
        {{}, "route-map TWINRAIL-T permit 10"}};
    channel_->ensure(want, true, [&ensured](frr::Channel::EnsureResult r) { ensured = r; });
    ASSERT_TRUE(runUntil(
        io_, [&ensured] { return ensured.has_value(); }, 60s));
    EXPECT_TRUE(ensured->reachable) << ensured->error;
    EXPECT_TRUE(ensured->missing.empty())
        << ensured->error << (ensured->missing.empty() ? "" : ensured->missing.front().describe());
    EXPECT_EQ(ensured->added.size(), 1U);
    auto [rok, running] = show("show running-config");
    ASSERT_TRUE(rok) << running;
    EXPECT_NE(running.find("bgp bestpath as-path multipath-relax"), std::string::npos);
    EXPECT_NE(running.find("set extcommunity bandwidth 100"), std::string::npos);
}

TEST_F(FrrInContainer, ZebraCommandsAnswerInOrderAndControlCharactersNeverLeave) {
    std::vector<std::string> order;
    for (const char* c : {"show version", "show ip route summary", "show interface brief"}) {
        channel_->zebra(c, [&order, c](bool ok, const std::string& text) {
            EXPECT_TRUE(ok) << c << ": " << text;
            order.emplace_back(c);
        });
    }
    ASSERT_TRUE(runUntil(
        io_, [&order] { return order.size() == 3; }, 60s));
    EXPECT_EQ(order, (std::vector<std::string>{"show version", "show ip route summary",
                                               "show interface brief"}));
    auto [ok, why] = show("show version\nconfigure terminal");
    EXPECT_FALSE(ok);
    EXPECT_NE(why.find("control character 0x0a"), std::string::npos) << why;
}

TEST_F(FrrInContainer, ARestartOfTheContainerIsHeardAndAStoppedOneIsAnError) {
    std::vector<std::string> restarted;
    channel_->watchRestarts([&restarted](const std::string& d) { restarted.push_back(d); });
    runUntil(
        io_, [] { return false; }, 500ms);  // the event stream is open
    ASSERT_EQ(lab::run({"docker", "stop", "--time", "1", lab::frrContainerName(ns_)}).rc, 0);
    auto [ok, why] = show("show version");
    EXPECT_FALSE(ok);
    EXPECT_NE(why.find("is not running"), std::string::npos) << why;
    EXPECT_TRUE(restarted.empty());
    ASSERT_EQ(lab::run({"docker", "start", lab::frrContainerName(ns_)}).rc, 0);
    ASSERT_TRUE(runUntil(
        io_, [&restarted] { return restarted.size() >= 2; }, 20s));
    EXPECT_EQ(restarted[0], "zebra");
    EXPECT_EQ(restarted[1], "bgpd");
    channel_->stopWatching();
}

TEST_F(FrrInContainer, AWrongContainerOrASilentEngineEndsWithAReason) {
    frr::DockerFrrOptions wrong;
    wrong.container = "twinrail-no-such-container";
    auto none = frr::makeDockerFrr(io_, wrong);
    std::optional<std::pair<bool, std::string>> got;
    none->show("show version", [&got](bool ok, std::string t) { got.emplace(ok, t); });
    ASSERT_TRUE(runUntil(
        io_, [&got] { return got.has_value(); }, 20s));
    EXPECT_FALSE(got->first);
    EXPECT_NE(got->second.find("No such container"), std::string::npos) << got->second;

    // An engine that accepts and never answers: the deadline ends the call.
    const std::string path = "/tmp/" + ns_ + "-silent.sock";
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
    ::unlink(path.c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::listen(fd, 4), 0);
    frr::DockerFrrOptions silent;
    silent.socket = path;
    silent.timeout = 300ms;
    auto mute = frr::makeDockerFrr(io_, silent);
    std::optional<twinrail::ProcessResult> r;
    const auto start = std::chrono::steady_clock::now();
    mute->run({"-c", "show version"}, [&r](twinrail::ProcessResult p) { r = std::move(p); });
    ASSERT_TRUE(runUntil(
        io_, [&r] { return r.has_value(); }, 10s));
    EXPECT_TRUE(r->timedOut);
    EXPECT_EQ(r->exitCode, -1);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
    ::close(fd);
    ::unlink(path.c_str());
}
