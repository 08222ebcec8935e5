// Follows links, addresses and neighbors. Start-up and every overflow (ENOBUFS: the
// kernel dropped events) produce a full snapshot between onSnapshotBegin/End, so the
// observer can mark-and-sweep instead of trusting an event stream with holes in it.
//
// Nothing blocks the loop: a snapshot's four dumps (links, addresses, IPv4 and IPv6
// neighbors) are sent one after another on a non-blocking socket of their own and their
// replies read on the io_context as they come, other handlers running in between. The
// observer sees none of it until the dumps are done: then the whole snapshot is delivered
// at once, onSnapshotBegin, every entry, onSnapshotEnd, in one handler, so that no other
// handler ever sees a half-rebuilt view. Events read meanwhile are held back and replayed
// after it, in their order (the dump may hold an older state of an entry than they do,
// never a newer one than the last of them). Only start()'s first snapshot is read
// synchronously: it runs before the loop does.
//
// A dump that raced a change comes back flagged (NLM_F_DUMP_INTR): it is repeated at once,
// a few times. A snapshot whose dumps still fail ends with onSnapshotAborted instead of
// onSnapshotEnd (what the complete dumps read is delivered, but the observer must not
// sweep on partial data) and is retried a second later. Only the first snapshot, in
// start(), throws: a daemon that cannot read the kernel at all should not start.
#pragma once

#include <linux/netlink.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "twinrail/netlink/types.h"

struct nl_sock;
struct nl_msg;

namespace twinrail::netlink {
namespace detail {
class DumpSocket;
class MessageLog;
}  // namespace detail

class NetlinkObserver {
  public:
    virtual ~NetlinkObserver() = default;
    virtual void onLink(const LinkState& link, bool removed) = 0;
    virtual void onAddress(const AddressEntry& addr, bool removed) = 0;
    virtual void onNeighbor(const NeighborEntry& neigh, bool removed) = 0;
    // Bridge FDB entries (MAC -> bridge port). Dumped only with MonitorOptions::bridgeFdb;
    // events arrive either way, and an observer that does not care ignores them.
    virtual void onFdb(const FdbEntry& /*fdb*/, bool /*removed*/) {}
    // A bridge port's VLAN list (types.h PortVlans), in events and, with bridgeFdb, in
    // the snapshot before the addresses.
    virtual void onPortVlans(const PortVlans& /*port*/) {}
    virtual void onSnapshotBegin() = 0;
    virtual void onSnapshotEnd() = 0;
    // The dumps failed part-way: what arrived was delivered, but nothing is known to be
    // gone. The monitor retries the snapshot later.
    virtual void onSnapshotAborted() = 0;
    // Called after each burst of events, so the observer can flush batched work once.
    virtual void onBurstEnd() = 0;
};

struct MonitorStats {
    uint64_t messages = 0;
    uint64_t malformed = 0;
    uint64_t overflows = 0;
    uint64_t snapshots = 0;
    uint64_t dumpsInterrupted = 0;      // NLM_F_DUMP_INTR, repeated in place
    uint64_t snapshotsAborted = 0;      // retried later
    uint64_t queuedDuringSnapshot = 0;  // events held back while a snapshot was read
};

struct MonitorOptions {
    int receiveBuffer = 32 * 1024 * 1024;
    // Tests only: when set and it returns true, that dump counts as flagged NLM_F_DUMP_INTR,
    // as the kernel flags a dump that races a change (hard to provoke on demand).
    std::function<bool(int rtmType)> interruptDump;
    // Dump the bridges' ports' VLAN lists (after the links) and forwarding databases (before
    // the neighbors, so that a host heard on a bridge already has its port): for hosts on
    // SVIs.
    bool bridgeFdb = false;
};

// The kernel's links, addresses and neighbors as a daemon follows them: the edge that
// NetlinkMonitor is on a real kernel and a fake is in unit tests (tests/fakes).
class KernelEvents {
  public:
    virtual ~KernelEvents() = default;
    // Subscribes, then takes the first snapshot synchronously: it is delivered before
    // start() returns. Throws std::runtime_error when the kernel cannot be read.
    virtual void start() = 0;
    // A full re-dump. Returns at once; the snapshot reaches the observer later, from the
    // io_context, as onSnapshotBegin ... onSnapshotEnd, or ... onSnapshotAborted (then
    // retried a second later by the source itself). Requests while one runs are one more
    // snapshot after it.
    virtual void requestSnapshot(const std::string& reason) = 0;
    virtual const MonitorStats& stats() const = 0;
};
using KernelEventsFactory = std::function<std::unique_ptr<KernelEvents>(NetlinkObserver&)>;

class NetlinkMonitor final : public KernelEvents {
  public:
    // A smaller receive buffer (options) is only useful to provoke ENOBUFS in tests.
    NetlinkMonitor(boost::asio::io_context& io, NetlinkObserver& observer,
                   MonitorOptions options = {});
    ~NetlinkMonitor() override;
    NetlinkMonitor(const NetlinkMonitor&) = delete;
    NetlinkMonitor& operator=(const NetlinkMonitor&) = delete;

    // Subscribes, then reads the first snapshot synchronously (before the loop runs) and
    // delivers it. Throws std::runtime_error when the dumps fail (not when the kernel only
    // flagged them interrupted: that snapshot is aborted and retried, as any other).
    void start() override;
    // Starts a snapshot on the io_context (after ENOBUFS, on link up, on the periodic
    // audit); coalesced into one more when one is running.
    void requestSnapshot(const std::string& reason) override;
    const MonitorStats& stats() const override { return stats_; }
    // A snapshot's dumps are being read (its delivery is still to come).
    bool snapshotRunning() const { return stage_ >= 0; }

  private:
    void armRead();
    void drain();
    void beginSnapshot(const std::string& reason);
    int nextStage(int stage) const;
    void sendDump();
    void onDumpDone(int error, bool interrupted);
    void abortSnapshot(int error);
    void deliver(detail::MessageLog& dumped, bool complete);
    void retrySnapshotLater();
    void dispatch(nlmsghdr* msg);
    static int onMessage(nl_msg* msg, void* self);

    boost::asio::io_context& io_;
    NetlinkObserver& observer_;
    nl_sock* events_ = nullptr;
    std::unique_ptr<boost::asio::posix::stream_descriptor> descriptor_;
    std::unique_ptr<detail::DumpSocket> dumps_;
    MonitorStats stats_;
    MonitorOptions options_;
    boost::asio::steady_timer retryTimer_;
    // The running snapshot: the dump (an index into dumps_ below: links, addresses, the
    // bridge FDB when asked for, IPv4 and IPv6 neighbors; -1 none, kDelivering being
    // delivered), its attempt, what the complete dumps and the current one
    // read, and the events held back meanwhile.
    int stage_ = -1;
    int attempt_ = 0;
    std::string reason_;
    std::unique_ptr<detail::MessageLog> dumped_, current_, queued_;
    bool wanted_ = false;  // requested while one ran: one more after it
    std::string wantedReason_;
    int lastError_ = 0;  // errno of the last aborted snapshot (EINTR: kept interrupted)
    std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

}  // namespace twinrail::netlink
