// hostrouted's modules on one io_context: the netlink monitor feeds the policy and the
// registry; the registry's decisions go to the kernel route table (batched per burst),
// the prober and the STATE_DB publisher. Redis and FRR are side channels: routing
// never waits for either.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>

#include "acl_pinner.h"
#include "arp_guard.h"
#include "binding_config.h"
#include "config.h"
#include "edges.h"
#include "evpn_mh.h"
#include "fast_notifier.h"
#include "foreign_hosts.h"
#include "host_registry.h"
#include "import_auditor.h"
#include "network_table.h"
#include "port_holder.h"
#include "ports.h"
#include "prober.h"
#include "proxy_settings.h"
#include "refused_claims.h"
#include "svi_hosts.h"
#include "twinrail/netlink/monitor.h"
#include "twinrail/netlink/route_table.h"
#include "twinrail/redis/client.h"
#include "twinrail/redis/state_table.h"
#include "uplink_pinner.h"

namespace twinrail::hostrouted {

struct DaemonOptions {
    char stateDbSeparator = '|';
    bool checkFrr = true;  // check FRR's configuration and audit zebra's imports
    // After bgpd or zebra restarts: when its saved config has loaded, and ours can be checked.
    std::chrono::milliseconds frrRecheckDelay{3000};
};

class Daemon final : public netlink::NetlinkObserver, public RegistryActions {
  public:
    Daemon(boost::asio::io_context& io, Config config, DaemonOptions options, Edges edges);
    ~Daemon() override;

    void start();  // adopt existing routes, first snapshot, reconcile; throws on failure
    void stop();   // leaves every route in place
    void applyConfig(const Config& next);

    // NetlinkObserver
    void onLink(const netlink::LinkState& link, bool removed) override;
    void onAddress(const netlink::AddressEntry& addr, bool removed) override;
    void onNeighbor(const netlink::NeighborEntry& neigh, bool removed) override;
    void onFdb(const netlink::FdbEntry& fdb, bool removed) override;
    void onPortVlans(const netlink::PortVlans& port) override;
    void onSnapshotBegin() override;
    void onSnapshotEnd() override;
    void onSnapshotAborted() override;
    void onBurstEnd() override;

    // RegistryActions
    void installRoute(const IpAddr& ip, int ifindex) override;
    void removeRoute(const IpAddr& ip, int ifindex) override;
    void sendProbe(const HostRecord& host) override;
    void hostChanged(const IpAddr& ip) override;

  private:
    netlink::HostRoute routeFor(const IpAddr& ip, int ifindex) const;
    void afterWork();
    void armRegistryTimer();
    void armAuditTimer();
    void armStatsTimer();
    void requestSnapshot(const std::string& reason);
    void applyProxy(const Port& port);
    // platform sonic (daemon_ports.cpp): SONiC's settings read and checked, never written.
    void applySonicPort(const Port& port);
    std::string sonicSettingsSummary() const;
    // Hosts on SVIs (daemon_svi.cpp): the member port behind which the bridge FDB puts a
    // host (nullopt: not routed now), member ports going down and up, FDB changes.
    bool isSvi(const Port& port) const;
    std::optional<SviBridge> sviBridge(const Port& port) const;
    // The SVIs whose hosts an FDB entry of `bridge` in `vlan` (0: every VLAN) concerns.
    std::vector<const Port*> svisOver(int bridge, uint16_t vlan) const;
    std::optional<int> placeSviHost(const netlink::NeighborEntry& neigh, const Port& svi);
    bool memberInVlan(int port, uint16_t vlan) const;
    void sviMemberChanged(const netlink::LinkState& link, int masterBefore, bool upBefore,
                          bool removed);
    void probeNeighbor(const netlink::NeighborEntry& neigh);
    // advertise network-table: a host address inside a managed subnet (a row it may own).
    bool insideManagedSubnet(const IpAddr& ip) const;
    bool advertisedNow(const IpAddr& ip) const;
    void startNetworkTable();
    void noteForeign(const netlink::NeighborEntry& neigh, bool foreign);
    // Trust (daemon_claims.cpp): bindings, refused claims, freezes.
    void applyBindings();
    void guardPort(const std::string& name);
    void applyUnfreeze(TimePoint now);
    void refuseClaim(const netlink::NeighborEntry& neigh, const std::string& ifname,
                     std::string_view reason);
    void dropClaim(const IpAddr& ip, int ifindex);
    // The registry's verdict on a claim the policy and the binding let through: routed, or
    // refused and recorded; a freeze is logged.
    void acceptClaim(const netlink::NeighborEntry& neigh, Source source, bool bound,
                     const std::string& ifname, int capPort = 0);
    void thawFrozen(TimePoint now);
    void expireClaims(TimePoint now);
    // ARP/ND a host sent, seen before tc ingress: proof of life, or a claim to refuse.
    void onHeard(int ifindex, const IpAddr& ip, const std::optional<MacAddr>& mac);
    // A managed port came up: ARP/ND for the addresses bound to it that are not routed.
    void askBoundHosts(const Port& port);
    std::optional<redis::Fields> claimRowFor(const std::string& key) const;
    std::vector<std::string> allClaimKeys() const;
    std::string portName(int ifindex) const;
    std::optional<redis::Fields> foreignRowFor(const std::string& key) const;
    void rebuildOwnAddresses();
    void checkFrr();
    void onFrrRestart(const std::string& daemon);
    std::vector<OurRoute> ourImportedRoutes() const;
    void publishStats();
    PinSettings pinSettings() const;
    // Uplink pins (daemon_state.cpp): the kernel's policy tables on Linux, aclorch's rules
    // in APPL_DB on SONiC (acl_pins.h), where the ASIC forwards.
    void startPins();
    void startStateDb();
    void applyPinConfig();
    void startPinner();
    // The leaf's own subnets and addresses: never pinned (the ACL's LOCAL rules).
    std::vector<IpPrefix> localPrefixes() const;
    // The host-port hold (port_holder.h): started with fabric_prefixes, Linux only.
    void startHold();
    void applyHoldConfig();
    void countRedisError(const redis::Value& reply);
    std::optional<redis::Fields> hostRowFor(const std::string& key) const;
    std::vector<std::string> allHostKeys() const;
    void startEvpn();
    // Fast notices (daemon_notices.cpp): with HOSTROUTED_NOTICE's port.
    void startNotices();
    void noticePortLost(int ifindex);
    std::vector<IpAddr> noticeReceivers(int exceptIfindex) const;
    // For the EVPN module (evpn_mh.h): its claims pass the same trust checks as others.
    std::optional<std::string> esTrustRefusal(const IpAddr& ip, int svi,
                                              const std::optional<MacAddr>& mac, Source source,
                                              const std::string& esPort);

