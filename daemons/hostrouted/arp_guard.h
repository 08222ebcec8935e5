// Kernel-side ARP/ND filtering on host ports, generated from the address binding: a host
// port's ingress drops ARP and Neighbor Discovery that claims an address the plan does not
// put on that port, so a server cannot make the leaf learn (and hostrouted announce) another
// server's address.
//
// Mechanism. Each guarded port carries two filters of ours on its clsact ingress, each a
// classic-BPF program run in direct-action mode (`tc filter replace dev P ingress prio N
// handle 1 protocol arp|ipv6 bpf da bytecode "..."`). Not u32 with `action ok/drop`: these
// machines' kernel has no gact (CONFIG_NET_ACT_GACT is not set; `action ok`, `action drop`
// and `goto chain` all fail with "Failed to load TC action module"), while cls_bpf is built
// in here and a module on Debian. A direct-action program needs no action module: it
// returns TC_ACT_SHOT (drop) or TC_ACT_UNSPEC (go on to the next filter), so a legitimate
// packet passes through our filter as if it were not there and other users' filters still
// see it. Classic BPF needs neither a compiler nor an object file, and tc takes it as one
// argv string.
//
// What is dropped (offsets from the network header, loaded through SKF_NET_OFF so that
// they do not depend on the link header):
//   protocol arp: the sender protocol address (offset 14) is neither a bound IPv4 address
//     nor 0.0.0.0 (RFC 5227 probes teach the kernel nothing).
//   protocol ipv6, ICMPv6 (next header 58):
//     Neighbor Advertisement (136) whose target (offset 48) is neither bound nor fe80::/10;
//     Neighbor Solicitation (135) and Router Solicitation (133) whose source (offset 8) is
//     neither bound, fe80::/10 nor ::. RS is there because a forwarding Linux (a leaf)
//     creates a neighbor entry from an RS's source and source link-layer option.
//   protocol ipv6, next header 0 (hop-by-hop), 43 (routing) or 60 (destination options),
//     and 44 (fragment) unless the fragment carries TCP or UDP: any of those could move an
//     NA/NS away from the fixed offsets above. Trade-off: MLD from hosts (it carries
//     hop-by-hop) and ICMPv6 in fragments are dropped on guarded ports; the fabric plan
//     carries no IPv6 multicast and the leaf needs no MLD. Fragmented TCP/UDP passes.
// The IPv6 filter is installed on every guarded port, even with no IPv6 address bound:
// when IPv6 is off on the port it costs nothing, and when it is on (or is turned on later
// by someone else) a port with nothing bound must not learn any global IPv6 neighbor.
//
// Ownership. Ours are exactly the filters at prio kArpGuardPrio / kNdGuardPrio with handle
// 1, kind bpf and our protocol; every delete names all four, so the kernel refuses to
// delete anything else at those prios. The clsact qdisc is added only when absent (`tc
// qdisc add` fails, harmlessly, when a clsact or ingress qdisc is there) and never deleted:
// it may carry other users' filters, and an empty one costs nothing.
//
// Atomicity. A reconcile is one `tc filter replace` per family whose bound set changed: the
// kernel swaps the program under RCU, so there is never a moment where a bound address is
// dropped (no delete-then-add, no separate allow and drop rules to order).
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "twinrail/common/command_runner.h"
#include "twinrail/common/ip.h"

namespace twinrail::hostrouted {

// Below planesteer's egress pin range (100-29999) and the kernel's automatic prios (49152
// counting down), above the lab's pref 1: early, so that another user's terminal filter
// does not let a spoofed packet bypass the guard, and harmless to them because a passing
// packet goes on to their filters.
inline constexpr int kArpGuardPrio = 90;
inline constexpr int kNdGuardPrio = 91;
inline constexpr const char* kTcProgram = "/usr/sbin/tc";

struct TcCommand {
    std::vector<std::string> argv;  // argv[0] is the program; never passed to a shell
    // A failure is the expected outcome when there is nothing to do (the qdisc exists, the
    // filter to delete is absent): it neither stops the list nor counts as a failure.
    bool mayFail = false;
    bool operator==(const TcCommand&) const = default;
};

// What the kernel holds for a port, as far as this process knows.
struct GuardState {
    enum class Kind { Unknown, Absent, Installed };
    Kind kind = Kind::Unknown;  // Unknown: a previous run (or a failure) may have left anything
    std::set<IpAddr> bound;     // when Installed: the addresses the programs allow
    bool operator==(const GuardState&) const = default;
};

// The classic-BPF programs, as tc's `bytecode` argument ("count,code jt jf k,...").
// Throw std::length_error when the set does not fit one program (BPF_MAXINSNS).
std::string arpGuardProgram(const std::set<IpAddr>& bound);
std::string ndGuardProgram(const std::set<IpAddr>& bound);

// The commands that take `port` from `previous` to guarded with `bound` (addresses of the
// other family and unset ones are ignored per program). Empty when nothing changes. Pure.
// Throws std::invalid_argument for a port name no kernel link can have.
std::vector<TcCommand> guardCommands(const std::string& port, const std::set<IpAddr>& bound,
                                     const GuardState& previous);

// The commands that remove our filters from `port`, and nothing else. Pure.
std::vector<TcCommand> removeGuardCommands(const std::string& port);

// Applies the guards, one port's command list at a time, never blocking the loop. Changes
// coalesce: while a port's list runs, newer requests for it only update what it should
// become, and the latest is applied once the list ends. The queue holds each port at most
// once. A failed list leaves the port Unknown and is not retried on its own (a port that
// does not exist yet would fail forever); the next setPort reinstalls it whole.
class ArpGuard {
  public:
    using FailureHook = std::function<void(const std::string& port, const std::string& error)>;

    explicit ArpGuard(CommandRunner& runner, FailureHook onFailure = {});
    ~ArpGuard();
    ArpGuard(const ArpGuard&) = delete;
    ArpGuard& operator=(const ArpGuard&) = delete;

    void setPort(const std::string& port, const std::vector<IpAddr>& bound);
    void clearPort(const std::string& port);  // removes our filters, even a previous run's
    void stop();  // no command starts after this; a running one's result is ignored

    uint64_t applied() const { return applied_; }  // command lists that completed
    uint64_t failed() const { return failed_; }    // command lists that stopped on an error
    bool idle() const { return !running_ && queue_.empty(); }
    GuardState state(const std::string& port) const;

  private:
    struct Port {
        GuardState state;
        bool wantGuard = false;   // false: the guard is to be removed
        std::set<IpAddr> wanted;  // when wantGuard
        uint64_t generation = 0;  // bumped by every request, to tell a stale failure
        bool queued = false;
    };
    void request(const std::string& port, bool guard, std::set<IpAddr> bound);
    void enqueue(const std::string& port, Port& p);
    bool settled(const Port& p) const;
    void pump();
    void runStep();
    void stepDone(int exitCode, const std::string& err);
    void finish(bool ok, const std::string& error);

    CommandRunner& runner_;
    FailureHook onFailure_;
    std::map<std::string, Port> ports_;
    std::deque<std::string> queue_;
    // The list being run: for which port, towards what, and how far.
    bool running_ = false;
    std::string current_;
    GuardState target_;
    uint64_t startedGeneration_ = 0;
    std::vector<TcCommand> steps_;
    size_t step_ = 0;
    bool stopped_ = false;
    // Completions check it: a runner may call back after this object is gone.
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);
    uint64_t applied_ = 0;
    uint64_t failed_ = 0;
};

}  // namespace twinrail::hostrouted
