#include "arp_guard.h"

#include <linux/filter.h>

#include <array>
#include <stdexcept>

#include "twinrail/common/log.h"
#include "twinrail/common/subprocess.h"

namespace twinrail::hostrouted {
namespace {

// Direct-action return codes (linux/pkt_cls.h): on to the next filter, or drop.
constexpr uint32_t kPass = 0xffffffffU;  // TC_ACT_UNSPEC (-1)
constexpr uint32_t kDrop = 2;            // TC_ACT_SHOT
// Loads relative to the network header (ARP or IPv6), whatever the link header was.
constexpr uint32_t kNet = static_cast<uint32_t>(SKF_NET_OFF);

constexpr uint32_t kLinkLocalMask = 0xffc00000U;  // fe80::/10, on the address's first word
constexpr uint32_t kLinkLocalWord = 0xfe800000U;

// A classic-BPF program with forward labels, printed the way tc takes it. cBPF only jumps
// forward, conditional jumps reach 255 instructions at most, so the address checks below
// are short blocks that each end in their own `ret`, and long jumps go through `ja`.
class Program {
  public:
    using Label = int;
    static constexpr Label kNext = -1;

    Label label() {
        labels_.push_back(-1);
        return static_cast<Label>(labels_.size() - 1);
    }
    void bind(Label l) { labels_[static_cast<size_t>(l)] = static_cast<int>(code_.size()); }
    void load(uint16_t size, uint32_t offset) { add(BPF_LD | size | BPF_ABS, kNet + offset); }
    void andK(uint32_t k) { add(BPF_ALU | BPF_AND | BPF_K, k); }
    void ret(uint32_t k) { add(BPF_RET | BPF_K, k); }
    void jeq(uint32_t k, Label yes, Label no) {
        code_.push_back({static_cast<uint16_t>(BPF_JMP | BPF_JEQ | BPF_K), yes, no, k});
    }
    void ja(Label to) { code_.push_back({static_cast<uint16_t>(BPF_JMP | BPF_JA), to, kNext, 0}); }

    // Passes the packet when the address at `offset` equals `a`; else falls through.
    void passIfAddress(uint32_t offset, const IpAddr& a) {
        Label other = label();
        size_t words = a.size() / 4;
        for (size_t i = 0; i < words; ++i) {
            load(BPF_W, offset + static_cast<uint32_t>(4 * i));
            jeq(word(a, i), kNext, other);
        }
        ret(kPass);
        bind(other);
    }
    void passIfLinkLocal(uint32_t offset) {
        Label other = label();
        load(BPF_W, offset);
        andK(kLinkLocalMask);
        jeq(kLinkLocalWord, kNext, other);
        ret(kPass);
        bind(other);
    }

    std::string text() const {
        if (code_.size() > BPF_MAXINSNS)
            throw std::length_error("too many bound addresses for one port's guard program");
        std::string out = std::to_string(code_.size());
        for (size_t at = 0; at < code_.size(); ++at) {
            const auto& i = code_[at];
            bool ja = i.code == (BPF_JMP | BPF_JA);
            uint32_t k = ja ? static_cast<uint32_t>(offset(at, i.jt, false)) : i.k;
            int jt = ja ? 0 : offset(at, i.jt, true);
            int jf = ja ? 0 : offset(at, i.jf, true);
            out += "," + std::to_string(i.code) + " " + std::to_string(jt) + " " +
                   std::to_string(jf) + " " + std::to_string(k);
        }
        return out;
    }

  private:
    struct Insn {
        uint16_t code;
        Label jt, jf;  // labels until printed (kNext: the next instruction)
        uint32_t k;
    };
    static uint32_t word(const IpAddr& a, size_t i) {
        const uint8_t* b = a.data() + 4 * i;
        return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
    }
    void add(uint16_t code, uint32_t k) { code_.push_back({code, kNext, kNext, k}); }
    int offset(size_t at, Label to, bool shortJump) const {
        if (to == kNext) return 0;
        int target = labels_[static_cast<size_t>(to)];
        int distance = target - static_cast<int>(at) - 1;
        if (target < 0 || distance < 0) throw std::logic_error("guard program: unbound label");
        if (shortJump && distance > 255)
            throw std::length_error("guard program: conditional jump out of range");
        return distance;
    }

