#include "twinrail/netlink/monitor.h"

#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/rtnl.h>
#include <netlink/socket.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "dump_socket.h"
#include "twinrail/common/log.h"
#include "twinrail/netlink/parse.h"

namespace twinrail::netlink {
namespace {

constexpr int kDatagramsPerWake = 64;  // yield to other handlers between bursts
constexpr int kDumpAttempts = 5;       // an interrupted dump is repeated this often at once
constexpr auto kSnapshotRetry = std::chrono::seconds(1);
// Kernel-local dumps answer at once; silence this long means something is badly wrong.
constexpr auto kFirstSnapshotTimeout = std::chrono::seconds(30);
// Events held back during one snapshot; beyond this they are dropped and another snapshot
// taken after it instead, as after ENOBUFS.
constexpr size_t kMaxQueuedBytes = size_t{64} * 1024 * 1024;

struct Dump {
    uint16_t type;
    uint8_t family;
};
constexpr Dump kDumps[] = {{RTM_GETLINK, AF_UNSPEC}, {RTM_GETLINK, AF_BRIDGE},
                           {RTM_GETADDR, AF_UNSPEC}, {RTM_GETNEIGH, AF_BRIDGE},
                           {RTM_GETNEIGH, AF_INET},  {RTM_GETNEIGH, AF_INET6}};
constexpr int kStages = sizeof kDumps / sizeof kDumps[0];
// Only with MonitorOptions::bridgeFdb: the bridge ports' VLAN lists, the FDB.
constexpr int kPortVlanStage = 1;
constexpr int kFdbStage = 3;
constexpr int kDelivering = kStages;

nl_sock* openEventSocket(int receiveBuffer) {
    nl_sock* sock = nl_socket_alloc();
    if (sock == nullptr) throw std::runtime_error("netlink: cannot allocate socket");
    if (int rc = nl_connect(sock, NETLINK_ROUTE); rc < 0) {
        nl_socket_free(sock);
        throw std::runtime_error(std::string("netlink: connect: ") + nl_geterror(rc));
    }
    nl_socket_disable_seq_check(sock);
    nl_socket_set_nonblocking(sock);
    // A neighbor storm must not overflow the socket before we read it; ENOBUFS is still
    // handled (re-dump), this only makes it rare.
    nl_socket_set_buffer_size(sock, receiveBuffer, 0);
    int fd = nl_socket_get_fd(sock);
    // Needs CAP_NET_ADMIN; without it the kernel caps the buffer at rmem_max, and an
    // overflow is then likelier (still handled by a re-dump).
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &receiveBuffer, sizeof(receiveBuffer)) != 0) {
        log::warning("netlink: cannot raise the event socket buffer to ", receiveBuffer,
                     " bytes: ", std::strerror(errno));
    }
    nl_socket_add_memberships(sock, RTNLGRP_LINK, RTNLGRP_NEIGH, RTNLGRP_IPV4_IFADDR,
                              RTNLGRP_IPV6_IFADDR, 0);
    return sock;
}

// The FDB dump wants a whole ndmsg: the kernel reads a shorter request as an ifinfomsg and
// refuses it. The bridge ports' dump wants an ifinfomsg and IFLA_EXT_MASK asking for the
// VLAN lists (as ranges), without which they are left out.
std::vector<uint8_t> dumpRequestFor(uint16_t type, uint8_t family) {
    if (type == RTM_GETNEIGH && family == AF_BRIDGE) {
        ndmsg body{};
        body.ndm_family = family;
        return detail::dumpRequest(type, &body, sizeof body);
    }
    if (type == RTM_GETLINK && family == AF_BRIDGE) {
        struct {
            ifinfomsg ifi;
            nlattr attr;
            uint32_t mask;
        } body{};
        static_assert(sizeof body == NLMSG_ALIGN(sizeof(ifinfomsg)) + NLA_HDRLEN + 4);
        body.ifi.ifi_family = AF_BRIDGE;
        body.attr.nla_type = IFLA_EXT_MASK;
        body.attr.nla_len = NLA_HDRLEN + sizeof body.mask;
        body.mask = RTEXT_FILTER_BRVLAN_COMPRESSED;
        return detail::dumpRequest(type, &body, sizeof body);
    }
    rtgenmsg body{};
    body.rtgen_family = family;
    return detail::dumpRequest(type, &body, sizeof body);
}

