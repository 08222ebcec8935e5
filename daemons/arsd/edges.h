// Everything arsd reaches outside its own memory, passed in by main.cpp: the real ones
// (realEdges) on a switch, fakes in unit tests. Nothing in Daemon loads a program, reads
// a counter, follows a route or resolves a name except through these.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "twinrail/ars/datapath.h"
#include "twinrail/netlink/route_watch.h"

namespace twinrail::arsd {

// One port's counters at one instant, as the quality sampler needs them.
struct PortReading {
    int ifindex = 0;
    uint64_t txBytes = 0;
    uint64_t queuedBytes = 0;  // the root qdisc's backlog
    uint64_t capacityBps = 0;  // a root shaper's rate, else the link's speed; 0: unknown
};

struct Edges {
    // The tc/eBPF data path with a flow table of `maxFlows` entries; throws when the kernel
    // refuses it (no CAP_BPF, say).
    std::function<std::unique_ptr<ars::Datapath>(uint32_t maxFlows)> datapath;
    // Removes a filter of ours that a process which died left on the port's ingress;
    // whether there was one (BpfDatapath::detachLeftover).
    std::function<bool(int ifindex)> detachLeftover;
    // The kernel's routes of some tables, followed event by event (RouteWatch).
    netlink::RouteFeedFactory routeFeed;
    // The counters of `ifindexes` now (those that exist); throws on a failed dump.
    std::function<std::vector<PortReading>(const std::vector<int>& ifindexes)> sample;
    // A monotonic clock, nanoseconds.
    std::function<uint64_t()> nowNs;
    // if_nametoindex; 0 when there is no such interface.
    std::function<int(const std::string& name)> ifIndex;
};

// The machine's kernel: BpfDatapath, RouteWatch, netlink link and qdisc dumps.
Edges realEdges(boost::asio::io_context& io);

}  // namespace twinrail::arsd
