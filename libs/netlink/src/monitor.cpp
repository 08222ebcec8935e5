#include "twinrail/netlink/monitor.h"

#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/rtnl.h>
#include <netlink/socket.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "twinrail/common/log.h"
#include "twinrail/netlink/parse.h"

namespace twinrail::netlink {
namespace {

constexpr int kDumpBufferBytes = 32 * 1024 * 1024;
constexpr int kDatagramsPerWake = 64;  // yield to other handlers between bursts
constexpr int kDumpAttempts = 5;       // an interrupted dump is repeated this often at once
constexpr auto kSnapshotRetry = std::chrono::seconds(1);

nl_sock* openSocket(bool events, int receiveBuffer) {
    nl_sock* sock = nl_socket_alloc();
    if (sock == nullptr) throw std::runtime_error("netlink: cannot allocate socket");
    if (int rc = nl_connect(sock, NETLINK_ROUTE); rc < 0) {
        nl_socket_free(sock);
        throw std::runtime_error(std::string("netlink: connect: ") + nl_geterror(rc));
    }
    if (events) {
        nl_socket_disable_seq_check(sock);
        nl_socket_set_nonblocking(sock);
        // A neighbor storm must not overflow the socket before we read it; ENOBUFS is
        // still handled (re-dump), this only makes it rare.
        nl_socket_set_buffer_size(sock, receiveBuffer, 0);
        int fd = nl_socket_get_fd(sock);
        // Needs CAP_NET_ADMIN; without it the kernel caps the buffer at rmem_max, and an
        // overflow is then likelier (still handled by a re-dump).
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &receiveBuffer, sizeof(receiveBuffer)) !=
            0) {
            log::warning("netlink: cannot raise the event socket buffer to ", receiveBuffer,
                         " bytes: ", std::strerror(errno));
        }
        nl_socket_add_memberships(sock, RTNLGRP_LINK, RTNLGRP_NEIGH, RTNLGRP_IPV4_IFADDR,
                                  RTNLGRP_IPV6_IFADDR, 0);
    } else {
        nl_socket_set_buffer_size(sock, kDumpBufferBytes, 0);
    }
    return sock;
}

}  // namespace

NetlinkMonitor::NetlinkMonitor(boost::asio::io_context& io, NetlinkObserver& observer,
                               MonitorOptions options)
    : io_(io), observer_(observer), options_(std::move(options)), retryTimer_(io) {}

NetlinkMonitor::~NetlinkMonitor() {
    if (descriptor_) {
        boost::system::error_code ignored;
        descriptor_->cancel(ignored);
        descriptor_->release();  // libnl owns and closes the fd
    }
    if (events_ != nullptr) nl_socket_free(events_);
    if (dumps_ != nullptr) nl_socket_free(dumps_);
}

void NetlinkMonitor::start() {
    // Subscribe before dumping: events that race the dump are queued and replayed after
    // it, and replaying them in order converges to the kernel's state.
    events_ = openSocket(true, options_.receiveBuffer);
    dumps_ = openSocket(false, 0);
    nl_socket_modify_cb(events_, NL_CB_VALID, NL_CB_CUSTOM, &NetlinkMonitor::onMessage, this);
    nl_socket_modify_cb(dumps_, NL_CB_VALID, NL_CB_CUSTOM, &NetlinkMonitor::onMessage, this);
    descriptor_ =
        std::make_unique<boost::asio::posix::stream_descriptor>(io_, nl_socket_get_fd(events_));
    // An interrupted first snapshot is retried like any other; a failing one is fatal.
    if (!snapshot("start") && lastError_ != -NLE_DUMP_INTR) {
        throw std::runtime_error(std::string("netlink: cannot dump links, addresses and "
                                             "neighbors: ") +
                                 nl_geterror(lastError_));
    }
    armRead();
}

