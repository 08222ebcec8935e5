// The ARP/ND guard: the exact tc commands, what the generated programs drop (run here by a
// small classic-BPF interpreter over crafted packets), and ArpGuard's coalescing behind a
// fake runner.
#include "arp_guard.h"

#include <gtest/gtest.h>

#include <deque>
#include <sstream>

using namespace twinrail;
using namespace twinrail::hostrouted;

namespace {

IpAddr ip(const char* text) {
    return *IpAddr::parse(text);
}

constexpr uint32_t kPass = 0xffffffffU;  // TC_ACT_UNSPEC
constexpr uint32_t kDrop = 2;            // TC_ACT_SHOT
constexpr uint32_t kNetOff = 0xfff00000U;

// Runs a tc `bytecode` string the way the kernel runs classic BPF on a packet whose
// network header starts at pkt[0]. A load past the end ends the program with 0.
uint32_t runProgram(const std::string& bytecode, const std::vector<uint8_t>& pkt) {
    struct Insn {
        uint32_t code, jt, jf, k;
    };
    std::vector<Insn> prog;
    std::istringstream in(bytecode);
    size_t count = 0;
    char comma = 0;
    in >> count;
    for (size_t i = 0; i < count; ++i) {
        Insn x{};
        in >> comma >> x.code >> x.jt >> x.jf >> x.k;
        EXPECT_EQ(comma, ',');
        prog.push_back(x);
    }
    EXPECT_TRUE(in.eof() || (in >> std::ws).eof()) << "trailing text in " << bytecode;
    uint32_t a = 0;
    for (size_t pc = 0; pc < prog.size(); ++pc) {
        const Insn& i = prog[pc];
        switch (i.code) {
            case 0x20:    // ld [k] word
            case 0x28:    // ldh [k]
            case 0x30: {  // ldb [k]
                EXPECT_GE(i.k, kNetOff) << "loads are relative to the network header";
                size_t off = i.k - kNetOff, size = i.code == 0x20 ? 4 : i.code == 0x28 ? 2 : 1;
                if (off + size > pkt.size()) return 0;
                a = 0;
                for (size_t b = 0; b < size; ++b) a = (a << 8) | pkt[off + b];
                break;
            }
            case 0x54:
                a &= i.k;
                break;  // and #k
            case 0x15:
                pc += a == i.k ? i.jt : i.jf;
                break;  // jeq #k
            case 0x05:
                pc += i.k;
                break;  // ja
            case 0x06:
                return i.k;  // ret #k
            default:
                ADD_FAILURE() << "unexpected opcode " << i.code;
                return 0;
        }
    }
    ADD_FAILURE() << "program ran off its end";
    return 0;
}

std::vector<uint8_t> arp(const char* sender) {
    std::vector<uint8_t> p = {0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 1};
    auto s = ip(sender);
    p.insert(p.end(), s.data(), s.data() + 4);
    p.insert(p.end(), 6, 0);
    auto t = ip("10.0.0.1");
    p.insert(p.end(), t.data(), t.data() + 4);
    return p;
}

std::vector<uint8_t> ipv6(uint8_t nextHeader, const char* src, std::vector<uint8_t> payload) {
    std::vector<uint8_t> p = {0x60,       0,  0, 0, 0, static_cast<uint8_t>(payload.size()),
                              nextHeader, 255};
    auto s = ip(src), d = ip("ff02::1");
    p.insert(p.end(), s.data(), s.data() + 16);
    p.insert(p.end(), d.data(), d.data() + 16);
    p.insert(p.end(), payload.begin(), payload.end());
    return p;
}

std::vector<uint8_t> icmp6(uint8_t type, const char* src, const char* target = nullptr) {
    std::vector<uint8_t> m = {type, 0, 0, 0, 0, 0, 0, 0};
    if (target) {
        auto t = ip(target);
        m.insert(m.end(), t.data(), t.data() + 16);
    }
    return ipv6(58, src, m);
}

std::vector<uint8_t> fragment(uint8_t inner) {
    return ipv6(44, "2001:db8::9", {inner, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0});
}

const std::string kArp2 =  // bound 10.0.0.2 and 10.0.0.3
    "10,32 0 0 4293918734,21 0 1 0,6 0 0 4294967295,32 0 0 4293918734,21 0 1 167772162,"
    "6 0 0 4294967295,32 0 0 4293918734,21 0 1 167772163,6 0 0 4294967295,6 0 0 2";

TEST(ArpGuardCommands, TwoIpv4AddressesExactArgv) {
    auto cmds = guardCommands("swp7", {ip("10.0.0.3"), ip("10.0.0.2")}, GuardState{});
    ASSERT_EQ(cmds.size(), 3U);
    EXPECT_EQ(cmds[0],
              (TcCommand{{"/usr/sbin/tc", "qdisc", "add", "dev", "swp7", "clsact"}, true}));
    EXPECT_EQ(cmds[1],
              (TcCommand{{"/usr/sbin/tc", "filter", "replace", "dev", "swp7", "ingress", "prio",
                          "90", "handle", "1", "protocol", "arp", "bpf", "da", "bytecode", kArp2},
                         false}));
    EXPECT_EQ(cmds[2], (TcCommand{{"/usr/sbin/tc", "filter", "replace", "dev", "swp7", "ingress",
                                   "prio", "91", "handle", "1", "protocol", "ipv6", "bpf", "da",
                                   "bytecode", ndGuardProgram({})},
                                  false}));
}

TEST(ArpGuardProgram, ArpPassesBoundAndProbesDropsTheRest) {
    auto prog = arpGuardProgram({ip("10.0.0.2"), ip("10.0.0.3"), ip("2001:db8::2")});
    EXPECT_EQ(prog, kArp2);  // the IPv6 address does not reach the ARP program
    EXPECT_EQ(runProgram(prog, arp("10.0.0.2")), kPass);
    EXPECT_EQ(runProgram(prog, arp("10.0.0.3")), kPass);
    EXPECT_EQ(runProgram(prog, arp("0.0.0.0")), kPass);  // RFC 5227 probe
    EXPECT_EQ(runProgram(prog, arp("10.0.0.4")), kDrop);
    EXPECT_EQ(runProgram(prog, arp("10.0.0.1")), kDrop);  // claiming the leaf's own address
    EXPECT_EQ(runProgram(arpGuardProgram({}), arp("10.0.0.2")), kDrop);
}

TEST(ArpGuardProgram, NeighborDiscoveryWithIpv6Bound) {
    auto prog = ndGuardProgram({ip("2001:db8::2"), ip("10.0.0.2")});
    // NA: the target counts.
    EXPECT_EQ(runProgram(prog, icmp6(136, "2001:db8::66", "2001:db8::2")), kPass);
    EXPECT_EQ(runProgram(prog, icmp6(136, "fe80::1", "fe80::1")), kPass);
    EXPECT_EQ(runProgram(prog, icmp6(136, "fe80::1", "febf::1")), kPass);  // still fe80::/10
    EXPECT_EQ(runProgram(prog, icmp6(136, "2001:db8::2", "2001:db8::3")), kDrop);
    EXPECT_EQ(runProgram(prog, icmp6(136, "fe80::1", "fec0::1")), kDrop);
    // NS and RS: the source counts.
    for (uint8_t type : {uint8_t{135}, uint8_t{133}}) {
        SCOPED_TRACE(int{type});
        EXPECT_EQ(runProgram(prog, icmp6(type, "2001:db8::2", "2001:db8::1")), kPass);
        EXPECT_EQ(runProgram(prog, icmp6(type, "fe80::5", "2001:db8::1")), kPass);
        EXPECT_EQ(runProgram(prog, icmp6(type, "::", "2001:db8::7")), kPass);  // DAD
        EXPECT_EQ(runProgram(prog, icmp6(type, "2001:db8::3", "2001:db8::1")), kDrop);
        EXPECT_EQ(runProgram(prog, icmp6(type, "2001:db8:0:1::2", "2001:db8::1")), kDrop);
    }
    // Other ICMPv6 and other traffic pass; extension headers that could hide ND do not.
    EXPECT_EQ(runProgram(prog, icmp6(128, "2001:db8::3")), kPass);  // echo request
    EXPECT_EQ(runProgram(prog, ipv6(6, "2001:db8::3", std::vector<uint8_t>(20))), kPass);
    EXPECT_EQ(runProgram(prog, ipv6(17, "2001:db8::3", std::vector<uint8_t>(8))), kPass);
    for (uint8_t nh : {uint8_t{0}, uint8_t{43}, uint8_t{60}}) {
        SCOPED_TRACE(int{nh});
        EXPECT_EQ(runProgram(prog, ipv6(nh, "2001:db8::2", {58, 0, 0, 0, 0, 0, 0, 0})), kDrop);
    }
    EXPECT_EQ(runProgram(prog, fragment(17)), kPass);
    EXPECT_EQ(runProgram(prog, fragment(6)), kPass);
    EXPECT_EQ(runProgram(prog, fragment(58)), kDrop);
    EXPECT_EQ(runProgram(prog, fragment(60)), kDrop);
}

TEST(ArpGuardProgram, NothingBoundInIpv6LearnsOnlyLinkLocal) {
    auto prog = ndGuardProgram({ip("10.0.0.2")});
    EXPECT_EQ(prog, ndGuardProgram({}));
    EXPECT_EQ(runProgram(prog, icmp6(136, "fe80::1", "fe80::1")), kPass);
    EXPECT_EQ(runProgram(prog, icmp6(136, "2001:db8::2", "2001:db8::2")), kDrop);
    EXPECT_EQ(runProgram(prog, icmp6(135, "2001:db8::2", "2001:db8::1")), kDrop);
}

TEST(ArpGuardProgram, ManyAddressesStayInJumpRange) {
    std::set<IpAddr> bound;
    for (int i = 1; i <= 200; ++i) {
        bound.insert(ip(("10.1.0." + std::to_string(i)).c_str()));
        bound.insert(ip(("2001:db8::" + std::to_string(i)).c_str()));
    }
    auto arpProg = arpGuardProgram(bound);
    auto ndProg = ndGuardProgram(bound);
    EXPECT_EQ(runProgram(arpProg, arp("10.1.0.200")), kPass);
    EXPECT_EQ(runProgram(arpProg, arp("10.1.0.201")), kDrop);
    EXPECT_EQ(runProgram(ndProg, icmp6(135, "2001:db8::200", "2001:db8::1")), kPass);
    EXPECT_EQ(runProgram(ndProg, icmp6(136, "2001:db8::1", "2001:db8::200")), kPass);
    EXPECT_EQ(runProgram(ndProg, icmp6(136, "2001:db8::1", "2001:db8::201")), kDrop);
    for (int i = 1; i <= 300; ++i) bound.insert(ip(("2001:db8:1::" + std::to_string(i)).c_str()));
    EXPECT_THROW(ndGuardProgram(bound), std::length_error);  // past BPF_MAXINSNS
}

TEST(ArpGuardCommands, ReconcileReplacesOnlyTheChangedFamilyInOneStep) {
    GuardState before{GuardState::Kind::Installed, {ip("10.0.0.2"), ip("2001:db8::2")}};
    EXPECT_TRUE(guardCommands("swp7", before.bound, before).empty());

    // One replace swaps the whole program: the old allow set stays in force until the new
    // one is in, so no bound address is ever dropped; no delete, no separate drop rule.
    auto cmds = guardCommands("swp7", {ip("10.0.0.2"), ip("10.0.0.5"), ip("2001:db8::2")}, before);
    ASSERT_EQ(cmds.size(), 1U);
    EXPECT_EQ(cmds[0].argv[2], "replace");
    EXPECT_EQ(cmds[0].argv[11], "arp");
    EXPECT_FALSE(cmds[0].mayFail);
    EXPECT_EQ(runProgram(cmds[0].argv.back(), arp("10.0.0.2")), kPass);
    EXPECT_EQ(runProgram(cmds[0].argv.back(), arp("10.0.0.5")), kPass);

    cmds = guardCommands("swp7", {ip("10.0.0.2")}, before);
    ASSERT_EQ(cmds.size(), 1U);
    EXPECT_EQ(cmds[0].argv[11], "ipv6");
    EXPECT_EQ(cmds[0].argv.back(), ndGuardProgram({}));

    // Not known to be installed (start, after a failure): the qdisc and both programs.
    for (auto kind : {GuardState::Kind::Unknown, GuardState::Kind::Absent}) {
        cmds = guardCommands("swp7", before.bound, GuardState{kind, before.bound});
        ASSERT_EQ(cmds.size(), 3U);
        EXPECT_EQ(cmds[0].argv[1], "qdisc");
        EXPECT_EQ(cmds[1].argv[11], "arp");
        EXPECT_EQ(cmds[2].argv[11], "ipv6");
    }
}

TEST(ArpGuardCommands, RemovalDeletesExactlyOurs) {
    auto cmds = removeGuardCommands("swp7");
    ASSERT_EQ(cmds.size(), 2U);
    EXPECT_EQ(cmds[0], (TcCommand{{"/usr/sbin/tc", "filter", "del", "dev", "swp7", "ingress",
                                   "prio", "90", "handle", "1", "protocol", "arp", "bpf"},
                                  true}));
    EXPECT_EQ(cmds[1], (TcCommand{{"/usr/sbin/tc", "filter", "del", "dev", "swp7", "ingress",
                                   "prio", "91", "handle", "1", "protocol", "ipv6", "bpf"},
                                  true}));
    for (const auto& c : cmds)
        for (const auto& a : c.argv) EXPECT_NE(a, "clsact") << "the qdisc is never deleted";
}

TEST(ArpGuardCommands, NamesAreArgvElementsNeverShellText) {
    const std::string odd = "p;x$(id)`&|";  // legal for the kernel, poison for a shell
    for (const auto& cmds :
         {guardCommands(odd, {ip("10.0.0.2")}, GuardState{}), removeGuardCommands(odd)}) {
        for (const auto& c : cmds) {
            EXPECT_EQ(c.argv.front(), "/usr/sbin/tc");
            EXPECT_EQ(std::count(c.argv.begin(), c.argv.end(), odd), 1);
        }
    }
    for (const char* bad : {"", "a b", "a/b", "a:b", ".", "..", "sixteen-chars-xx", "p\n"}) {
        EXPECT_THROW(guardCommands(bad, {}, GuardState{}), std::invalid_argument) << bad;
        EXPECT_THROW(removeGuardCommands(bad), std::invalid_argument) << bad;
    }
}

// Holds every command until the test completes it, the way tc runs later on the loop.
struct FakeRunner : CommandRunner {
    struct Call {
        std::vector<std::string> argv;
        std::function<void(int, std::string)> done;
    };
    std::deque<Call> pending;
    std::vector<std::vector<std::string>> ran;
    void run(std::vector<std::string> argv, std::function<void(int, std::string)> done) override {
        ran.push_back(argv);
        pending.push_back({std::move(argv), std::move(done)});
    }
    void complete(int code = 0, std::string err = "") {
        ASSERT_FALSE(pending.empty());
        auto call = std::move(pending.front());
        pending.pop_front();
        call.done(code, std::move(err));
    }
    void drain() {
        while (!pending.empty()) complete();
    }
};

TEST(ArpGuardRunner, CoalescesToTheLatestWishWhileAListRuns) {
    FakeRunner runner;
    ArpGuard guard(runner);
    guard.setPort("swp1", {ip("10.0.0.2")});
    ASSERT_EQ(runner.pending.size(), 1U);  // one command at a time
    EXPECT_EQ(runner.pending.front().argv[1], "qdisc");
    guard.setPort("swp1", {ip("10.0.0.3")});
    guard.setPort("swp1", {ip("10.0.0.4")});
    EXPECT_EQ(runner.pending.size(), 1U);
    runner.complete();
    EXPECT_EQ(runner.pending.front().argv[11], "arp");
    EXPECT_EQ(runProgram(runner.pending.front().argv.back(), arp("10.0.0.2")), kPass);
    runner.drain();  // the first list ends, then only the latest wish is applied
    EXPECT_EQ(guard.applied(), 2U);
    ASSERT_EQ(runner.ran.size(), 4U);  // qdisc, arp, ipv6; then one arp replace
    EXPECT_EQ(runner.ran[3][11], "arp");
    EXPECT_EQ(runProgram(runner.ran[3].back(), arp("10.0.0.4")), kPass);
    EXPECT_EQ(runProgram(runner.ran[3].back(), arp("10.0.0.3")), kDrop);
    EXPECT_EQ(guard.state("swp1"), (GuardState{GuardState::Kind::Installed, {ip("10.0.0.4")}}));
    EXPECT_TRUE(guard.idle());

    guard.setPort("swp1", {ip("10.0.0.4")});  // nothing to do
    EXPECT_TRUE(runner.pending.empty());
}

TEST(ArpGuardRunner, QueueHoldsEachPortOnceAndGoesBackToTheStartState) {
    FakeRunner runner;
    ArpGuard guard(runner);
    guard.setPort("swp1", {ip("10.0.0.1")});
    for (int i = 0; i < 50; ++i) {
        guard.setPort("swp2", {ip("10.0.0.2")});
        guard.setPort("swp3", {ip("10.0.0.3")});
        guard.clearPort("swp2");
    }
    runner.drain();
    // swp1 whole; swp2 only its latest wish (remove: two deletes); swp3 whole.
    EXPECT_EQ(runner.ran.size(), 3U + 2U + 3U);
    EXPECT_EQ(guard.applied(), 3U);
    EXPECT_EQ(guard.state("swp2").kind, GuardState::Kind::Absent);
    guard.clearPort("swp2");  // already absent: nothing to run
    EXPECT_TRUE(runner.pending.empty());
    size_t before = runner.ran.size();
    guard.setPort("swp2", {});  // guarded with nothing bound, then removed before it ends
    guard.clearPort("swp2");
    runner.drain();
    EXPECT_EQ(runner.ran.size() - before, 3U + 2U);  // the list in flight ends, then the removal
    EXPECT_EQ(guard.state("swp2").kind, GuardState::Kind::Absent);
}

TEST(ArpGuardRunner, FailureNamesPortAndStderrAndWaitsForTheNextRequest) {
    FakeRunner runner;
    std::vector<std::pair<std::string, std::string>> failures;
    ArpGuard guard(runner, [&failures](const std::string& port, const std::string& err) {
        failures.emplace_back(port, err);
    });
    guard.setPort("swp9", {ip("10.0.0.9")});
    runner.complete(2, "Error: Exclusivity flag on, cannot modify.");  // qdisc there: fine
    runner.complete(1, "Cannot find device \"swp9\"");
    EXPECT_TRUE(runner.pending.empty()) << "the list stops at the first real failure";
    ASSERT_EQ(failures.size(), 1U);
    EXPECT_EQ(failures[0].first, "swp9");
    EXPECT_NE(failures[0].second.find("Cannot find device"), std::string::npos);
    EXPECT_NE(failures[0].second.find("prio 90"), std::string::npos);
    EXPECT_EQ(guard.failed(), 1U);
    EXPECT_EQ(guard.applied(), 0U);
    EXPECT_EQ(guard.state("swp9").kind, GuardState::Kind::Unknown);
    EXPECT_TRUE(guard.idle()) << "no retry loop on a port that is not there";

    guard.setPort("swp9", {ip("10.0.0.9")});  // same wish: reinstalled whole
    EXPECT_EQ(runner.pending.front().argv[1], "qdisc");
    runner.drain();
    EXPECT_EQ(guard.applied(), 1U);
}

TEST(ArpGuardRunner, ANewerWishDuringAFailedListIsApplied) {
    FakeRunner runner;
    ArpGuard guard(runner);
    guard.setPort("swp1", {ip("10.0.0.1")});
    guard.setPort("swp1", {ip("10.0.0.2")});
    runner.complete();
    runner.complete(2, "boom");
    ASSERT_EQ(runner.pending.size(), 1U);
    EXPECT_EQ(runner.pending.front().argv[1], "qdisc");  // from Unknown: whole again
    runner.drain();
    EXPECT_EQ(guard.state("swp1"), (GuardState{GuardState::Kind::Installed, {ip("10.0.0.2")}}));
}

TEST(ArpGuardRunner, StopAndDestructionIgnoreLateCompletions) {
    FakeRunner runner;
    {
        ArpGuard guard(runner);
        guard.setPort("swp1", {ip("10.0.0.1")});
        guard.setPort("swp2", {ip("10.0.0.2")});
        guard.stop();
        runner.complete();
        EXPECT_TRUE(runner.pending.empty());
        guard.setPort("swp3", {ip("10.0.0.3")});
        EXPECT_TRUE(runner.pending.empty());
    }
    {
        auto guard = std::make_unique<ArpGuard>(runner);
        guard->setPort("swp1", {ip("10.0.0.1")});
        guard.reset();
        runner.complete();  // must not touch the destroyed guard
    }
    EXPECT_TRUE(runner.pending.empty());
}

}  // namespace