std::string describe(int error) {
    return error == EINTR ? "the kernel kept flagging its dumps interrupted" : strerror(error);
}

}  // namespace

NetlinkMonitor::NetlinkMonitor(boost::asio::io_context& io, NetlinkObserver& observer,
                               MonitorOptions options)
    : io_(io),
      observer_(observer),
      dumps_(std::make_unique<detail::DumpSocket>(io)),
      options_(std::move(options)),
      retryTimer_(io),
      dumped_(std::make_unique<detail::MessageLog>()),
      current_(std::make_unique<detail::MessageLog>()),
      queued_(std::make_unique<detail::MessageLog>()) {}

NetlinkMonitor::~NetlinkMonitor() {
    alive_.reset();
    if (descriptor_) {
        boost::system::error_code ignored;
        descriptor_->cancel(ignored);
        descriptor_->release();  // libnl owns and closes the fd
    }
    if (events_ != nullptr) nl_socket_free(events_);
}

void NetlinkMonitor::start() {
    // Subscribe before dumping: events that race the dump are queued (here in the socket,
    // later in queued_) and replayed after it, and replaying them in order converges to
    // the kernel's state.
    events_ = openEventSocket(options_.receiveBuffer);
    nl_socket_modify_cb(events_, NL_CB_VALID, NL_CB_CUSTOM, &NetlinkMonitor::onMessage, this);
    dumps_->open();
    descriptor_ =
        std::make_unique<boost::asio::posix::stream_descriptor>(io_, nl_socket_get_fd(events_));
    // The loop does not run yet: the first snapshot is read here, synchronously, and
    // delivered before start() returns.
    uint64_t abortedBefore = stats_.snapshotsAborted;
    beginSnapshot("start");
    if (!dumps_->wait(kFirstSnapshotTimeout)) {
        dumps_->cancel();
        stage_ = -1;
        throw std::runtime_error("netlink: the kernel did not answer the first snapshot's dumps");
    }
    // An interrupted first snapshot is retried like any other; a failing one is fatal.
    if (stats_.snapshotsAborted != abortedBefore && lastError_ != EINTR) {
        retryTimer_.cancel();
        throw std::runtime_error("netlink: cannot dump links, addresses and neighbors: " +
                                 describe(lastError_));
    }
    armRead();
}

void NetlinkMonitor::requestSnapshot(const std::string& reason) {
    if (stage_ >= 0) {  // one at a time: one more after this one
        if (!wanted_) wantedReason_ = reason;
        wanted_ = true;
        return;
    }
    retryTimer_.cancel();  // this one is the retry
    beginSnapshot(reason);
}

void NetlinkMonitor::beginSnapshot(const std::string& reason) {
    log::info("netlink: taking a full snapshot (", reason, ")");
    ++stats_.snapshots;
    reason_ = reason;
    wanted_ = false;
    stage_ = 0;
    attempt_ = 1;
    dumped_->clear();
    sendDump();
}

int NetlinkMonitor::nextStage(int stage) const {
    ++stage;
    while ((stage == kPortVlanStage || stage == kFdbStage) && !options_.bridgeFdb) ++stage;
    return stage;
}

void NetlinkMonitor::sendDump() {
    current_->clear();
    int rc = dumps_->start(
        dumpRequestFor(kDumps[stage_].type, kDumps[stage_].family),
        [this](nlmsghdr* msg) { current_->append(msg); },
        [this](int error, bool interrupted) { onDumpDone(error, interrupted); });
    if (rc != 0) abortSnapshot(rc);
}

void NetlinkMonitor::onDumpDone(int error, bool interrupted) {
    if (error == 0 && !interrupted && options_.interruptDump &&
        options_.interruptDump(kDumps[stage_].type))
        interrupted = true;
    if (error == 0 && interrupted) {
        ++stats_.dumpsInterrupted;  // the table changed under the dump: read it again
        if (attempt_ < kDumpAttempts) {
            ++attempt_;
            sendDump();
            return;
        }
        error = EINTR;
    }
    if (error != 0) {
        abortSnapshot(error);
        return;
    }
    dumped_->append(*current_);
    current_->clear();
    stage_ = nextStage(stage_);
    if (stage_ < kStages) {
        attempt_ = 1;
        sendDump();
        return;
    }
    deliver(*dumped_, true);
    if (wanted_) {
        wanted_ = false;
        beginSnapshot(wantedReason_);
    }
}

