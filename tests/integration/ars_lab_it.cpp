// arsd on a real kernel (issue 22): a switch namespace with a host port and two uplinks to
// one destination, a kernel multipath route over both, arsd spraying (SWITCH_HASH RANDOM).
// The kernel's own multipath hash (policy 0: source and destination address) sends one
// host's flows down one uplink, so traffic on both shows the program steering. Then
// (b) a next hop withdrawn with `ip route replace` stops being used at once, and (c) after
// SIGTERM no filter is left on any port and the kernel forwards alone again.
// Namespaces arsl<pid>{h,s,d}; about 5 s.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "twinrail/lab/flow_probe.h"
#include "twinrail/lab/shell.h"

namespace tl = twinrail::lab;
using namespace std::chrono_literals;

namespace {

const std::string kPrefix = "arsl" + std::to_string(::getpid());
const std::string kHost = kPrefix + "h", kSwitch = kPrefix + "s", kDst = kPrefix + "d";
const char* kTarget = "10.99.0.1";

void inNs(const std::string& ns, const tl::Argv& argv) {
    tl::runOk(tl::inNamespace(ns, argv));
}

// The kernel's tx (or rx) packets of a port in a namespace.
uint64_t packets(const std::string& ns, const std::string& dev, const char* dir = "tx") {
    auto j = nlohmann::json::parse(tl::runOk({"ip", "-n", ns, "-s", "-j", "link", "show", dev}));
    return j.at(0).at("stats64").at(dir).at("packets").get<uint64_t>();
}

// One UDP flow sent from the host namespace (a thread that enters it: the socket is made
// there) every 200 us for `ms`; returns how many were sent.
uint64_t send(std::chrono::milliseconds ms) {
    auto job = std::async(std::launch::async, [ms] {
        int fd = ::open(("/var/run/netns/" + kHost).c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) return nlohmann::json{{"error", "setns"}};
        ::close(fd);
        return tl::runFlowSender(kTarget, 9000, 1, 200us, ms);
    });
    auto r = job.get();
    if (r.contains("error")) throw std::runtime_error("flow sender: " + r.dump());
    return r.at("sent").get<uint64_t>();
}

struct Deltas {
    uint64_t sent = 0, u1 = 0, u2 = 0;
};
std::ostream& operator<<(std::ostream& o, const Deltas& d) {
    return o << "sent " << d.sent << ", u1 " << d.u1 << ", u2 " << d.u2;
}
Deltas measure(std::chrono::milliseconds ms) {
    Deltas d;
    uint64_t a = packets(kSwitch, "u1"), b = packets(kSwitch, "u2");
    d.sent = send(ms);
    std::this_thread::sleep_for(50ms);  // the last packets leave
    d.u1 = packets(kSwitch, "u1") - a;
    d.u2 = packets(kSwitch, "u2") - b;
    return d;
}

std::string ingressFilters(const std::string& dev) {
    return tl::run(tl::inNamespace(kSwitch, {"tc", "filter", "show", "dev", dev, "ingress"})).out;
}

class ArsLab : public ::testing::Test {
  protected:
    void SetUp() override {
        if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces, BPF)";
        Down();
        dir_ = std::filesystem::temp_directory_path() / kPrefix;
        std::filesystem::create_directories(dir_);
        for (const auto& ns : {kHost, kSwitch, kDst}) {
            tl::runOk({"ip", "netns", "add", ns});
            // No IPv6: its neighbor discovery would be traffic of its own on the uplinks.
            inNs(ns, {"sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                      "net.ipv6.conf.default.disable_ipv6=1", "net.ipv4.conf.all.rp_filter=0",
                      "net.ipv4.conf.default.rp_filter=0"});
            inNs(ns, {"ip", "link", "set", "lo", "up"});
        }
        veth(kHost, "eth0", kSwitch, "hp");
        veth(kSwitch, "u1", kDst, "a1");
        veth(kSwitch, "u2", kDst, "a2");
        inNs(kHost, {"ip", "addr", "add", "10.0.0.2/24", "dev", "eth0"});
        inNs(kHost, {"ip", "route", "add", "default", "via", "10.0.0.1"});
        inNs(kSwitch, {"ip", "addr", "add", "10.0.0.1/24", "dev", "hp"});
        inNs(kSwitch, {"ip", "addr", "add", "10.0.1.1/30", "dev", "u1"});
        inNs(kSwitch, {"ip", "addr", "add", "10.0.2.1/30", "dev", "u2"});
        inNs(kSwitch,
             {"sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv4.fib_multipath_hash_policy=0"});
        inNs(kDst, {"ip", "addr", "add", "10.0.1.2/30", "dev", "a1"});
        inNs(kDst, {"ip", "addr", "add", "10.0.2.2/30", "dev", "a2"});
        inNs(kDst, {"ip", "addr", "add", std::string(kTarget) + "/32", "dev", "lo"});
        inNs(kDst, {"ip", "route", "add", "10.0.0.0/24", "via", "10.0.1.1"});
        multipath();
        std::ofstream(dir_ / "config_db.json") << R"({
          "PORT": {"hp": {}, "u1": {}, "u2": {}},
          "SWITCH_HASH": {"GLOBAL": {"ecmp_hash_algorithm": "RANDOM"}}
        })";
    }
    void TearDown() override {
        if (arsd_ > 0) {
            ::kill(arsd_, SIGKILL);
            ::waitpid(arsd_, nullptr, 0);
        }
        Down();
        if (!dir_.empty()) {
            if (HasFailure())
                std::cerr << "arsd log:\n" << tl::run({"cat", (dir_ / "arsd.log").string()}).out;
            std::filesystem::remove_all(dir_);
        }
    }
    static void Down() {
        for (const auto& ns : {kHost, kSwitch, kDst}) tl::run({"ip", "netns", "del", ns});
    }
    static void veth(const std::string& nsA, const std::string& a, const std::string& nsB,
                     const std::string& b) {
        tl::runOk(
            {"ip", "-n", nsA, "link", "add", a, "type", "veth", "peer", "name", b, "netns", nsB});
        inNs(nsA, {"ip", "link", "set", a, "up"});
        inNs(nsB, {"ip", "link", "set", b, "up"});
    }
    static void multipath() {
        inNs(kSwitch, {"ip", "route", "replace", std::string(kTarget) + "/32", "nexthop", "via",
                       "10.0.1.2", "dev", "u1", "nexthop", "via", "10.0.2.2", "dev", "u2"});
    }
    // arsd in the switch namespace as a child of ours, so its exit code is ours to read.
    void startArsd() {
        const std::string log = (dir_ / "arsd.log").string();
        const std::string config = (dir_ / "config_db.json").string();
        arsd_ = ::fork();
        ASSERT_GE(arsd_, 0);
        if (arsd_ == 0) {
            int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
            ::dup2(fd, 1);
            ::dup2(fd, 2);
            ::execlp("ip", "ip", "netns", "exec", kSwitch.c_str(), ARSD_BIN, "--config",
                     config.c_str(), "--no-state-db", "--no-frr-check", "--log-level", "debug",
                     nullptr);
            ::_exit(127);
        }
        ASSERT_TRUE(tl::waitUntil(
            [] {
                for (const char* dev : {"hp", "u1", "u2"})
                    if (ingressFilters(dev).empty()) return false;
                return true;
            },
            10s))
            << "arsd attached to no port";
        std::this_thread::sleep_for(300ms);  // its route snapshot and first samples
    }
    int stopArsd() {
        ::kill(arsd_, SIGTERM);
        int status = 0;
        ::waitpid(arsd_, &status, 0);
        arsd_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

    std::filesystem::path dir_;
    pid_t arsd_ = -1;
};

