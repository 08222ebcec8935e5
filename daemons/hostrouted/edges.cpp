#include "edges.h"

namespace twinrail::hostrouted {
namespace {
// zebra answers its own vty within milliseconds; 5 s means it is stuck.
constexpr auto kZebraTimeout = std::chrono::seconds(5);
}  // namespace

Edges realEdges(boost::asio::io_context& io, const RealEdgeOptions& options) {
    Edges e;
    e.kernel = [&io](netlink::NetlinkObserver& observer) {
        // The bridges' FDB too: hosts on SVIs are placed behind their member ports.
        netlink::MonitorOptions monitorOptions;
        monitorOptions.bridgeFdb = true;
        return std::make_unique<netlink::NetlinkMonitor>(io, observer, monitorOptions);
    };
    e.routes = std::make_unique<netlink::KernelRouteTable>();
    e.routeDumper = [&io] { return std::make_unique<netlink::KernelRouteDumper>(io); };
    e.prober = [&io](HostProber::SeenHandler onSeen, std::function<void()> onBatchEnd) {
        return std::make_unique<Prober>(io, std::move(onSeen), std::move(onBatchEnd));
    };
    e.frr = frr::makeFrrChannel(io, options.frr, kZebraTimeout);
    if (options.applDb) {
        e.aclSink = [&io, at = *options.applDb, id = options.applDbId] {
            return makeApplDbAclSink(std::make_unique<redis::Client>(io, at, id, "APPL_DB"), id);
        };
    }
    if (options.stateDb) {
        e.stateDb =
            std::make_unique<redis::Client>(io, *options.stateDb, options.stateDbId, "STATE_DB");
    }
    e.tc = std::make_unique<ProcessRunner>(io, ProcessOptions{{Capability::NetAdmin}});
    e.policyWriter = [&io] { return std::make_unique<netlink::KernelPolicyWriter>(io); };
    e.links = std::make_unique<KernelLinkControl>();
    e.routeFeed = [&io](std::set<uint32_t> tables, netlink::RouteFeed::OnChange onChange) {
        return std::make_unique<netlink::RouteWatch>(io, std::move(tables), std::move(onChange));
    };
    e.notices = [&io](std::optional<IpAddr> bind, uint16_t port, fnn::DatagramHandler handler) {
        return std::make_unique<fnn::UdpNoticeSocket>(io, bind, port, std::move(handler));
    };
    e.wallNs = fnn::wallClockNs;
    return e;
}

}  // namespace twinrail::hostrouted