bool NetlinkMonitor::snapshot(const std::string& reason) {
    log::info("netlink: taking a full snapshot (", reason, ")");
    ++stats_.snapshots;
    observer_.onSnapshotBegin();
    // Kernel-local dumps complete without waiting on any peer; they run synchronously on
    // the loop and are bounded by table size.
    static constexpr std::pair<int, int> kDumps[] = {{RTM_GETLINK, AF_UNSPEC},
                                                     {RTM_GETADDR, AF_UNSPEC},
                                                     {RTM_GETNEIGH, AF_INET},
                                                     {RTM_GETNEIGH, AF_INET6}};
    for (auto [type, family] : kDumps) {
        if (int rc = dumpWithRetry(type, family); rc < 0) {
            lastError_ = rc;
            ++stats_.snapshotsAborted;
            log::warning("netlink: snapshot (", reason, ") aborted, ", nl_geterror(rc),
                         "; nothing withdrawn, retrying in ",
                         std::chrono::seconds(kSnapshotRetry).count(), " s");
            observer_.onSnapshotAborted();
            observer_.onBurstEnd();
            retrySnapshotLater();
            return false;
        }
    }
    observer_.onSnapshotEnd();
    observer_.onBurstEnd();
    return true;
}

void NetlinkMonitor::retrySnapshotLater() {
    retryTimer_.expires_after(kSnapshotRetry);
    retryTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) snapshot("retry");
    });
}

int NetlinkMonitor::dumpWithRetry(int rtmType, int family) {
    int rc = 0;
    for (int attempt = 1; attempt <= kDumpAttempts; ++attempt) {
        rc = dumpOnce(rtmType, family);
        if (rc != -NLE_DUMP_INTR) return rc;
        ++stats_.dumpsInterrupted;  // the table changed under the dump: read it again
    }
    return rc;
}

int NetlinkMonitor::dumpOnce(int rtmType, int family) {
    if (int rc = nl_rtgen_request(dumps_, rtmType, family, NLM_F_DUMP); rc < 0) return rc;
    // libnl reads every part up to NLMSG_DONE before it reports an interrupted dump, so
    // the socket is clean for the next request either way.
    int rc = nl_recvmsgs_default(dumps_);
    if (rc >= 0 && options_.interruptDump && options_.interruptDump(rtmType)) rc = -NLE_DUMP_INTR;
    return rc;
}

void NetlinkMonitor::armRead() {
    descriptor_->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                            [this](const boost::system::error_code& ec) {
                                if (ec) return;
                                drain();
                            });
}

void NetlinkMonitor::drain() {
    bool overflow = false;
    for (int i = 0; i < kDatagramsPerWake; ++i) {
        int rc = nl_recvmsgs_default(events_);
        if (rc == -NLE_AGAIN) break;
        if (rc == -NLE_NOMEM) {  // libnl's name for ENOBUFS: events were lost
            overflow = true;
            continue;
        }
        if (rc < 0) {
            log::warning("netlink: receive error: ", nl_geterror(rc));
            break;
        }
    }
    observer_.onBurstEnd();
    if (overflow) {
        ++stats_.overflows;
        log::warning("netlink: event socket overflowed (ENOBUFS); re-synchronising");
        if (!snapshotQueued_) {
            snapshotQueued_ = true;
            boost::asio::post(io_, [this] {
                snapshotQueued_ = false;
                snapshot("overflow");
            });
        }
    }
    armRead();
}

int NetlinkMonitor::onMessage(nl_msg* msg, void* self) {
    static_cast<NetlinkMonitor*>(self)->dispatch(msg);
    return NL_OK;
}

void NetlinkMonitor::dispatch(nl_msg* msg) {
    ++stats_.messages;
    Decoded decoded = decode(nlmsg_hdr(msg));
    if (auto* bad = std::get_if<Malformed>(&decoded)) {
        ++stats_.malformed;
        log::warning("netlink: dropped malformed message: ", bad->why);
    } else if (auto* link = std::get_if<LinkMsg>(&decoded)) {
        observer_.onLink(link->link, link->removed);
    } else if (auto* addr = std::get_if<AddressMsg>(&decoded)) {
        observer_.onAddress(addr->addr, addr->removed);
    } else if (auto* neigh = std::get_if<NeighborMsg>(&decoded)) {
        observer_.onNeighbor(neigh->neigh, neigh->removed);
    }
}

}  // namespace twinrail::netlink