void NetlinkMonitor::abortSnapshot(int error) {
    lastError_ = error;
    ++stats_.snapshotsAborted;
    log::warning("netlink: snapshot (", reason_, ") aborted, ", describe(error),
                 "; nothing withdrawn, retrying in ", std::chrono::seconds(kSnapshotRetry).count(),
                 " s");
    dumped_->append(*current_);  // what the failing dump read, too: delivered, not swept
    current_->clear();
    deliver(*dumped_, false);
    wanted_ = false;  // the retry is the one more
    retrySnapshotLater();
}

void NetlinkMonitor::deliver(detail::MessageLog& dumped, bool complete) {
    // While the observer runs, a request is coalesced (stage_ >= 0), not started on the
    // logs being read.
    stage_ = kDelivering;
    detail::MessageLog entries = std::exchange(dumped, {});
    detail::MessageLog events = std::exchange(*queued_, {});
    observer_.onSnapshotBegin();
    entries.forEach([this](nlmsghdr* msg) { dispatch(msg); });
    if (complete) {
        observer_.onSnapshotEnd();
    } else {
        observer_.onSnapshotAborted();
    }
    observer_.onBurstEnd();
    if (!events.empty()) {
        events.forEach([this](nlmsghdr* msg) { dispatch(msg); });
        observer_.onBurstEnd();
    }
    stage_ = -1;
}

void NetlinkMonitor::retrySnapshotLater() {
    retryTimer_.expires_after(kSnapshotRetry);
    retryTimer_.async_wait(
        [this, alive = std::weak_ptr<char>(alive_)](const boost::system::error_code& ec) {
            if (!ec && !alive.expired()) requestSnapshot("retry");
        });
}

void NetlinkMonitor::armRead() {
    descriptor_->async_wait(
        boost::asio::posix::stream_descriptor::wait_read,
        [this, alive = std::weak_ptr<char>(alive_)](const boost::system::error_code& ec) {
            if (ec || alive.expired()) return;
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
    if (stage_ < 0) observer_.onBurstEnd();  // else all were held back
    if (overflow) {
        ++stats_.overflows;
        log::warning("netlink: event socket overflowed (ENOBUFS); re-synchronising");
        requestSnapshot("overflow");
    }
    armRead();
}

int NetlinkMonitor::onMessage(nl_msg* msg, void* self) {
    auto* monitor = static_cast<NetlinkMonitor*>(self);
    nlmsghdr* hdr = nlmsg_hdr(msg);
    if (monitor->stage_ < 0) {
        monitor->dispatch(hdr);
        return NL_OK;
    }
    // A snapshot's dumps are being read: after it, in order.
    if (monitor->queued_->bytes() + hdr->nlmsg_len > kMaxQueuedBytes) {
        ++monitor->stats_.overflows;
        log::warning("netlink: too many events during a snapshot; dropped, re-synchronising");
        monitor->queued_->clear();
        monitor->requestSnapshot("overflow");  // one more after this one covers them
    }
    ++monitor->stats_.queuedDuringSnapshot;
    monitor->queued_->append(hdr);
    return NL_OK;
}

void NetlinkMonitor::dispatch(nlmsghdr* msg) {
    ++stats_.messages;
    Decoded decoded = decode(msg);
    if (auto* bad = std::get_if<Malformed>(&decoded)) {
        ++stats_.malformed;
        log::warning("netlink: dropped malformed message: ", bad->why);
    } else if (auto* link = std::get_if<LinkMsg>(&decoded)) {
        observer_.onLink(link->link, link->removed);
    } else if (auto* addr = std::get_if<AddressMsg>(&decoded)) {
        observer_.onAddress(addr->addr, addr->removed);
    } else if (auto* neigh = std::get_if<NeighborMsg>(&decoded)) {
        observer_.onNeighbor(neigh->neigh, neigh->removed);
    } else if (auto* fdb = std::get_if<FdbMsg>(&decoded)) {
        observer_.onFdb(fdb->fdb, fdb->removed);
    } else if (auto* port = std::get_if<PortVlansMsg>(&decoded)) {
        observer_.onPortVlans(port->port);
    }
}

}  // namespace twinrail::netlink
