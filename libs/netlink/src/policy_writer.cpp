#include "twinrail/netlink/policy_writer.h"

#include <linux/fib_rules.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "attrs.h"
#include "dump_socket.h"

namespace twinrail::netlink {
namespace {

using namespace detail;  // NOLINT(google-build-using-namespace)

constexpr size_t kChunkBytes = size_t{200} * 1024;

// Appends one message: header, fixed part, attributes (nested ones through begin/end).
class Message {
  public:
    Message(uint16_t type, uint16_t flags, uint32_t seq) {
        nlmsghdr h{};
        h.nlmsg_type = type;
        h.nlmsg_flags = flags;
        h.nlmsg_seq = seq;
        put(&h, sizeof h);
    }
    template <typename T>
    void fixed(const T& body) {
        put(&body, sizeof body);
        pad();
    }
    void attr(uint16_t type, const void* data, size_t len) {
        nlattr a{};
        a.nla_type = type;
        a.nla_len = static_cast<uint16_t>(NLA_HDRLEN + len);
        put(&a, sizeof a);
        put(data, len);
        pad();
    }
    void u32(uint16_t type, uint32_t v) { attr(type, &v, sizeof v); }
    void text(uint16_t type, const std::string& s) { attr(type, s.c_str(), s.size() + 1); }
    size_t size() const { return bytes_.size(); }
    uint8_t* at(size_t off) { return bytes_.data() + off; }
    void put(const void* data, size_t len) {
        size_t at = bytes_.size();
        bytes_.resize(at + len);
        if (len != 0) std::memcpy(bytes_.data() + at, data, len);
    }
    void pad() { bytes_.resize(NLMSG_ALIGN(bytes_.size()), 0); }
    std::vector<uint8_t> finish() {
        auto len = static_cast<uint32_t>(bytes_.size());
        std::memcpy(bytes_.data(), &len, sizeof len);  // nlmsg_len comes first
        return std::move(bytes_);
    }

