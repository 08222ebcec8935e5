// Everything pathqd reads from or writes to outside its own memory, as interfaces that
// main.cpp passes in: the real ones (realEdges) on a switch, fakes (tests/fakes) in unit
// tests of the daemon's orchestration. Nothing in Daemon opens a socket, runs a program,
// reads a file or talks to Redis or FRR except through these.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "config.h"
#include "counter_source.h"
#include "int_collector.h"
#include "link_probe.h"
#include "twinrail/frr/access.h"
#include "twinrail/frr/channel.h"
#include "twinrail/netlink/route_table.h"
#include "twinrail/netlink/route_watch.h"
#include "twinrail/redis/client.h"
#include "twinrail/redis/sonic_db.h"

namespace twinrail::pathqd {

struct Edges {
    // Per-port counters every sample period (Linux netlink and ethtool, or COUNTERS_DB).
    std::unique_ptr<CounterSource> counters;
    // FRR: the route-maps (vtysh), BGP's sessions and routes (show), bgpd/zebra restarts.
    // Null: no FRR (nothing published, no weight audit, no BGP_PEER_STATE_TABLE).
    std::unique_ptr<frr::Channel> frr;
    // STATE_DB. Null: nothing is published.
    std::unique_ptr<redis::Connection> stateDb;
    // BGP's multipath routes in the main table, followed route by route.
    netlink::RouteFeedFactory routeFeed;
    // Link probes (UDP, ff02::1 on each port) and the INT collector (UDP).
    LinkProbesFactory probes;
    IntReportsFactory intReports;
    // The kernel's name of an interface (if_indextoname), or "if<n>" when it is gone.
    std::function<std::string(int ifindex)> ifName;
    // Kernel route deletes, for the weight audit's repair (needs CAP_NET_ADMIN).
    std::function<std::unique_ptr<netlink::RouteProgrammer>()> routeWriter;
    // SONiC: APPL_DB (required), ASIC_DB and COUNTERS_DB (optional) for the weight audit
    // with weight_audit_source sonic; CONFIG_DB for SONiC's W-ECMP knob (wcmp_watch.h).
    // Null: that part is off. The daemon starts and stops them.
    std::unique_ptr<redis::Connection> applDb, asicDb, countersDb, configDb;
};

struct RealEdgeOptions {
    CounterKind source = CounterKind::Linux;
    // source sonic: where COUNTERS_DB, APPL_DB and STATE_DB are (read by the source).
    std::optional<redis::DbLocation> countersDb, applDb, portStateDb;
    // On SONiC (source or weight_audit_source sonic): the weight audit's and the W-ECMP
    // watch's databases (Edges::applDb...configDb); none: those parts are off.
    std::optional<redis::DbLocation> weightsApplDb, asicDb, weightsCountersDb, configDb;
    std::optional<redis::Endpoint> stateDb;  // none: do not publish
    int stateDbId = 6;
    frr::Access frr;  // vtysh here, or the vty TCP ports (SONiC)
};

// The kernel name of `ifindex` (if_indextoname), or "if<n>" when there is none.
std::string kernelIfName(int ifindex);

// The kernel, FRR, Redis and sockets of the machine pathqd runs on.
Edges realEdges(boost::asio::io_context& io, const RealEdgeOptions& options);

}  // namespace twinrail::pathqd