    std::vector<Insn> code_;
    std::vector<int> labels_;
};

// IPv6 header fields and ICMPv6 (RFC 4861) offsets, from the start of the IPv6 header.
constexpr uint32_t kIp6NextHeader = 6;
constexpr uint32_t kIp6Source = 8;
constexpr uint32_t kIp6Payload = 40;                // ICMPv6 type, or a fragment's next header
constexpr uint32_t kNaTarget = kIp6Payload + 8;     // 48
constexpr uint32_t kArpSenderProtocolAddress = 14;  // after htype ptype hlen plen oper sha

std::set<IpAddr> family(const std::set<IpAddr>& bound, bool v4) {
    std::set<IpAddr> out;
    for (const auto& ip : bound)
        if (v4 ? ip.isV4() : ip.isV6()) out.insert(ip);
    return out;
}

// What the kernel accepts as a link name (dev_valid_name): the port reaches tc as one argv
// element, never a shell, but a name tc could not mean is a caller's bug, said early.
void checkPort(const std::string& port) {
    if (port.empty() || port.size() > 15 || port == "." || port == "..")
        throw std::invalid_argument("not a link name (1-15 characters)");
    for (char c : port) {
        auto byte = static_cast<unsigned char>(c);
        if (byte <= 0x20 || byte >= 0x7f || c == '/' || c == ':')
            throw std::invalid_argument("not a link name (space, control, '/' or ':')");
    }
}

std::vector<std::string> filterReplace(const std::string& port, int prio, const char* protocol,
                                       std::string program) {
    return {kTcProgram, "filter",  "replace",  "dev",
            port,       "ingress", "prio",     std::to_string(prio),
            "handle",   "1",       "protocol", protocol,
            "bpf",      "da",      "bytecode", std::move(program)};
}

// Deletes the filter only if it is ours: the kernel matches prio, protocol, handle and kind.
std::vector<std::string> filterDelete(const std::string& port, int prio, const char* protocol) {
    return {kTcProgram,           "filter", "del", "dev",      port,     "ingress", "prio",
            std::to_string(prio), "handle", "1",   "protocol", protocol, "bpf"};
}

// A command for a log line: the program is long and says nothing to a reader.
std::string describe(const std::vector<std::string>& argv) {
    std::string out;
    for (size_t i = 0; i < argv.size(); ++i) {
        if (!out.empty()) out += ' ';
        out += i > 0 && argv[i - 1] == "bytecode" ? "<program>" : argv[i];
    }
    return out;
}

}  // namespace

std::string arpGuardProgram(const std::set<IpAddr>& bound) {
    Program p;
    p.passIfAddress(kArpSenderProtocolAddress, IpAddr::v4(std::array<uint8_t, 4>{}.data()));
    for (const auto& ip : family(bound, true)) p.passIfAddress(kArpSenderProtocolAddress, ip);
    p.ret(kDrop);
    return p.text();
}

std::string ndGuardProgram(const std::set<IpAddr>& bound) {
    auto bound6 = family(bound, false);
    Program p;
    using L = Program::Label;
    L icmp = p.label(), fragment = p.label(), extension = p.label(), other = p.label();
    p.load(BPF_B, kIp6NextHeader);
    p.jeq(58, icmp, Program::kNext);
    p.jeq(44, fragment, Program::kNext);
    p.jeq(0, extension, Program::kNext);
    p.jeq(43, extension, Program::kNext);
    p.jeq(60, extension, other);
    p.bind(other);
    p.ret(kPass);
    p.bind(extension);  // an NA/NS behind an extension header escapes the fixed offsets
    p.ret(kDrop);

    // A fragment header is 8 bytes with the next header first: TCP and UDP fragments pass
    // (reassembly keeps the first fragment's next header, so no ND comes out of them).
    L fragmentOk = p.label(), fragmentBad = p.label();
    p.bind(fragment);
    p.load(BPF_B, kIp6Payload);
    p.jeq(6, fragmentOk, Program::kNext);
    p.jeq(17, fragmentOk, fragmentBad);
    p.bind(fragmentOk);
    p.ret(kPass);
    p.bind(fragmentBad);
    p.ret(kDrop);

    L notNa = p.label(), solicitation = p.label(), toSolicitation = p.label(),
      otherIcmp = p.label(), advertisement = p.label();
    p.bind(icmp);
    p.load(BPF_B, kIp6Payload);
    p.jeq(136, Program::kNext, notNa);
    p.ja(advertisement);
    p.bind(notNa);
    p.jeq(135, toSolicitation, Program::kNext);
    p.jeq(133, toSolicitation, otherIcmp);
    p.bind(otherIcmp);
    p.ret(kPass);
    p.bind(toSolicitation);
    p.ja(solicitation);

    // NA: the kernel learns the target.
    p.bind(advertisement);
    p.passIfLinkLocal(kNaTarget);
    for (const auto& ip : bound6) p.passIfAddress(kNaTarget, ip);
    p.ret(kDrop);

    // NS and RS: the kernel learns the source (never ::, which DAD uses).
    p.bind(solicitation);
    p.passIfLinkLocal(kIp6Source);
    p.passIfAddress(kIp6Source, IpAddr::v6(std::array<uint8_t, 16>{}.data()));
    for (const auto& ip : bound6) p.passIfAddress(kIp6Source, ip);
    p.ret(kDrop);
    return p.text();
}

std::vector<TcCommand> guardCommands(const std::string& port, const std::set<IpAddr>& bound,
                                     const GuardState& previous) {
    checkPort(port);
    bool installed = previous.kind == GuardState::Kind::Installed;
    auto v4 = family(bound, true), v6 = family(bound, false);
    std::vector<TcCommand> out;
    if (!installed) out.push_back({{kTcProgram, "qdisc", "add", "dev", port, "clsact"}, true});
    if (!installed || family(previous.bound, true) != v4)
        out.push_back({filterReplace(port, kArpGuardPrio, "arp", arpGuardProgram(v4)), false});
    if (!installed || family(previous.bound, false) != v6)
        out.push_back({filterReplace(port, kNdGuardPrio, "ipv6", ndGuardProgram(v6)), false});
    return out;
}

std::vector<TcCommand> removeGuardCommands(const std::string& port) {
    checkPort(port);
    return {{filterDelete(port, kArpGuardPrio, "arp"), true},
            {filterDelete(port, kNdGuardPrio, "ipv6"), true}};
}

ArpGuard::ArpGuard(CommandRunner& runner, FailureHook onFailure)
    : runner_(runner), onFailure_(std::move(onFailure)) {}

ArpGuard::~ArpGuard() {
    alive_.reset();
}

void ArpGuard::setPort(const std::string& port, const std::vector<IpAddr>& bound) {
    std::set<IpAddr> wanted;
    for (const auto& ip : bound)
        if (ip.isV4() || ip.isV6()) wanted.insert(ip);
    request(port, true, std::move(wanted));
}

void ArpGuard::clearPort(const std::string& port) {
    request(port, false, {});
}

void ArpGuard::stop() {
    stopped_ = true;
    queue_.clear();
}

GuardState ArpGuard::state(const std::string& port) const {
    auto it = ports_.find(port);
    return it == ports_.end() ? GuardState{} : it->second.state;
}

void ArpGuard::request(const std::string& port, bool guard, std::set<IpAddr> bound) {
    if (stopped_) return;
    Port& p = ports_[port];
    p.wantGuard = guard;
    p.wanted = std::move(bound);
    ++p.generation;
    enqueue(port, p);
    pump();
}

void ArpGuard::enqueue(const std::string& port, Port& p) {
    // The port being run is looked at again when its list ends: only its latest wish counts.
    if (p.queued || (running_ && current_ == port) || settled(p)) return;
    p.queued = true;
    queue_.push_back(port);
}

bool ArpGuard::settled(const Port& p) const {
    if (!p.wantGuard) return p.state.kind == GuardState::Kind::Absent;
    return p.state.kind == GuardState::Kind::Installed && p.state.bound == p.wanted;
}

void ArpGuard::pump() {
    while (!running_ && !stopped_ && !queue_.empty()) {
        std::string port = std::move(queue_.front());
        queue_.pop_front();
        Port& p = ports_[port];
        p.queued = false;
        if (settled(p)) continue;
        std::vector<TcCommand> steps;
        try {
            steps =
                p.wantGuard ? guardCommands(port, p.wanted, p.state) : removeGuardCommands(port);
        } catch (const std::exception& e) {
            // Not retried: the same request would fail the same way.
            ++failed_;
            log::warning("ARP/ND guard on ", port, ": ", e.what());
            if (onFailure_) onFailure_(port, e.what());
            continue;
        }
        running_ = true;
        current_ = port;
        target_ = p.wantGuard ? GuardState{GuardState::Kind::Installed, p.wanted}
                              : GuardState{GuardState::Kind::Absent, {}};
        startedGeneration_ = p.generation;
        steps_ = std::move(steps);
        step_ = 0;
        if (steps_.empty()) {
            finish(true, "");
        } else {
            runStep();
        }
    }
}

void ArpGuard::runStep() {
    std::weak_ptr<int> alive = alive_;
    runner_.run(steps_[step_].argv, [this, alive](int exitCode, const std::string& err) {
        if (alive.expired() || stopped_) return;
        stepDone(exitCode, err);
    });
}

void ArpGuard::stepDone(int exitCode, const std::string& err) {
    const TcCommand& cmd = steps_[step_];
    if (exitCode != 0) {
        // Stop at the first real failure: what ran is safe on its own (each command leaves
        // a complete program or none), and the port becomes Unknown, reinstalled whole.
        if (!cmd.mayFail) return finish(false, describe(cmd.argv) + ": " + err);
        log::debug(current_, ": ", describe(cmd.argv), " (nothing to do): ", err);
    }
    if (++step_ == steps_.size()) return finish(true, "");
    runStep();
}

void ArpGuard::finish(bool ok, const std::string& error) {
    std::string port = std::move(current_);
    current_.clear();
    running_ = false;
    steps_.clear();
    Port& p = ports_[port];
    if (ok) {
        p.state = target_;
        ++applied_;
    } else {
        p.state = GuardState{};
        ++failed_;
        log::warning("ARP/ND guard on ", port, " failed: ", error);
    }
    // A request that came in while the list ran is applied now. A failure with no newer
    // request waits for one: retrying at once would spin on a port that is not there yet.
    if (ok || p.generation != startedGeneration_) enqueue(port, p);
    if (!ok && onFailure_) onFailure_(port, error);
    pump();
}

}  // namespace twinrail::hostrouted
