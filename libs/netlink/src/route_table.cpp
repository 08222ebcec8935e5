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

#include "attrs.h"
#include "dump_socket.h"
#include "twinrail/netlink/parse.h"

namespace twinrail::netlink {
namespace {

constexpr size_t kChunkBytes = size_t{48} * 1024;

// A host route of `table` written with `protocol`, from a route dump's message.
bool hostRouteOf(nlmsghdr* msg, uint32_t table, uint8_t protocol, HostRoute& out) {
    Decoded d = decode(msg);
    auto* r = std::get_if<RouteMsg>(&d);
    if (r == nullptr || r->route.table != table || r->route.protocol != protocol ||
        r->prefixLen != r->route.dst.maxPrefixLen())
        return false;
    out = r->route;
    return true;
}

void putAttr(std::vector<uint8_t>& buf, uint16_t type, const void* data, size_t len) {
    rtattr rta{};
    rta.rta_type = type;
    rta.rta_len = static_cast<uint16_t>(RTA_LENGTH(len));
    size_t at = buf.size();
    buf.resize(at + RTA_SPACE(len), 0);
    std::memcpy(buf.data() + at, &rta, sizeof(rta));
    std::memcpy(buf.data() + at + RTA_LENGTH(0), data, len);
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

KernelRouteTable::~KernelRouteTable() {
    nl_socket_free(sock_);
}

void KernelRouteTable::submit(RouteOp op, const HostRoute& route) {
    encode(op, route, nextSeq_++);
}

// Hand-encoded (no per-message allocation): this runs once per host route change.
void KernelRouteTable::encode(RouteOp op, const HostRoute& route, uint32_t seq) {
    size_t offset = buffer_.size();
    nlmsghdr hdr{};
    hdr.nlmsg_type = op == RouteOp::Replace ? RTM_NEWROUTE : RTM_DELROUTE;
    hdr.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    if (op == RouteOp::Replace) hdr.nlmsg_flags |= NLM_F_CREATE | NLM_F_REPLACE;
    hdr.nlmsg_seq = seq;
    rtmsg rtm{};
    rtm.rtm_family = static_cast<uint8_t>(route.dst.family());
    rtm.rtm_dst_len =
        static_cast<uint8_t>(route.prefixLen > 0 ? route.prefixLen : route.dst.maxPrefixLen());
    rtm.rtm_table = route.table < 256 ? static_cast<uint8_t>(route.table)
                                      : static_cast<uint8_t>(RT_TABLE_UNSPEC);
    rtm.rtm_protocol = route.protocol;
    rtm.rtm_scope = op == RouteOp::Replace ? RT_SCOPE_LINK : RT_SCOPE_NOWHERE;
    rtm.rtm_type = RTN_UNICAST;
    buffer_.resize(offset + NLMSG_LENGTH(sizeof(rtm)), 0);
    std::memcpy(buffer_.data() + offset + NLMSG_HDRLEN, &rtm, sizeof(rtm));
    putAttr(buffer_, RTA_DST, route.dst.data(), route.dst.size());
    putAttr(buffer_, RTA_TABLE, &route.table, sizeof(route.table));
    if (route.ifindex > 0) {
        auto oif = static_cast<uint32_t>(route.ifindex);
        putAttr(buffer_, RTA_OIF, &oif, sizeof(oif));
    }
    if (route.priority != 0)
        putAttr(buffer_, RTA_PRIORITY, &route.priority, sizeof(route.priority));
    hdr.nlmsg_len = static_cast<uint32_t>(buffer_.size() - offset);
    std::memcpy(buffer_.data() + offset, &hdr, sizeof(hdr));
    pending_.push_back(Pending{op, route, seq, offset, hdr.nlmsg_len});
}

std::vector<RouteResult> KernelRouteTable::flush() {
    std::vector<RouteResult> results;
    results.reserve(pending_.size());
    detail::inChunks(pending_, kChunkBytes, [this, &results](size_t first, size_t last) {
        sendChunk(first, last, results);
    });
    pending_.clear();
    buffer_.clear();
    return results;
}

void KernelRouteTable::sendChunk(size_t first, size_t last, std::vector<RouteResult>& results) {
    // Sequence numbers within a chunk are consecutive: seq - firstSeq is the index.
    const size_t base = results.size();
    const uint32_t firstSeq = pending_[first].seq;
    for (size_t i = first; i < last; ++i)
        results.push_back(RouteResult{pending_[i].op, pending_[i].route, ETIMEDOUT});
    const size_t count = last - first;
    const uint8_t* data = buffer_.data() + pending_[first].offset;
    const size_t bytes =
        pending_[last - 1].offset + pending_[last - 1].length - pending_[first].offset;
    int fd = nl_socket_get_fd(sock_);
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(fd, data, bytes, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel)) < 0) {
        int err = errno;
        for (size_t i = 0; i < count; ++i) results[base + i].error = err;
        return;
    }
    // The kernel processes the whole datagram inside sendto() and queues one ack per
    // message, so these reads never wait on anything but the copy.
    size_t acked = 0;
    ackBuffer_.resize(size_t{64} * 1024);
    while (acked < count) {
        ssize_t n = ::recv(fd, ackBuffer_.data(), ackBuffer_.size(), 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        auto len = static_cast<int>(n);
        for (auto* hdr = reinterpret_cast<nlmsghdr*>(ackBuffer_.data()); nlmsg_ok(hdr, len);
             hdr = nlmsg_next(hdr, &len)) {
            if (hdr->nlmsg_type != NLMSG_ERROR) continue;
            uint32_t idx = hdr->nlmsg_seq - firstSeq;
            if (idx >= count) continue;
            auto* err = static_cast<nlmsgerr*>(nlmsg_data(hdr));
            results[base + idx].error = -err->error;
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
        HostRoute route;
        if (hostRouteOf(nlmsg_hdr(msg), c->table, c->protocol, route)) c->routes->push_back(route);
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

KernelRouteDumper::KernelRouteDumper(boost::asio::io_context& io)
    : dumps_(std::make_unique<detail::DumpQueue>(io)) {}

KernelRouteDumper::~KernelRouteDumper() = default;

void KernelRouteDumper::dump(int family, uint32_t table, uint8_t protocol, Done done) {
    rtmsg body{};
    body.rtm_family = static_cast<unsigned char>(family);
    dumps_->request(
        detail::dumpRequest(RTM_GETROUTE, &body, sizeof body),
        [table, protocol, done = std::move(done)](int error, detail::MessageLog& reply) {
            std::vector<HostRoute> routes;
            reply.forEach([&](nlmsghdr* msg) {
                HostRoute route;
                if (hostRouteOf(msg, table, protocol, route)) routes.push_back(route);
            });
            done(error, std::move(routes));
        });
}

}  // namespace twinrail::netlink
