// The ARP/ND guard's real commands on the real kernel: a veth between two namespaces of
// the test's own, the guard on one end with 10.99.0.2 and 2001:db8:99::2 bound, and frames
// written on the other end through an AF_PACKET socket. A claim of a bound address makes
// a neighbor entry, a spoofed one does not and counts as a drop; removing the guard lets
// the spoofed claim in again. Needs root; a second or so.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <regex>
#include <thread>

#include <boost/asio/io_context.hpp>

#include "arp_guard.h"
#include "twinrail/common/subprocess.h"

using namespace twinrail;
using namespace twinrail::hostrouted;
using namespace std::chrono_literals;

namespace {

using Frame = std::vector<uint8_t>;
using Mac = std::array<uint8_t, 6>;

ProcessResult run(const std::vector<std::string>& argv) {
    return runProcessSync(argv, 5s);
}

void append(Frame& f, const uint8_t* data, size_t n) {
    f.insert(f.end(), data, data + n);
}
void append(Frame& f, const IpAddr& a) {
    append(f, a.data(), a.size());
}
void append(Frame& f, const Mac& m) {
    append(f, m.data(), m.size());
}

Frame arpRequest(const Mac& mac, const char* sender, const char* target) {
    Frame f(6, 0xff);
    append(f, mac);
    Frame tail = {0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 1};  // Ethernet, IPv4, request
    append(f, tail.data(), tail.size());
    append(f, mac);
    append(f, *IpAddr::parse(sender));
    f.insert(f.end(), 6, 0);
    append(f, *IpAddr::parse(target));
    return f;
}

// A Neighbor Solicitation for `target` from `source`, with a source link-layer option: the
// solicited node learns `source` at `mac`.
Frame neighborSolicitation(const Mac& mac, const char* source, const char* target) {
    auto src = *IpAddr::parse(source), tgt = *IpAddr::parse(target);
    std::array<uint8_t, 16> dst = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff};
    std::copy(tgt.data() + 13, tgt.data() + 16, dst.begin() + 13);
    Frame icmp = {135, 0, 0, 0, 0, 0, 0, 0};
    append(icmp, tgt);
    Frame option = {1, 1};
    append(icmp, option.data(), option.size());
    append(icmp, mac);
    // Checksum over the pseudo-header (source, destination, length, next header) and message.
    Frame sum;
    append(sum, src);
    append(sum, dst.data(), dst.size());
    Frame lenNh = {0, 0, 0, static_cast<uint8_t>(icmp.size()), 0, 0, 0, 58};
    append(sum, lenNh.data(), lenNh.size());
    append(sum, icmp.data(), icmp.size());
    uint32_t acc = 0;
    for (size_t i = 0; i < sum.size(); i += 2) acc += (uint32_t{sum[i]} << 8) | sum[i + 1];
    while (acc >> 16) acc = (acc & 0xffff) + (acc >> 16);
    uint16_t check = static_cast<uint16_t>(~acc);
    icmp[2] = static_cast<uint8_t>(check >> 8);
    icmp[3] = static_cast<uint8_t>(check & 0xff);

    Frame f = {0x33, 0x33, dst[12], dst[13], dst[14], dst[15]};
    append(f, mac);
    Frame ip6 = {0x86, 0xdd, 0x60, 0, 0, 0, 0, static_cast<uint8_t>(icmp.size()), 58, 255};
    append(f, ip6.data(), ip6.size());
    append(f, src);
    append(f, dst.data(), dst.size());
    append(f, icmp.data(), icmp.size());
    return f;
}

