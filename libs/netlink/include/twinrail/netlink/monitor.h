// Follows links, addresses and neighbors. Start-up and every overflow (ENOBUFS: the
// kernel dropped events) produce a full snapshot between onSnapshotBegin/End, so the
// observer can mark-and-sweep instead of trusting an event stream with holes in it.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cstdint>
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
    // Called after each burst of events, so the observer can flush batched work once.
    virtual void onBurstEnd() = 0;
};

struct MonitorStats {
    uint64_t messages = 0;
    uint64_t malformed = 0;
    uint64_t overflows = 0;
    uint64_t snapshots = 0;
};

class NetlinkMonitor {
public:
    static constexpr int kDefaultReceiveBuffer = 32 * 1024 * 1024;
    // A smaller receive buffer is only useful to provoke ENOBUFS in tests.
    NetlinkMonitor(boost::asio::io_context& io, NetlinkObserver& observer,
                   int receiveBufferBytes = kDefaultReceiveBuffer);
    ~NetlinkMonitor();
    NetlinkMonitor(const NetlinkMonitor&) = delete;
    NetlinkMonitor& operator=(const NetlinkMonitor&) = delete;

    // Subscribes, then takes the first snapshot. Throws std::runtime_error on failure.
    void start();
    // Full re-dump (after ENOBUFS, on link up, or on the periodic audit).
    void snapshot(const std::string& reason);
    const MonitorStats& stats() const { return stats_; }

private:
    void armRead();
    void drain();
    void dumpInto(int rtmType, int family);
    void dispatch(nl_msg* msg);
    static int onMessage(nl_msg* msg, void* self);

    boost::asio::io_context& io_;
    NetlinkObserver& observer_;
    nl_sock* events_ = nullptr;
    nl_sock* dumps_ = nullptr;
    std::unique_ptr<boost::asio::posix::stream_descriptor> descriptor_;
    MonitorStats stats_;
    bool snapshotQueued_ = false;
    int receiveBuffer_;
};

}  // namespace twinrail::netlink