  private:
    std::vector<uint8_t> bytes_;
};

// The gateway of `nh` inside a route of `family`: RTA_GATEWAY, or RTA_VIA across families.
void gateway(Message& m, int family, const WeightedNexthop& nh) {
    if (nh.gateway.family() == 0) return;
    if (nh.gateway.family() == family) {
        m.attr(RTA_GATEWAY, nh.gateway.data(), nh.gateway.size());
        return;
    }
    std::vector<uint8_t> v(sizeof(rtvia) + nh.gateway.size());
    auto fam = static_cast<uint16_t>(nh.gateway.family());
    std::memcpy(v.data(), &fam, sizeof fam);
    std::memcpy(v.data() + sizeof(rtvia), nh.gateway.data(), nh.gateway.size());
    m.attr(RTA_VIA, v.data(), v.size());
}

void encodeRoute(Message& m, const KernelRoute& r, bool remove) {
    rtmsg rt{};
    const int family = r.dst.addr.family();
    rt.rtm_family = static_cast<unsigned char>(family);
    rt.rtm_dst_len = static_cast<unsigned char>(r.dst.length);
    rt.rtm_table = r.table < 256 ? static_cast<unsigned char>(r.table)
                                 : static_cast<unsigned char>(RT_TABLE_UNSPEC);
    rt.rtm_protocol = r.protocol;
    rt.rtm_type = r.type;
    rt.rtm_scope = RT_SCOPE_UNIVERSE;
    if (!remove && r.nexthops.size() == 1 && r.nexthops[0].onlink) rt.rtm_flags |= RTNH_F_ONLINK;
    m.fixed(rt);
    m.u32(RTA_TABLE, r.table);
    m.attr(RTA_DST, r.dst.addr.data(), r.dst.addr.size());
    m.u32(RTA_PRIORITY, r.metric);
    if (remove || r.type != RTN_UNICAST) return;
    if (r.nexthops.size() == 1) {
        if (r.nexthops[0].ifindex != 0)
            m.u32(RTA_OIF, static_cast<uint32_t>(r.nexthops[0].ifindex));
        gateway(m, family, r.nexthops[0]);
        return;
    }
    size_t start = m.size();
    nlattr outer{};
    outer.nla_type = RTA_MULTIPATH;
    m.put(&outer, sizeof outer);
    for (const auto& nh : r.nexthops) {
        size_t hop = m.size();
        rtnexthop rtnh{};
        rtnh.rtnh_ifindex = nh.ifindex;
        rtnh.rtnh_hops = static_cast<unsigned char>(std::clamp<uint32_t>(nh.weight, 1, 256) - 1);
        rtnh.rtnh_flags = nh.onlink ? RTNH_F_ONLINK : 0;
        m.put(&rtnh, sizeof rtnh);
        gateway(m, family, nh);
        auto len = static_cast<unsigned short>(m.size() - hop);
        std::memcpy(m.at(hop), &len, sizeof len);  // rtnh_len comes first
    }
    auto len = static_cast<uint16_t>(m.size() - start);
    std::memcpy(m.at(start), &len, sizeof len);
}

void encodeRule(Message& m, const PolicyRule& r) {
    fib_rule_hdr h{};
    h.family = static_cast<uint8_t>(r.family);
    h.action = FR_ACT_TO_TBL;
    h.table = r.table < 256 ? static_cast<uint8_t>(r.table) : static_cast<uint8_t>(RT_TABLE_UNSPEC);
    m.fixed(h);
    m.u32(FRA_PRIORITY, r.priority);
    m.u32(FRA_TABLE, r.table);
    if (!r.iif.empty()) m.text(FRA_IIFNAME, r.iif);  // none: every packet
    if (r.protocol != 0) m.attr(FRA_PROTOCOL, &r.protocol, sizeof r.protocol);
}

void encodeNeighbor(Message& m, const StaticNeighbor& n, bool remove) {
    if (n.fdb) {
        ndmsg nd{};
        nd.ndm_family = AF_BRIDGE;
        nd.ndm_ifindex = n.ifindex;
        nd.ndm_state = NUD_NOARP;  // "static"
        // Sticky: learning must not move it. A static entry is only spared from ageing; a
        // frame of the host's still in flight on the failing port would move it back there,
        // where it outlives the port and blackholes the host at its next failure.
        nd.ndm_flags = remove ? NTF_MASTER : NTF_MASTER | NTF_STICKY;
        m.fixed(nd);
        m.attr(NDA_LLADDR, n.mac.data(), n.mac.size());
        return;
    }
    ndmsg nd{};
    nd.ndm_family = static_cast<uint8_t>(n.ip.family());
    nd.ndm_ifindex = n.ifindex;
    nd.ndm_state = remove ? 0 : NUD_PERMANENT;
    m.fixed(nd);
    m.attr(NDA_DST, n.ip.data(), n.ip.size());
    if (remove) return;
    m.attr(NDA_LLADDR, n.mac.data(), n.mac.size());
    if (n.protocol != 0) m.attr(NDA_PROTOCOL, &n.protocol, sizeof n.protocol);
}

}  // namespace

std::vector<uint8_t> encodePolicyOp(const PolicyOp& op, uint32_t seq) {
    const uint16_t ack = NLM_F_REQUEST | NLM_F_ACK;
    switch (op.kind) {
        case PolicyOp::ReplaceRoute: {
            Message m(RTM_NEWROUTE, ack | NLM_F_CREATE | NLM_F_REPLACE, seq);
            encodeRoute(m, op.route, false);
            return m.finish();
        }
        case PolicyOp::RemoveRoute: {
            Message m(RTM_DELROUTE, ack, seq);
            encodeRoute(m, op.route, true);
            return m.finish();
        }
        case PolicyOp::AddRule: {
            Message m(RTM_NEWRULE, ack | NLM_F_CREATE | NLM_F_EXCL, seq);
            encodeRule(m, op.rule);
            return m.finish();
        }
        case PolicyOp::RemoveRule: {
            Message m(RTM_DELRULE, ack, seq);
            encodeRule(m, op.rule);
            return m.finish();
        }
        case PolicyOp::ReplaceNeighbor: {
            Message m(RTM_NEWNEIGH, ack | NLM_F_CREATE | NLM_F_REPLACE, seq);
            encodeNeighbor(m, op.neighbor, false);
            return m.finish();
        }
        case PolicyOp::RemoveNeighbor: {
            Message m(RTM_DELNEIGH, ack, seq);
            encodeNeighbor(m, op.neighbor, true);
            return m.finish();
        }
    }
    return {};
}

std::optional<PolicyRule> decodeRule(const nlmsghdr* msg) {
    auto b = body<fib_rule_hdr>(msg, RTM_NEWRULE);
    if (!b) return std::nullopt;
    const auto& [h, area] = *b;
    if (h.action != FR_ACT_TO_TBL) return std::nullopt;
    auto attrs = attributes(area);
    PolicyRule r;
    r.family = h.family;
    r.priority = scalar<uint32_t>(attrs, FRA_PRIORITY).value_or(0);
    r.table = scalar<uint32_t>(attrs, FRA_TABLE).value_or(h.table);
    r.iif = text(attrs, FRA_IIFNAME);
    r.protocol = scalar<uint8_t>(attrs, FRA_PROTOCOL).value_or(0);
    return r;
}

KernelPolicyWriter::KernelPolicyWriter(boost::asio::io_context& io) : KernelPolicyWriter() {
    dumps_ = std::make_unique<detail::DumpQueue>(io);
}

KernelPolicyWriter::KernelPolicyWriter() {
    fd_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd_ < 0) throw std::runtime_error(std::string("policy writer socket: ") + strerror(errno));
    int size = 8 * 1024 * 1024;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    int one = 1;  // acks without the echoed request
    ::setsockopt(fd_, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one);
}