TEST_F(ArsLab, SpraysOverBothNexthopsFollowsAWithdrawalAndDetachesOnSigterm) {
    // The kernel alone: one host's flow keeps to one uplink (this is what arsd changes).
    auto kernel = measure(500ms);
    std::cout << "kernel alone: " << kernel << std::endl;
    ASSERT_GT(kernel.sent, 500u);
    EXPECT_LT(std::min(kernel.u1, kernel.u2), kernel.sent / 20) << kernel.u1 << "/" << kernel.u2;

    startArsd();
    // (a) Both next hops carry the flow.
    auto spray = measure(1000ms);
    std::cout << "arsd spraying: " << spray << std::endl;
    EXPECT_GT(spray.u1, spray.sent / 5) << spray.u1 << " of " << spray.sent;
    EXPECT_GT(spray.u2, spray.sent / 5) << spray.u2 << " of " << spray.sent;
    EXPECT_GE(spray.u1 + spray.u2, spray.sent * 9 / 10);

    // (b) u1 withdrawn from the kernel's route: unused after one sample period (1 ms; the
    // route itself follows the kernel's event at once).
    inNs(kSwitch,
         {"ip", "route", "replace", std::string(kTarget) + "/32", "via", "10.0.2.2", "dev", "u2"});
    std::this_thread::sleep_for(20ms);
    auto withdrawn = measure(500ms);
    std::cout << "u1 withdrawn: " << withdrawn << std::endl;
    EXPECT_LE(withdrawn.u1, 3u) << "packets still sent on the withdrawn uplink";
    EXPECT_GE(withdrawn.u2, withdrawn.sent * 9 / 10);

    // (c) SIGTERM: exit 0, no filter of ours on any port, the kernel forwards alone again.
    multipath();
    EXPECT_EQ(stopArsd(), 0);
    for (const char* dev : {"hp", "u1", "u2"}) EXPECT_EQ(ingressFilters(dev), "") << dev;
    uint64_t rx = packets(kDst, "a1", "rx") + packets(kDst, "a2", "rx");
    auto after = measure(500ms);
    uint64_t delivered = packets(kDst, "a1", "rx") + packets(kDst, "a2", "rx") - rx;
    std::cout << "after SIGTERM: " << after << ", delivered " << delivered << std::endl;
    EXPECT_GE(delivered, after.sent * 9 / 10);
    EXPECT_LT(std::min(after.u1, after.u2), after.sent / 20) << "still sprayed after SIGTERM";
}

}  // namespace