// Runs `fn` in a forked child that has joined namespace `ns`; true when it returned true.
bool inNamespace(const std::string& ns, const std::function<bool()>& fn) {
    int fd = ::open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    pid_t pid = ::fork();
    if (pid == 0) {
        if (::setns(fd, CLONE_NEWNET) != 0) ::_exit(90);
        ::_exit(fn() ? 0 : 91);
    }
    ::close(fd);
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool sendFrames(const char* ifname, const std::vector<Frame>& frames) {
    int s = ::socket(AF_PACKET, SOCK_RAW, 0);  // protocol 0: sends only, receives nothing
    if (s < 0) return false;
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_ifindex = static_cast<int>(::if_nametoindex(ifname));
    to.sll_halen = 6;
    bool ok = to.sll_ifindex > 0;
    for (const auto& f : frames) {
        std::copy(f.begin(), f.begin() + 6, to.sll_addr);
        ok = ok && ::sendto(s, f.data(), f.size(), 0, reinterpret_cast<sockaddr*>(&to),
                            sizeof(to)) == static_cast<ssize_t>(f.size());
    }
    ::close(s);
    return ok;
}

class ArpGuardIt : public ::testing::Test {
  protected:
    void SetUp() override {
        if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, tc)";
        if (::access(kTcProgram, X_OK) != 0) GTEST_SKIP() << kTcProgram << " is not installed";
        for (const auto& ns : {a_, b_}) run({"ip", "netns", "del", ns});  // a reused pid's
        for (const auto& ns : {a_, b_}) ASSERT_EQ(run({"ip", "netns", "add", ns}).exitCode, 0);
        created_ = true;
        ASSERT_EQ(run({"ip", "link", "add", "name", "guard0", "netns", a_, "type", "veth", "peer",
                       "name", "peer0", "netns", b_})
                      .exitCode,
                  0);
        // The sender stays quiet (no IPv6 of its own, no address), so every frame the guarded
        // end receives is one this test wrote.
        ASSERT_TRUE(inNamespace(b_, [] {
            int fd = ::open("/proc/sys/net/ipv6/conf/peer0/disable_ipv6", O_WRONLY);
            bool ok = fd >= 0 && ::write(fd, "1", 1) == 1;
            if (fd >= 0) ::close(fd);
            return ok;
        }));
        for (const auto& argv : std::vector<std::vector<std::string>>{
                 {"ip", "-n", a_, "addr", "add", "10.99.0.1/24", "dev", "guard0"},
                 {"ip", "-n", a_, "addr", "add", "2001:db8:99::1/64", "dev", "guard0", "nodad"},
                 {"ip", "-n", a_, "link", "set", "guard0", "up"},
                 {"ip", "-n", b_, "link", "set", "peer0", "up"}}) {
            auto r = run(argv);
            ASSERT_EQ(r.exitCode, 0) << argv[4] << ": " << r.err;
        }
    }
    void TearDown() override {
        if (!created_) return;
        for (const auto& ns : {a_, b_}) run({"ip", "netns", "del", ns});
    }

    // The daemon's own path: ArpGuard and the real runner on an io_context, with this
    // process (so every tc it starts) in namespace A for the while.
    void guardInA(const std::function<void(ArpGuard&)>& request) {
        struct Restore {
            int original = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
            ~Restore() {
                if (original < 0) return;
                if (::setns(original, CLONE_NEWNET) != 0) std::abort();  // the rest would lie
                ::close(original);
            }
        } restore;
        int target = ::open(("/run/netns/" + a_).c_str(), O_RDONLY | O_CLOEXEC);
        ASSERT_GE(restore.original, 0);
        ASSERT_GE(target, 0);
        int joined = ::setns(target, CLONE_NEWNET);
        ::close(target);
        ASSERT_EQ(joined, 0);
        boost::asio::io_context io;
        ProcessRunner runner(io, {{Capability::NetAdmin}});
        std::string failures;
        ArpGuard guard(runner, [&failures](const std::string& port, const std::string& err) {
            failures += port + ": " + err + "\n";
        });
        request(guard);
        io.run_for(5s);
        EXPECT_TRUE(guard.idle());
        EXPECT_EQ(guard.failed(), 0U) << failures;
        EXPECT_EQ(guard.applied(), 1U);
    }
    std::string neighbors() { return run({"ip", "-n", a_, "neigh", "show", "dev", "guard0"}).out; }
    // Waits until the neighbor table names every one of `ips` (the frames before them in
    // the same queue have been through the guard by then).
    bool waitForNeighbors(const std::vector<std::string>& ips) {
        for (auto deadline = std::chrono::steady_clock::now() + 3s;
             std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(20ms)) {
            auto table = neighbors();
            bool all = true;
            for (const auto& ip : ips) all = all && table.find(ip + " ") != std::string::npos;
            if (all) return true;
        }
        return false;
    }
    // Frames the guard dropped: a direct-action bpf filter has no counters of its own, its
    // drops are the clsact qdisc's.
    long drops() {
        auto shown = run({"ip", "netns", "exec", a_, kTcProgram, "-s", "qdisc", "show", "dev",
                          "guard0", "ingress"});
        std::smatch m;
        if (!std::regex_search(shown.out, m, std::regex("dropped ([0-9]+)"))) return -1;
        return std::stol(m[1]);
    }

    const std::string a_ = "tr18g" + std::to_string(::getpid()) + "a";
    const std::string b_ = "tr18g" + std::to_string(::getpid()) + "b";
    bool created_ = false;
};

TEST_F(ArpGuardIt, SpoofedArpAndNdAreDroppedBoundClaimsAreLearned) {
    std::set<IpAddr> bound = {*IpAddr::parse("10.99.0.2"), *IpAddr::parse("2001:db8:99::2")};
    guardInA([&bound](ArpGuard& g) { g.setPort("guard0", {bound.begin(), bound.end()}); });
    if (HasFatalFailure()) return;
    long before = drops();
    ASSERT_GE(before, 0);

    const Mac good = {0x02, 0, 0, 0, 0, 0x02}, evil = {0x02, 0, 0, 0, 0, 0x03};
    // The spoofed claims go first: once the good ones are learned, the spoofed ones have
    // been through the guard too.
    ASSERT_TRUE(inNamespace(b_, [&] {
        return sendFrames("peer0",
                          {arpRequest(evil, "10.99.0.3", "10.99.0.1"),
                           neighborSolicitation(evil, "2001:db8:99::3", "2001:db8:99::1"),
                           arpRequest(good, "10.99.0.2", "10.99.0.1"),
                           neighborSolicitation(good, "2001:db8:99::2", "2001:db8:99::1")});
    }));
    ASSERT_TRUE(waitForNeighbors({"10.99.0.2", "2001:db8:99::2"})) << neighbors();
    auto table = neighbors();
    EXPECT_EQ(table.find("10.99.0.3 "), std::string::npos) << table;
    EXPECT_EQ(table.find("2001:db8:99::3 "), std::string::npos) << table;
    EXPECT_GE(drops() - before, 2);

    // Reconciling to the same set changes nothing; removing the guard lets a claim in again
    // and leaves the qdisc in place.
    EXPECT_TRUE(
        guardCommands("guard0", bound, GuardState{GuardState::Kind::Installed, bound}).empty());
    guardInA([](ArpGuard& g) { g.clearPort("guard0"); });
    ASSERT_TRUE(inNamespace(b_, [&] {
        return sendFrames("peer0",
                          {arpRequest(evil, "10.99.0.4", "10.99.0.1"),
                           neighborSolicitation(evil, "2001:db8:99::4", "2001:db8:99::1")});
    }));
    EXPECT_TRUE(waitForNeighbors({"10.99.0.4", "2001:db8:99::4"})) << neighbors();
    EXPECT_GE(drops(), 0) << "the clsact qdisc is still there";
}

}  // namespace