KernelPolicyWriter::~KernelPolicyWriter() {
    if (fd_ >= 0) ::close(fd_);
}

void KernelPolicyWriter::submit(PolicyOp op) {
    uint32_t seq = nextSeq_++;
    auto bytes = encodePolicyOp(op, seq);
    pending_.push_back(Pending{std::move(op), seq, buffer_.size(), bytes.size()});
    buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

std::vector<PolicyResult> KernelPolicyWriter::flush() {
    std::vector<PolicyResult> results;
    detail::inChunks(pending_, kChunkBytes, [this, &results](size_t first, size_t last) {
        sendChunk(first, last, results);
    });
    pending_.clear();
    buffer_.clear();
    return results;
}

void KernelPolicyWriter::sendChunk(size_t first, size_t last, std::vector<PolicyResult>& results) {
    const size_t base = results.size();
    const uint32_t firstSeq = pending_[first].seq;
    for (size_t i = first; i < last; ++i) results.push_back({pending_[i].op, ETIMEDOUT});
    const size_t count = last - first;
    const size_t bytes =
        pending_[last - 1].offset + pending_[last - 1].length - pending_[first].offset;
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(fd_, buffer_.data() + pending_[first].offset, bytes, 0,
                 reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
        int err = errno;
        for (size_t i = 0; i < count; ++i) results[base + i].error = err;
        return;
    }
    // The kernel handles the whole datagram inside sendto() and queues one ack per
    // message: these reads only copy.
    std::vector<uint32_t> acks(size_t{16} * 1024);
    size_t acked = 0;
    while (acked < count) {
        ssize_t n = ::recv(fd_, acks.data(), acks.size() * sizeof(uint32_t), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        Bytes rest(reinterpret_cast<const uint8_t*>(acks.data()), static_cast<size_t>(n));
        while (rest.size() >= sizeof(nlmsghdr)) {
            nlmsghdr nh{};
            std::memcpy(&nh, rest.data(), sizeof nh);
            if (nh.nlmsg_len < sizeof(nlmsghdr) || nh.nlmsg_len > rest.size()) break;
            uint32_t idx = nh.nlmsg_seq - firstSeq;
            if (nh.nlmsg_type == NLMSG_ERROR && idx < count &&
                nh.nlmsg_len >= NLMSG_LENGTH(sizeof(int))) {
                int err = 0;
                std::memcpy(&err, rest.data() + NLMSG_HDRLEN, sizeof err);
                results[base + idx].error = -err;
                ++acked;
            }
            size_t step = NLMSG_ALIGN(nh.nlmsg_len);
            if (step >= rest.size()) break;
            rest = rest.subspan(step);
        }
    }
}

void KernelPolicyWriter::dumpRules(int family, uint8_t protocol, RulesDone done) {
    if (!dumps_) throw std::logic_error("KernelPolicyWriter: dumpRules needs an io_context");
    fib_rule_hdr h{};
    h.family = static_cast<uint8_t>(family);
    dumps_->request(detail::dumpRequest(RTM_GETRULE, &h, sizeof h),
                    [protocol, done = std::move(done)](int error, detail::MessageLog& reply) {
                        std::vector<PolicyRule> rules;
                        reply.forEach([&](nlmsghdr* msg) {
                            auto r = decodeRule(msg);
                            if (r && r->protocol == protocol) rules.push_back(std::move(*r));
                        });
                        done(error, std::move(rules));
                    });
}

}  // namespace twinrail::netlink
