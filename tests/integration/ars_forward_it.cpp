// The ARS tc program on a real edge (issue 22): namespaces host -- leaf == two uplinks ==
// two sinks over veth, a two-way multipath route on the leaf. With BpfDatapath on the
// leaf's host-facing port in per-packet-random mode one UDP flow reaches both sinks (the
// kernel's L3 multipath hash alone keeps one flow on one path), TTL decremented once;
// detached, no filter of ours is left and the kernel forwards the flow again. Root.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "twinrail/ars/bpf_datapath.h"
#include "twinrail/common/subprocess.h"

using namespace twinrail;
using namespace twinrail::ars;
using namespace std::chrono_literals;

namespace {

constexpr uint16_t kPort = 5000;

ProcessResult run(const std::vector<std::string>& argv) {
    return runProcessSync(argv, 5s);
}

// Runs `fn` on a thread of its own that has joined namespace `ns`: sockets it opens stay in
// that namespace, netlink it talks goes there, and this thread's namespace never changes.
void inNamespace(const std::string& ns, const std::function<void()>& fn) {
    std::string error;
    std::thread worker([&ns, &fn, &error] {
        int fd = ::open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
            error = "cannot join " + ns;
            if (fd >= 0) ::close(fd);
            return;
        }
        ::close(fd);
        try {
            fn();
        } catch (const std::exception& e) {
            error = e.what();
        }
    });
    worker.join();
    if (!error.empty()) throw std::runtime_error(error);
}

// One sink's receiver: UDP on 10.9.9.1:kPort with each datagram's TTL.
struct Sink {
    int fd = -1;
    int received = 0;
    std::vector<int> ttls;
    ~Sink() {
        if (fd >= 0) ::close(fd);
    }
    void drain() {
        for (;;) {
            char buf[64];
            char control[CMSG_SPACE(sizeof(int))];
            iovec iov{buf, sizeof(buf)};
            msghdr msg{};
            msg.msg_iov = &iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control;
            msg.msg_controllen = sizeof(control);
            if (::recvmsg(fd, &msg, MSG_DONTWAIT) < 0) return;
            ++received;
            for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
                if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL) {
                    int ttl = 0;
                    std::memcpy(&ttl, CMSG_DATA(c), sizeof(ttl));
                    ttls.push_back(ttl);
                }
            }
        }
    }
};

