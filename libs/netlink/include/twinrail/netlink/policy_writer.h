// Writes routes into policy tables and the rules that select them (`ip rule iif X lookup
// T`), and the static neighbor entries a daemon owns (hostrouted's EVPN-synced hosts). Operations
// are queued and sent in large multi-message datagrams, and the kernel's ack for each comes back
// per operation, as route_table.h does for host routes. Rules are read back without blocking:
// the dump's answer comes later, on the io_context.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "twinrail/netlink/route_watch.h"

namespace twinrail::netlink {
namespace detail {
class DumpQueue;
}  // namespace detail

struct PolicyRule {
    int family = 0;  // AF_INET, AF_INET6
    uint32_t priority = 0;
    std::string iif;  // empty: any ingress
    uint32_t table = 0;
    uint8_t protocol = 0;  // FRA_PROTOCOL: who owns it
    // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads defaulted <=>
    auto operator<=>(const PolicyRule&) const = default;
};

// A neighbor entry the daemon owns: NUD_PERMANENT (never aged or probed by the kernel),
// marked with `protocol` so that its owner knows it again. With `fdb`, a static entry in
// the bridge's forwarding table instead (`bridge fdb replace MAC dev <ifindex> master
// static sticky`; ip unused).
struct StaticNeighbor {
    int ifindex = 0;
    IpAddr ip;
    MacAddr mac{};
    uint8_t protocol = 0;
    bool fdb = false;
    // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads defaulted <=>
    auto operator<=>(const StaticNeighbor&) const = default;
};

struct PolicyOp {
    enum Kind {
        ReplaceRoute,
        RemoveRoute,
        AddRule,
        RemoveRule,
        ReplaceNeighbor,
        RemoveNeighbor
    } kind = ReplaceRoute;
    KernelRoute route;
    PolicyRule rule;
    StaticNeighbor neighbor;
};

struct PolicyResult {
    PolicyOp op;
    int error = 0;  // errno from the kernel, 0 on success
};

class PolicyWriter {
  public:
    // error: 0, or an errno (EINTR: the rules kept changing under the dump).
    using RulesDone = std::function<void(int error, std::vector<PolicyRule> rules)>;
    virtual ~PolicyWriter() = default;
    virtual void submit(PolicyOp op) = 0;
    virtual std::vector<PolicyResult> flush() = 0;
    // Rules of `family` with `protocol`, as the kernel holds them. Returns at once: the
    // answer comes later from the io_context, never inside the call.
    virtual void dumpRules(int family, uint8_t protocol, RulesDone done) = 0;
};

class KernelPolicyWriter final : public PolicyWriter {
  public:
    // Reads rules on `io` (dumpRules).
    explicit KernelPolicyWriter(boost::asio::io_context& io);
    // Writes only: dumpRules throws std::logic_error (benchmarks, tools).
    KernelPolicyWriter();
    ~KernelPolicyWriter() override;
    KernelPolicyWriter(const KernelPolicyWriter&) = delete;
    KernelPolicyWriter& operator=(const KernelPolicyWriter&) = delete;

    void submit(PolicyOp op) override;
    std::vector<PolicyResult> flush() override;
    void dumpRules(int family, uint8_t protocol, RulesDone done) override;

  private:
    void encode(const PolicyOp& op, uint32_t seq);
    void sendChunk(size_t first, size_t last, std::vector<PolicyResult>& results);

    struct Pending {
        PolicyOp op;
        uint32_t seq;
        size_t offset, length;
    };
    int fd_ = -1;
    std::unique_ptr<detail::DumpQueue> dumps_;  // null: writes only
    std::vector<Pending> pending_;
    std::vector<uint8_t> buffer_;
    uint32_t nextSeq_ = 1;
};

// The messages, exposed for tests: one RTM_NEWROUTE/RTM_DELROUTE/RTM_NEWRULE/RTM_DELRULE/
// RTM_NEWNEIGH/RTM_DELNEIGH.
std::vector<uint8_t> encodePolicyOp(const PolicyOp& op, uint32_t seq);
// RTM_NEWRULE (a dump reply) as a rule; nullopt for other messages or actions.
std::optional<PolicyRule> decodeRule(const nlmsghdr* msg);

}  // namespace twinrail::netlink