    boost::asio::io_context& io_;
    Config cfg_;
    DaemonOptions options_;
    Edges edges_;
    netlink::RouteProgrammer& routes_;
    frr::Channel& frr_;
    HostRegistry registry_;
    std::unique_ptr<netlink::KernelEvents> monitor_;
    std::unique_ptr<HostProber> prober_;
    Ports ports_;
    std::set<IpAddr> own_;
    std::optional<Ports> portsBeforeSnapshot_;
    std::map<std::string, ProxySetting> proxyWritten_;  // what we set, per port name
    std::map<std::string, std::string> delayBefore_;    // proxy_delay before we set 0
    std::unique_ptr<ImportAuditor> auditor_;            // with FRR checks and IPv4 only
    boost::asio::steady_timer frrRecheckTimer_;
    redis::Connection* stateDb_ = nullptr;  // edges_.stateDb once started
    std::unique_ptr<redis::StateTable> hostTable_, foreignTable_;
    ForeignHosts foreign_;
    BindingIndex bindings_;
    RefusedClaims claims_;
    ArpGuard guard_;
    std::set<std::string> guarded_;  // ports with our ARP/ND guard (or asked for it)
    std::unique_ptr<redis::StateTable> claimTable_;
    std::unique_ptr<netlink::PolicyWriter> policyWriter_;  // with uplink pins only
    std::unique_ptr<UplinkPinner> pinner_;
    std::unique_ptr<AclPinner> aclPinner_;             // platform sonic with uplink pins
    std::unique_ptr<PortHolder> holder_;               // with fabric_prefixes only
    std::unique_ptr<EvpnMh> evpn_;                     // with evpn_mh only
    std::unique_ptr<fnn::NoticeSocket> noticeSocket_;  // with HOSTROUTED_NOTICE's port
    std::unique_ptr<FastNotifier> notifier_;
    PortHosts portHosts_;  // with notices: what each port had routed
    BridgeFdb fdb_;
    // Each member's VLANs, as the kernel last listed them (no entry: never listed, as on a
    // VLAN-unaware bridge, where any VLAN counts).
    std::map<int, std::set<uint16_t>> portVlans_;
    SviNeighbors sviNeighbors_;
    std::unique_ptr<NetworkTable> networkTable_;        // with advertise network-table only
    std::map<std::string, std::string> sonicWarnings_;  // port -> what SONiC left unlike the plan
    boost::asio::steady_timer registryTimer_, auditTimer_, statsTimer_, snapshotTimer_;
    bool inSnapshot_ = false;
    bool snapshotQueued_ = false;
    bool frrCheckRunning_ = false;
    std::string frrStatus_ = "unchecked";
    uint64_t refusedLogged_ = 0;
    uint64_t configRejected_ = 0;
    uint64_t redisErrors_ = 0;
};

}  // namespace twinrail::hostrouted
