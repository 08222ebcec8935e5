// EVPN multihoming as its own module: kernel neighbors on the SVIs and FRR's EVPN view
// (es_sync.h) meet in decideAttachment (es_attachment.h), once per host address, whenever
// either side changes. The decision goes straight into the registry (a local host, or one
// only the ES peer learned), and for a peer's host to a static neighbor of ours on the SVI
// (the kernel's forwarding needs one, and zebra's own install is refused on a stock
// kernel). With an ES peer over an AUX link, hosts whose ES port is down here are detoured
// to it (a route in their own table, and the bridge's FDB entry to the VXLAN port).
//
// It owns its state (what the SVIs hold, our static neighbors, the detours) and its writer;
// it reads the daemon's port table, own addresses and bindings, and asks the daemon only
// for what belongs to the daemon: the trust verdict (refused claims are published there),
// a probe, and the flush after work.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "binding_config.h"
#include "config.h"
#include "es_attachment.h"
#include "es_sync.h"
#include "host_registry.h"
#include "ports.h"
#include "twinrail/frr/channel.h"
#include "twinrail/netlink/policy_writer.h"
#include "twinrail/netlink/route_table.h"

namespace twinrail::hostrouted {

class EvpnMh {
  public:
    struct Hooks {
        // nullopt: the claim may be routed; else why not (the daemon records the refusal).
        std::function<std::optional<std::string>(const IpAddr& ip, int svi,
                                                 const std::optional<MacAddr>& mac, Source source,
                                                 const std::string& esPort)>
            trustRefusal;
        std::function<void(const HostRecord&)> probe;
        std::function<void()> afterWork;  // the registry's writes go out
        // The ES port a routed host is behind changed (its state row names it).
        std::function<void(const IpAddr& ip)> esPortChanged;
    };
    // `cfg`, `ports`, `own` and `bindings` are the daemon's and outlive this object.
    EvpnMh(boost::asio::io_context& io, const Config& cfg, frr::Channel& frr,
           std::unique_ptr<netlink::PolicyWriter> writer, HostRegistry& registry,
           const Ports& ports, const std::set<IpAddr>& own, const BindingIndex& bindings,
           Hooks hooks);

    // Knows the detours a previous run left (from `routes`), then starts reading FRR.
    void start(netlink::RouteProgrammer& routes);
    void stop();
    // A kernel neighbor on a managed SVI.
    void onNeighbor(const netlink::NeighborEntry& neigh, bool removed);
    // An ES port went up or down: every host is decided again at once, before FRR says so.
    void portsChanged();
    void zebraRestarted() { sync_.zebraRestarted(); }
    const EsSyncStats& stats() const { return sync_.stats(); }
    size_t ownNeighbors() const { return ownNeighbors_.size(); }
    // The ES access port (the bond) a routed host is behind, as FRR last said; "" unknown.
    std::string esPortOf(const IpAddr& ip) const;

  private:
    void startDetours(netlink::RouteProgrammer& routes);
    void onView();
    void confirmPeerActive(const EvpnView& view);
    void decide(const IpAddr& ip, const std::set<std::string>& downPorts);
    std::set<std::string> downPortNames() const;
    int sviOfPort(const std::string& portName) const;
    void setOwnNeighbor(const IpAddr& ip, std::optional<netlink::StaticNeighbor> wanted);
    void noteEsPort(const IpAddr& ip, const std::string& port);
    void setDetour(const IpAddr& ip, bool wanted);
    void setFdbDetour(const MacAddr& mac, int bridge, bool wanted);
    void flush();

    const Config& cfg_;
    std::unique_ptr<netlink::PolicyWriter> writer_;
    HostRegistry& registry_;
    const Ports& ports_;
    const std::set<IpAddr>& own_;
    const BindingIndex& bindings_;
    Hooks hooks_;
    EsSync sync_;
    std::map<IpAddr, netlink::NeighborEntry> sviNeighbors_;   // kernel entries on SVIs
    std::map<IpAddr, netlink::StaticNeighbor> ownNeighbors_;  // what we installed
    std::map<IpAddr, std::string> why_;                       // last decision, for logs
    std::map<IpAddr, std::string> esPorts_;                   // routed hosts' ES ports
    std::set<IpAddr> detours_;                                // over AUX, to the ES peer
    std::map<MacAddr, int> fdbDetours_;  // MAC -> the VXLAN port the bridge sends it to
    std::set<MacAddr> fdbChecked_;       // MACs whose leftover detour was cleared
};

}  // namespace twinrail::hostrouted
