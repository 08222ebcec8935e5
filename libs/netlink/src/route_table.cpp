#include "twinrail/netlink/route_table.h"

#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/rtnl.h>
#include <netlink/socket.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "twinrail/netlink/parse.h"

namespace twinrail::netlink {
namespace {

constexpr size_t kChunkBytes = 48 * 1024;

std::vector<uint8_t> encode(RouteOp op, const HostRoute& route, uint32_t seq) {
    int type = op == RouteOp::Replace ? RTM_NEWROUTE : RTM_DELROUTE;
    int flags = NLM_F_REQUEST | NLM_F_ACK;
    if (op == RouteOp::Replace) flags |= NLM_F_CREATE | NLM_F_REPLACE;
    nl_msg* msg = nlmsg_alloc_simple(type, flags);
    if (msg == nullptr) throw std::bad_alloc();
    rtmsg rtm{};
    rtm.rtm_family = static_cast<uint8_t>(route.dst.family());
    rtm.rtm_dst_len = static_cast<uint8_t>(route.dst.maxPrefixLen());
    rtm.rtm_table = route.table < 256 ? static_cast<uint8_t>(route.table)
                                      : static_cast<uint8_t>(RT_TABLE_UNSPEC);
    rtm.rtm_protocol = route.protocol;
    rtm.rtm_scope = op == RouteOp::Replace ? RT_SCOPE_LINK : RT_SCOPE_NOWHERE;
    rtm.rtm_type = RTN_UNICAST;
    nlmsg_append(msg, &rtm, sizeof(rtm), NLMSG_ALIGNTO);
    nla_put(msg, RTA_DST, static_cast<int>(route.dst.size()), route.dst.data());
    nla_put_u32(msg, RTA_TABLE, route.table);
    if (route.ifindex > 0) nla_put_u32(msg, RTA_OIF, static_cast<uint32_t>(route.ifindex));
    nlmsghdr* hdr = nlmsg_hdr(msg);
    hdr->nlmsg_seq = seq;
    auto* bytes = reinterpret_cast<const uint8_t*>(hdr);
    std::vector<uint8_t> out(bytes, bytes + hdr->nlmsg_len);
    nlmsg_free(msg);
    return out;
}

}  // namespace

KernelRouteTable::KernelRouteTable() {
    sock_ = nl_socket_alloc();
    if (sock_ == nullptr) throw std::runtime_error("netlink: cannot allocate route socket");
    if (int rc = nl_connect(sock_, NETLINK_ROUTE); rc < 0) {
        nl_socket_free(sock_);
        throw std::runtime_error(std::string("netlink: connect: ") + nl_geterror(rc));
    }
    nl_socket_set_buffer_size(sock_, 4 * 1024 * 1024, 4 * 1024 * 1024);
    int one = 1;
    // Acks without the echoed request keep the ack stream small.
    setsockopt(nl_socket_get_fd(sock_), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
}

KernelRouteTable::~KernelRouteTable() { nl_socket_free(sock_); }

void KernelRouteTable::submit(RouteOp op, const HostRoute& route) {
    uint32_t seq = nextSeq_++;
    pending_.push_back(Pending{op, route, seq, encode(op, route, seq)});
}

std::vector<RouteResult> KernelRouteTable::flush() {
    std::vector<RouteResult> results;
    results.reserve(pending_.size());
    size_t first = 0;
    size_t bytes = 0;
    for (size_t i = 0; i < pending_.size(); ++i) {
        if (bytes + pending_[i].bytes.size() > kChunkBytes && i > first) {
            sendChunk(first, i, results);
            first = i;
            bytes = 0;
        }
        bytes += pending_[i].bytes.size();
    }
    if (first < pending_.size()) sendChunk(first, pending_.size(), results);
    pending_.clear();
    return results;
}

void KernelRouteTable::sendChunk(size_t first, size_t last, std::vector<RouteResult>& results) {
    std::vector<uint8_t> datagram;
    std::unordered_map<uint32_t, size_t> bySeq;
    for (size_t i = first; i < last; ++i) {
        datagram.insert(datagram.end(), pending_[i].bytes.begin(), pending_[i].bytes.end());
        bySeq[pending_[i].seq] = results.size();
        results.push_back(RouteResult{pending_[i].op, pending_[i].route, ETIMEDOUT});
    }
    int fd = nl_socket_get_fd(sock_);
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(fd, datagram.data(), datagram.size(), 0, reinterpret_cast<sockaddr*>(&kernel),
                 sizeof(kernel)) < 0) {
        int err = errno;
        for (auto& [seq, idx] : bySeq) results[idx].error = err;
        return;
    }
    // The kernel processes the whole datagram inside sendto() and queues one ack per
    // message, so these reads never wait on anything but the copy.
    size_t acked = 0;
    std::vector<uint8_t> buf(64 * 1024);
    while (acked < bySeq.size()) {
        ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        auto len = static_cast<int>(n);
        for (auto* hdr = reinterpret_cast<nlmsghdr*>(buf.data()); nlmsg_ok(hdr, len);
             hdr = nlmsg_next(hdr, &len)) {
            if (hdr->nlmsg_type != NLMSG_ERROR) continue;
            auto it = bySeq.find(hdr->nlmsg_seq);
            if (it == bySeq.end()) continue;
            auto* err = static_cast<nlmsgerr*>(nlmsg_data(hdr));
            results[it->second].error = -err->error;
            ++acked;
        }
    }
}

std::vector<HostRoute> KernelRouteTable::dump(int family, uint32_t table, uint8_t protocol) {
    nl_sock* sock = nl_socket_alloc();
    if (sock == nullptr) throw std::runtime_error("netlink: cannot allocate dump socket");
    std::vector<HostRoute> routes;
    struct Ctx {
        std::vector<HostRoute>* routes;
        uint32_t table;
        uint8_t protocol;
    } ctx{&routes, table, protocol};
    auto onRoute = [](nl_msg* msg, void* arg) -> int {
        auto* c = static_cast<Ctx*>(arg);
        Decoded d = decode(nlmsg_hdr(msg));
        if (auto* r = std::get_if<RouteMsg>(&d)) {
            if (r->route.table == c->table && r->route.protocol == c->protocol &&
                r->prefixLen == r->route.dst.maxPrefixLen())
                c->routes->push_back(r->route);
        }
        return NL_OK;
    };
    int rc = nl_connect(sock, NETLINK_ROUTE);
    if (rc >= 0) {
        nl_socket_set_buffer_size(sock, 8 * 1024 * 1024, 0);
        nl_socket_modify_cb(sock, NL_CB_VALID, NL_CB_CUSTOM, onRoute, &ctx);
        rc = nl_rtgen_request(sock, RTM_GETROUTE, family, NLM_F_DUMP);
        if (rc >= 0) rc = nl_recvmsgs_default(sock);
    }
    nl_socket_free(sock);
    if (rc < 0) throw std::runtime_error(std::string("netlink: route dump: ") + nl_geterror(rc));
    return routes;
}

}  // namespace twinrail::netlink