class ArsForwardIt : public ::testing::Test {
  protected:
    void SetUp() override {
        if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, tc, bpf)";
        for (const auto& ns : all_) run({"ip", "netns", "del", ns});  // a reused pid's
        for (const auto& ns : all_) ASSERT_EQ(run({"ip", "netns", "add", ns}).exitCode, 0);
        created_ = true;
        std::vector<std::vector<std::string>> steps = {
            {"ip", "link", "add", "eth0", "netns", host_, "type", "veth", "peer", "host0", "netns",
             leaf_},
            {"ip", "link", "add", "up1", "netns", leaf_, "type", "veth", "peer", "dn", "netns",
             sink1_},
            {"ip", "link", "add", "up2", "netns", leaf_, "type", "veth", "peer", "dn", "netns",
             sink2_},
            {"ip", "-n", host_, "addr", "add", "10.1.0.2/24", "dev", "eth0"},
            {"ip", "-n", leaf_, "addr", "add", "10.1.0.1/24", "dev", "host0"},
            {"ip", "-n", leaf_, "addr", "add", "10.11.0.1/30", "dev", "up1"},
            {"ip", "-n", leaf_, "addr", "add", "10.12.0.1/30", "dev", "up2"},
            {"ip", "-n", sink1_, "addr", "add", "10.11.0.2/30", "dev", "dn"},
            {"ip", "-n", sink2_, "addr", "add", "10.12.0.2/30", "dev", "dn"},
            {"ip", "-n", sink1_, "addr", "add", "10.9.9.1/32", "dev", "lo"},
            {"ip", "-n", sink2_, "addr", "add", "10.9.9.1/32", "dev", "lo"}};
        for (const auto& ns : all_) steps.push_back({"ip", "-n", ns, "link", "set", "lo", "up"});
        for (const auto& [ns, dev] :
             std::vector<std::pair<std::string, std::string>>{{host_, "eth0"},
                                                              {leaf_, "host0"},
                                                              {leaf_, "up1"},
                                                              {leaf_, "up2"},
                                                              {sink1_, "dn"},
                                                              {sink2_, "dn"}})
            steps.push_back({"ip", "-n", ns, "link", "set", dev, "up"});
        steps.push_back({"ip", "netns", "exec", leaf_, "sysctl", "-qw", "net.ipv4.ip_forward=1"});
        steps.push_back({"ip", "-n", host_, "route", "add", "default", "via", "10.1.0.1"});
        steps.push_back({"ip", "-n", sink1_, "route", "add", "10.1.0.0/24", "via", "10.11.0.1"});
        steps.push_back({"ip", "-n", sink2_, "route", "add", "10.1.0.0/24", "via", "10.12.0.1"});
        steps.push_back({"ip", "-n", leaf_, "route", "add", "10.9.9.0/24", "nexthop", "via",
                         "10.11.0.2", "dev", "up1", "nexthop", "via", "10.12.0.2", "dev", "up2"});
        for (const auto& argv : steps) {
            auto r = run(argv);
            ASSERT_EQ(r.exitCode, 0) << argv[argv.size() > 4 ? 4 : 0] << ": " << r.err;
        }
        inNamespace(leaf_, [this] {
            hostPort_ = static_cast<int>(::if_nametoindex("host0"));
            up1_ = static_cast<int>(::if_nametoindex("up1"));
            up2_ = static_cast<int>(::if_nametoindex("up2"));
        });
        ASSERT_GT(hostPort_, 0);
        for (auto* sink : {&a_, &b_}) {
            inNamespace(sink == &a_ ? sink1_ : sink2_, [sink] {
                sink->fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                int one = 1;
                ::setsockopt(sink->fd, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one));
                sockaddr_in at{};
                at.sin_family = AF_INET;
                at.sin_port = htons(kPort);
                ::inet_pton(AF_INET, "10.9.9.1", &at.sin_addr);
                if (::bind(sink->fd, reinterpret_cast<sockaddr*>(&at), sizeof(at)) != 0)
                    throw std::runtime_error("bind 10.9.9.1");
            });
        }
        inNamespace(host_, [this] { sender_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0); });
        ASSERT_GE(sender_, 0);
    }
    void TearDown() override {
        if (sender_ >= 0) ::close(sender_);
        if (!created_) return;
        for (const auto& ns : all_) run({"ip", "netns", "del", ns});
    }

    // One flow (one source port) of `n` datagrams of `size` bytes, then what each sink got.
    void sendFlow(int n, size_t size = 3) {
        a_.received = b_.received = 0;
        a_.ttls.clear();
        b_.ttls.clear();
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_port = htons(kPort);
        ::inet_pton(AF_INET, "10.9.9.1", &to.sin_addr);
        for (int i = 0; i < n; ++i) {
            std::vector<char> payload(size, 'a');
            ::sendto(sender_, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&to),
                     sizeof(to));
            std::this_thread::sleep_for(1ms);  // gentle: no queue overflows on the veths
        }
        for (auto until = std::chrono::steady_clock::now() + 2s;
             a_.received + b_.received < n && std::chrono::steady_clock::now() < until;) {
            pollfd fds[2] = {{a_.fd, POLLIN, 0}, {b_.fd, POLLIN, 0}};
            ::poll(fds, 2, 50);
            a_.drain();
            b_.drain();
        }
    }
    std::string ingressFilters() {
        return run({"tc", "-n", leaf_, "filter", "show", "dev", "host0", "ingress"}).out;
    }
    static bool ours(const std::string& filters) {
        return filters.find("ars_ingress") != std::string::npos ||
               filters.find("handle 0xa25") != std::string::npos;
    }
    void expectTtl63() {
        for (const auto* s : {&a_, &b_})
            for (int ttl : s->ttls) EXPECT_EQ(ttl, 63);
    }

    std::string prefix_ = "arsf" + std::to_string(::getpid());
    std::string host_ = prefix_ + "h", leaf_ = prefix_ + "l", sink1_ = prefix_ + "a",
                sink2_ = prefix_ + "b";
    std::vector<std::string> all_{host_, leaf_, sink1_, sink2_};
    bool created_ = false;
    int hostPort_ = 0, up1_ = 0, up2_ = 0, sender_ = -1;
    Sink a_, b_;
};

TEST_F(ArsForwardIt, PerPacketRandomSpraysOneFlowOverBothUplinksAndDetachRestoresTheKernel) {
    constexpr int kSent = 200;
    auto dp = std::make_unique<BpfDatapath>(64);
    dp->configure({AssignMode::PacketRandom, 256, false});
    PathNexthop h1, h2;
    h1.ifindex = up1_;
    h1.gateway = *IpAddr::parse("10.11.0.2");
    h2.ifindex = up2_;
    h2.gateway = *IpAddr::parse("10.12.0.2");
    dp->setRoute(*IpPrefix::parse("10.9.9.0/24"), {h1, h2});
    inNamespace(leaf_, [&dp, this] { dp->attach(hostPort_); });
    EXPECT_TRUE(ours(ingressFilters())) << ingressFilters();

    sendFlow(kSent);
    EXPECT_GE(a_.received + b_.received, kSent - 5);  // a first datagram may wait for ARP
    EXPECT_GT(a_.received, kSent / 10) << "sink 1 got " << a_.received;
    EXPECT_GT(b_.received, kSent / 10) << "sink 2 got " << b_.received;
    expectTtl63();
    auto steered = dp->counters().steered;
    EXPECT_GE(steered, static_cast<uint64_t>(kSent - 5));

    inNamespace(leaf_, [&dp, this] { dp->detach(hostPort_); });
    EXPECT_FALSE(ours(ingressFilters())) << ingressFilters();
    EXPECT_NE(run({"tc", "-n", leaf_, "qdisc", "show", "dev", "host0"}).out.find("clsact"),
              std::string::npos);  // never removed: other users' filters live there

    sendFlow(kSent);
    EXPECT_GE(a_.received + b_.received, kSent - 5);
    // The kernel's multipath hash (L3, the default policy) keeps one flow on one path.
    EXPECT_TRUE(a_.received == 0 || b_.received == 0)
        << "sink 1 got " << a_.received << ", sink 2 " << b_.received;
    expectTtl63();
    EXPECT_EQ(dp->counters().steered, steered);
}

