// Everything hostrouted reads from or writes to outside its own memory, as interfaces that
// main.cpp passes in: the real ones (realEdges) on a switch, fakes (tests/fakes) in unit
// tests of the daemon's orchestration. Nothing in Daemon opens a socket, runs a program
// or touches a file except through these.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "acl_pinner.h"
#include "prober.h"
#include "twinrail/common/command_runner.h"
#include "twinrail/fnn/udp_socket.h"
#include "twinrail/frr/access.h"
#include "twinrail/frr/channel.h"
#include "twinrail/netlink/monitor.h"
#include "twinrail/netlink/policy_writer.h"
#include "twinrail/netlink/route_table.h"
#include "twinrail/netlink/route_watch.h"
#include "twinrail/redis/client.h"

namespace twinrail::hostrouted {

// Links' admin state (the host-port hold, port_holder.h): IFF_UP set or cleared through
// rtnetlink. The kernel answers at once (no I/O behind it), as route writes do; the new
// state reaches the daemon as a link event, like anyone else's change.
class LinkControl {
  public:
    virtual ~LinkControl() = default;
    // 0, or the errno the kernel answered (ENODEV: no such link).
    virtual int setLinkUp(const std::string& name, bool up) = 0;
};

// The real one: one RTM_NEWLINK with ifi_change IFF_UP per call, acknowledged.
class KernelLinkControl final : public LinkControl {
  public:
    int setLinkUp(const std::string& name, bool up) override;
};

struct Edges {
    // Links, addresses and neighbors (events and snapshots).
    netlink::KernelEventsFactory kernel;
    // Host routes: written in batches; dumped once at start to adopt a previous run's.
    std::unique_ptr<netlink::RouteProgrammer> routes;
    // Host routes read once the loop runs (the import audit's stale zebra copies): the
    // answer comes later, on the io_context.
    netlink::RouteDumperFactory routeDumper;
    // ARP/ND probes out, the ARP/ND hosts send in.
    HostProberFactory prober;
    // FRR's configuration, zebra's EVPN view and restarts.
    std::unique_ptr<frr::Channel> frr;
    // STATE_DB. Null: nothing is published.
    std::unique_ptr<redis::Connection> stateDb;
    // tc, for the ARP/ND guard's filters.
    std::unique_ptr<CommandRunner> tc;
    // Policy routes, rules and static neighbors (uplink pins, EVPN-MH); one per user. Rules
    // are read back on the io_context.
    std::function<std::unique_ptr<netlink::PolicyWriter>()> policyWriter;
    // The main table, as the uplink pinner follows it.
    netlink::RouteFeedFactory routeFeed;
    // aclorch's rules in APPL_DB (uplink pins on SONiC). Null: none can be written.
    std::function<std::unique_ptr<AclRuleSink>()> aclSink;
    // Host ports' admin state, for the host-port hold. Null: the hold is never applied.
    std::unique_ptr<LinkControl> links;
    // Where the per-port kernel settings (proxy_arp, proxy_ndp, proxy_delay) live.
    std::string sysctlRoot = "/proc/sys";
    // Fast notices' socket (bound to the leaf's loopback) and the wall clock their send
    // times come from. Null: notices are not sent, whatever the config says.
    fnn::NoticeSocketFactory notices;
    std::function<uint64_t()> wallNs;
};

struct RealEdgeOptions {
    std::optional<redis::Endpoint> stateDb;  // none: do not publish
    int stateDbId = 6;
    std::optional<redis::Endpoint> applDb;  // SONiC's APPL_DB (for uplink pins' ACL rules)
    int applDbId = 0;
    frr::Access frr;  // vtysh here, or the vty TCP ports (SONiC)
};

// The kernel, FRR, Redis and tc of the machine hostrouted runs on.
Edges realEdges(boost::asio::io_context& io, const RealEdgeOptions& options);

}  // namespace twinrail::hostrouted
