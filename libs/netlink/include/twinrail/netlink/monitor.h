// Follows links, addresses and neighbors. Start-up and every overflow (ENOBUFS: the
// kernel dropped events) produce a full snapshot between onSnapshotBegin/End, so the
// observer can mark-and-sweep instead of trusting an event stream with holes in it.
//
// A dump that raced a change comes back flagged (NLE_DUMP_INTR): it is repeated at once,
// a few times. A snapshot whose dumps still fail ends with onSnapshotAborted instead of
// onSnapshotEnd (the observer must not sweep on partial data) and is retried a second
// later. Only the first snapshot, in start(), throws: a daemon that cannot read the
// kernel at all should not start.
#pragma once

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

class NetlinkObserver {
  public:
    virtual ~NetlinkObserver() = default;
    virtual void onLink(const LinkState& link, bool removed) = 0;
    virtual void onAddress(const AddressEntry& addr, bool removed) = 0;
    virtual void onNeighbor(const NeighborEntry& neigh, bool removed) = 0;
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
    uint64_t dumpsInterrupted = 0;  // NLE_DUMP_INTR, repeated in place
    uint64_t snapshotsAborted = 0;  // retried later
};

struct MonitorOptions {
    int receiveBuffer = 32 * 1024 * 1024;
    // Tests only: when set and it returns true, that dump reports NLE_DUMP_INTR as the
    // kernel does when a dump races a change (hard to provoke on demand).
    std::function<bool(int rtmType)> interruptDump;
};

class NetlinkMonitor {
  public:
    // A smaller receive buffer (options) is only useful to provoke ENOBUFS in tests.
    NetlinkMonitor(boost::asio::io_context& io, NetlinkObserver& observer,
                   MonitorOptions options = {});
    ~NetlinkMonitor();
    NetlinkMonitor(const NetlinkMonitor&) = delete;
    NetlinkMonitor& operator=(const NetlinkMonitor&) = delete;

    // Subscribes, then takes the first snapshot. Throws std::runtime_error on failure.
    void start();
    // Full re-dump (after ENOBUFS, on link up, or on the periodic audit). Returns false
    // when it was aborted (and a retry is scheduled).
    bool snapshot(const std::string& reason);
    const MonitorStats& stats() const { return stats_; }

  private:
    void armRead();
    void drain();
    int dumpOnce(int rtmType, int family);
    int dumpWithRetry(int rtmType, int family);
    void retrySnapshotLater();
    void dispatch(nl_msg* msg);
    static int onMessage(nl_msg* msg, void* self);

    boost::asio::io_context& io_;
    NetlinkObserver& observer_;
    nl_sock* events_ = nullptr;
    nl_sock* dumps_ = nullptr;
    std::unique_ptr<boost::asio::posix::stream_descriptor> descriptor_;
    MonitorStats stats_;
    bool snapshotQueued_ = false;
    MonitorOptions options_;
    boost::asio::steady_timer retryTimer_;
    int lastError_ = 0;  // libnl error of the last aborted snapshot
};

}  // namespace twinrail::netlink