// A redirect past the egress MTU would be dropped by the driver without a word; the kernel
// fragments it (or tells the sender), so the program leaves it to the kernel.
TEST_F(ArsForwardIt, PacketLargerThanTheEgressMtuIsLeftToTheKernel) {
    for (const char* up : {"up1", "up2"})
        ASSERT_EQ(run({"ip", "-n", leaf_, "link", "set", up, "mtu", "1000"}).exitCode, 0);
    int dont = IP_PMTUDISC_DONT;  // no DF: the leaf may fragment
    ASSERT_EQ(::setsockopt(sender_, IPPROTO_IP, IP_MTU_DISCOVER, &dont, sizeof(dont)), 0);
    BpfDatapath dp(64);
    dp.configure({AssignMode::PacketRandom, 256, false});
    PathNexthop h1, h2;
    h1.ifindex = up1_;
    h1.gateway = *IpAddr::parse("10.11.0.2");
    h2.ifindex = up2_;
    h2.gateway = *IpAddr::parse("10.12.0.2");
    dp.setRoute(*IpPrefix::parse("10.9.9.0/24"), {h1, h2});
    inNamespace(leaf_, [&dp, this] { dp.attach(hostPort_); });
    sendFlow(5, 1400);
    EXPECT_EQ(a_.received + b_.received, 5);
    EXPECT_EQ(dp.counters().steered, 0U);
    sendFlow(5, 500);  // and a datagram that fits is still ours
    EXPECT_EQ(a_.received + b_.received, 5);
    EXPECT_EQ(dp.counters().steered, 5U);
    inNamespace(leaf_, [&dp, this] { dp.detach(hostPort_); });
}

TEST_F(ArsForwardIt, LeftoverFilterOfADeadProcessIsRemovedAndOnlyIt) {
    // A process that attaches and dies without its destructor leaves its filter.
    pid_t child = ::fork();
    if (child == 0) {
        try {
            BpfDatapath dp(64);
            inNamespace(leaf_, [&dp, this] { dp.attach(hostPort_); });
            ::_exit(0);  // inside dp's scope: no destructor runs, as in a crash
        } catch (...) {
            ::_exit(1);
        }
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_TRUE(ours(ingressFilters())) << ingressFilters();
    // Someone else's filter on the same port (a classic-BPF "go on", no action module needed)
    // must survive.
    auto other = run({"tc", "-n", leaf_, "filter", "add", "dev", "host0", "ingress", "pref", "200",
                      "protocol", "ip", "bpf", "da", "bytecode", "1,6 0 0 4294967295"});
    ASSERT_EQ(other.exitCode, 0) << other.err;
    bool removed = false;
    inNamespace(leaf_, [&removed, this] { removed = BpfDatapath::detachLeftover(hostPort_); });
    EXPECT_TRUE(removed);
    auto filters = ingressFilters();
    EXPECT_FALSE(ours(filters)) << filters;
    EXPECT_NE(filters.find("pref 200"), std::string::npos) << filters;
    inNamespace(leaf_, [&removed, this] { removed = BpfDatapath::detachLeftover(hostPort_); });
    EXPECT_FALSE(removed);  // nothing of ours left

    sendFlow(50);
    EXPECT_GE(a_.received + b_.received, 45);
}

TEST_F(ArsForwardIt, DestructorDetachesEveryPortItAttached) {
    auto dp = std::make_unique<BpfDatapath>(64);
    inNamespace(leaf_, [&dp, this] { dp->attach(hostPort_); });
    ASSERT_TRUE(ours(ingressFilters()));
    inNamespace(leaf_, [&dp, this] { dp->attach(hostPort_); });  // again: replaced, still one
    auto filters = ingressFilters();
    EXPECT_EQ(filters.find("0xa25"), filters.rfind("0xa25")) << filters;
    // The destructor talks netlink in its thread's namespace, as attach did: the leaf's.
    inNamespace(leaf_, [&dp] { dp.reset(); });
    EXPECT_FALSE(ours(ingressFilters())) << ingressFilters();
}

}  // namespace
