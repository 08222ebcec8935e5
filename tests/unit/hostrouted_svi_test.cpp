// hostrouted on a SONiC-shaped switch (issue 20, part 3a): hosts on SVIs placed behind their
// member ports by the bridge FDB, SONiC's own settings left alone (platform sonic), and the
// two other ways of handing host routes to BGP (advertise table-direct, network-table).
#include <linux/neighbour.h>
#include <netlink/msg.h>

#include <filesystem>
#include <fstream>

#include "frr_audit.h"
#include "frr_requirements.h"
#include "hostrouted_harness.h"
#include "svi_hosts.h"
#include "twinrail/netlink/parse.h"

namespace twinrail::hostrouted::fixture {
namespace {

constexpr int kVlan = 30;
constexpr int kEth0 = 31;
constexpr int kEth8 = 32;
const MacAddr kHostC{0x02, 0, 0, 0, 0, 0xc1};

netlink::FdbEntry fdb(int port, MacAddr mac, int bridge = kVlan) {
    netlink::FdbEntry f;
    f.ifindex = port;
    f.master = bridge;
    f.mac = mac;
    f.state = NUD_REACHABLE;
    return f;
}

// ---- the pure parts ---------------------------------------------------------------------

TEST(BridgeFdb, LearnsMovesAndIgnoresThePortsOwnEntries) {
    BridgeFdb table;
    EXPECT_TRUE(table.update(fdb(kEth0, kHostA), false));
    EXPECT_FALSE(table.update(fdb(kEth0, kHostA), false));  // refreshed, not changed
    EXPECT_EQ(table.portOf({kVlan, 0}, kHostA), kEth0);
    EXPECT_TRUE(table.update(fdb(kEth8, kHostA), false));  // moved
    EXPECT_EQ(table.portOf({kVlan, 0}, kHostA), kEth8);
    table.update(fdb(kEth0, kHostA), true);  // a late delete from the old port: ignored
    EXPECT_EQ(table.portOf({kVlan, 0}, kHostA), kEth8);
    auto local = fdb(kEth0, kHostB);
    local.state = NUD_PERMANENT;  // the port's own address
    EXPECT_FALSE(table.update(local, false));
    auto self = fdb(kEth0, kHostC);
    self.flags = NTF_SELF;  // the port's own hardware list
    EXPECT_FALSE(table.update(self, false));
    EXPECT_EQ(table.size(), 1U);
    table.beginSnapshot();
    table.endSnapshot();  // not repeated by the snapshot: gone
    EXPECT_FALSE(table.portOf({kVlan, 0}, kHostA));
}

TEST(SviPlacement, FollowsTheFdbTheMemberAndTheBinding) {
    SviLookup in{kEth0, true, "Ethernet0", std::nullopt, ""};
    EXPECT_EQ(placeOnSvi(in).verdict, SviVerdict::Behind);
    EXPECT_EQ(placeOnSvi(in).port, kEth0);
    in.boundPort = "Ethernet8";
    EXPECT_EQ(placeOnSvi(in).verdict, SviVerdict::WrongPort);
    in.boundPort = "Ethernet0";
    in.fdbPortUp = false;
    EXPECT_EQ(placeOnSvi(in).verdict, SviVerdict::MemberDown);
    in.fdbPort.reset();  // aged out of the FDB
    EXPECT_EQ(placeOnSvi(in).verdict, SviVerdict::Unresolved);
    in.heldBehind = kEth0;
    EXPECT_EQ(placeOnSvi(in).verdict, SviVerdict::Keep);
    EXPECT_EQ(placeOnSvi(in).port, kEth0);
}

TEST(SviNeighbors, FindsTheHostsOfAMac) {
    SviNeighbors n;
    n.remember(neighbor(kVlan, "10.1.0.10", kHostA));
    n.remember(neighbor(kVlan, "10.1.0.11", kHostA));
    n.remember(neighbor(kVlan, "10.1.0.12", kHostB));
    EXPECT_EQ(n.withMac(kVlan, kHostA).size(), 2U);
    n.forget(ip("10.1.0.11"), kSwp1);  // another interface's forget: not this one's
    EXPECT_EQ(n.withMac(kVlan, kHostA).size(), 2U);
    n.forget(ip("10.1.0.11"), kVlan);
    EXPECT_EQ(n.withMac(kVlan, kHostA).size(), 1U);
    n.remember(neighbor(kVlan, "10.1.0.10", kHostB));  // the address has a new MAC
    EXPECT_TRUE(n.withMac(kVlan, kHostA).empty());
    EXPECT_EQ(n.on(kVlan).size(), 2U);
}

TEST(NetlinkParse, BridgeFdbEntry) {
    ndmsg ndm{};
    ndm.ndm_family = AF_BRIDGE;
    ndm.ndm_ifindex = kEth0;
    ndm.ndm_state = NUD_REACHABLE;
    ndm.ndm_flags = NTF_MASTER;
    nl_msg* msg = nlmsg_alloc_simple(RTM_NEWNEIGH, 0);
    nlmsg_append(msg, &ndm, sizeof ndm, NLMSG_ALIGNTO);
    nla_put(msg, NDA_LLADDR, 6, kHostA.data());
    nla_put_u32(msg, NDA_MASTER, kVlan);
    auto decoded = netlink::decode(nlmsg_hdr(msg));
    nlmsg_free(msg);
    auto* f = std::get_if<netlink::FdbMsg>(&decoded);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->fdb.ifindex, kEth0);
    EXPECT_EQ(f->fdb.master, kVlan);
    EXPECT_EQ(f->fdb.mac, kHostA);
    EXPECT_TRUE(f->fdb.isHostEntry());
}

TEST(SonicConfig, PlatformAndAdvertiseAreCheckedAndNeedARestart) {
    auto doc = baseConfig();
    doc["HOSTROUTED"]["global"]["advertise"] = "bgp-magic";
    auto bad = parseConfig(doc);
    ASSERT_TRUE(std::holds_alternative<ConfigError>(bad));
    EXPECT_NE(std::get<ConfigError>(bad).str().find("advertise"), std::string::npos);
    doc["HOSTROUTED"]["global"]["advertise"] = "table-direct";
    doc["HOSTROUTED"]["global"]["platform"] = "sonic";
    Config sonic = configOf(doc);
    EXPECT_EQ(sonic.platform, Platform::Sonic);
    EXPECT_EQ(sonic.advertise, Advertise::TableDirect);
    Config linux = configOf(baseConfig());
    EXPECT_TRUE(std::holds_alternative<ConfigError>(checkRuntimeChange(linux, sonic)));
}

TEST(SonicFrr, TableDirectNeedsNoImportTableAndNetworkTableNoLineAtAll) {
    Config cfg;
    cfg.ipv6 = false;
    cfg.advertise = Advertise::TableDirect;
    auto lines = requiredFrrLines(cfg);
    ASSERT_EQ(lines.size(), 1U);
    EXPECT_EQ(lines[0].describe(),
              "router bgp / address-family ipv4 unicast / redistribute table-direct 10");
    cfg.advertise = Advertise::NetworkTable;
    EXPECT_TRUE(requiredFrrLines(cfg).empty());
    cfg.advertise = Advertise::ImportTable;
    EXPECT_EQ(requiredFrrLines(cfg)[0].describe(), "ip import-table 10");
}

// FRR 10's `show bgp ipv4 unicast self-originate json`, cut to two routes and a network.
const char* kSelfOriginated = R"json({"vrfId": 0, "vrfName": "default", "tableVersion": 7,
  "routerId": "10.0.0.1", "defaultLocPrf": 100, "localAS": 65101, "routes": {
  "10.1.0.10/32": [{"valid": true, "bestpath": true, "selectionReason": "First path received",
    "pathFrom": "external", "prefix": "10.1.0.10", "prefixLen": 32, "network": "10.1.0.10/32",
    "metric": 0, "weight": 32768, "peerId": "(unspec)", "path": "", "origin": "incomplete",
    "nexthops": [{"ip": "0.0.0.0", "hostname": "leaf1", "afi": "ipv4", "used": true}]}],
  "10.1.0.77/32": [{"valid": true, "bestpath": true, "network": "10.1.0.77/32"}],
  "10.1.0.0/24": [{"valid": true, "bestpath": true, "network": "10.1.0.0/24"}]},
  "totalRoutes": 3, "totalPaths": 3})json";

TEST(SonicFrr, TheBgpAuditReadsSelfOriginatedHostRoutes) {
    std::string error;
    auto originated = parseBgpOriginated(kSelfOriginated, error);
    ASSERT_TRUE(originated) << error;
    EXPECT_EQ(originated->size(), 2U);  // the /24 is not a host route
    auto audit = auditOriginated({ip("10.1.0.10"), ip("10.1.0.11")}, {}, *originated);
    EXPECT_EQ(audit.missing, std::vector<IpAddr>{ip("10.1.0.11")});
    EXPECT_EQ(audit.foreign, std::vector<IpAddr>{ip("10.1.0.77")});
    EXPECT_FALSE(parseBgpOriginated("{\"routes\": [1]}", error));
    EXPECT_FALSE(parseBgpOriginated("not json", error));
}

TEST(SonicNetworkTable, OnlyDefaultVrfHostRowsInsideOurSubnetsAreOurs) {
    auto ours = [](const IpAddr& a) { return IpPrefix::parse("10.1.0.0/24")->contains(a); };
    EXPECT_EQ(ownedNetworkKey("ADVERTISE_NETWORK_TABLE|10.1.0.9/32", '|', ours), ip("10.1.0.9"));
    EXPECT_FALSE(ownedNetworkKey("ADVERTISE_NETWORK_TABLE|10.2.0.9/32", '|', ours));
    EXPECT_FALSE(ownedNetworkKey("ADVERTISE_NETWORK_TABLE|10.1.0.0/24", '|', ours));
    EXPECT_FALSE(ownedNetworkKey("ADVERTISE_NETWORK_TABLE|Vrf1|10.1.0.9/32", '|', ours));
    EXPECT_FALSE(ownedNetworkKey("ADVERTISE_NETWORK_TABLE|10.1.0.09/32", '|', ours));
    EXPECT_EQ(networkKey(ip("2001:db8::5"), '|'), "ADVERTISE_NETWORK_TABLE|2001:db8::5/128");
}

// ---- the daemon on an SVI ---------------------------------------------------------------

// Vlan1001 (a bridge: SONiC's SVI) with members Ethernet0 and Ethernet8, 10.1.0.1/24 on
// the SVI; the rail's hosts are learned on the SVI.
class HostroutedSvi : public HostroutedHarness {
  protected:
    void seedKernel() override {
        HostroutedHarness::seedKernel();
        auto vlan = link(kVlan, "Vlan1001", true);
        vlan.kind = "bridge";
        kernel->setLink(vlan);
        for (auto [index, name] : {std::pair{kEth0, "Ethernet0"}, std::pair{kEth8, "Ethernet8"}}) {
            auto member = link(index, name, true);
            member.master = kVlan;
            kernel->setLink(member);
        }
        kernel->addAddress({kVlan, *IpPrefix::parse("10.1.0.1/24")});
        for (const auto& f : seedFdb) kernel->setFdb(f);
    }
    static json sviConfig() {
        auto doc = baseConfig();
        doc["HOSTROUTED_INTERFACE"] = {{"Vlan1001", json::object()}};
        return doc;
    }
    void member(int index, const char* name, bool up) {
        auto l = link(index, name, up);
        l.master = kVlan;
        kernel->setLink(l);
    }
    void hostBehind(int port, const char* addr, MacAddr mac) {
        kernel->setFdb(fdb(port, mac));
        kernel->setNeighbor(neighbor(kVlan, addr, mac));
    }
    std::vector<netlink::FdbEntry> seedFdb;
};

TEST_F(HostroutedSvi, AHostOnTheSviIsRoutedThroughTheSviBehindItsMember) {
    startDaemon(configOf(sviConfig()));
    hostBehind(kEth0, "10.1.0.10", kHostA);
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan);
    settle();
    EXPECT_EQ(stateField("HOST_ROUTE_TABLE|10.1.0.10", "ifname"), "Vlan1001");
}

TEST_F(HostroutedSvi, AHostTheFdbDoesNotKnowWaitsAndIsProbedUntilItDoes) {
    startDaemon(configOf(sviConfig()));
    kernel->setNeighbor(neighbor(kVlan, "10.1.0.10", kHostA));
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), 0);
    EXPECT_EQ(prober->probesTo(ip("10.1.0.10")), 1U);
    kernel->setFdb(fdb(kEth0, kHostA));  // its answer taught the bridge
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan);
}

TEST_F(HostroutedSvi, AMemberGoingDownWithdrawsItsHostsAtOnceAndTheyComeBack) {
    startDaemon(configOf(sviConfig()));
    hostBehind(kEth0, "10.1.0.10", kHostA);
    hostBehind(kEth8, "10.1.0.11", kHostB);
    member(kEth0, "Ethernet0", false);  // the link event alone: no neighbor or FDB change
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), 0);
    EXPECT_EQ(routes->routedVia(ip("10.1.0.11")), kVlan);  // the other member's host stays
    kernel->setNeighbor(neighbor(kVlan, "10.1.0.10", kHostA, NUD_STALE));
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), 0);  // not while its member is down
    const size_t probesBefore = prober->probesTo(ip("10.1.0.10"));
    kernel->removeFdb(kVlan, kHostA);  // the bridge flushes the member's entries
    member(kEth0, "Ethernet0", true);
    EXPECT_GT(prober->probesTo(ip("10.1.0.10")), probesBefore);  // the waiting host is asked
    kernel->setFdb(fdb(kEth0, kHostA));                          // and answers
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan);
}

TEST_F(HostroutedSvi, AHostMovingToAnotherMemberFollowsTheFdb) {
    startDaemon(configOf(sviConfig()));
    hostBehind(kEth0, "10.1.0.10", kHostA);
    kernel->setFdb(fdb(kEth8, kHostA));  // moved
    member(kEth0, "Ethernet0", false);   // its old member's loss no longer concerns it
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan);
    member(kEth8, "Ethernet8", false);
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), 0);
}

TEST_F(HostroutedSvi, AnFdbEntryAgeingOutWithdrawsNothing) {
    startDaemon(configOf(sviConfig()));
    hostBehind(kEth0, "10.1.0.10", kHostA);
    kernel->removeFdb(kVlan, kHostA);
    kernel->setNeighbor(neighbor(kVlan, "10.1.0.10", kHostA, NUD_STALE));
    kernel->snapshotNow();
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan);
    member(kEth0, "Ethernet0", false);  // still counted behind Ethernet0
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), 0);
}

TEST_F(HostroutedSvi, ABindingsPortIsEnforcedOnAPlainVlan) {
    auto doc = sviConfig();
    doc["HOSTROUTED_BINDING"]["10.1.0.10"] = {{"ifname", "Vlan1001"}, {"port", "Ethernet0"}};
    startDaemon(configOf(doc));
    hostBehind(kEth8, "10.1.0.10", kHostB);  // another server claims the address
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), 0);
    settle();
    EXPECT_EQ(stateField("HOST_CLAIM_TABLE|10.1.0.10|Vlan1001", "reason"), "bound-elsewhere");
    hostBehind(kEth0, "10.1.0.10", kHostA);  // the planned server, where it is cabled
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan);
    kernel->setFdb(fdb(kEth8, kHostA));  // its MAC now behind the wrong member: withdrawn
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), 0);
}

TEST_F(HostroutedSvi, PerPortLimitsCountTheMemberNotTheSvi) {
    auto doc = sviConfig();
    doc["HOSTROUTED"]["global"]["max_routes_per_port"] = "1";
    startDaemon(configOf(doc));
    hostBehind(kEth0, "10.1.0.10", kHostA);
    hostBehind(kEth0, "10.1.0.11", kHostB);  // Ethernet0 is full
    hostBehind(kEth8, "10.1.0.12", kHostC);  // Ethernet8 is not, though the SVI holds one
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan);
    EXPECT_EQ(routes->routedVia(ip("10.1.0.11")), 0);
    EXPECT_EQ(routes->routedVia(ip("10.1.0.12")), kVlan);
}

TEST_F(HostroutedSvi, ARestartAdoptsTheSvisRoutesWithoutTouchingThem) {
    leftoverRoutes.push_back({ip("10.1.0.10"), kVlan, 10, 201});
    seedFdb.push_back(fdb(kEth0, kHostA));
    seedNeighbors.push_back(neighbor(kVlan, "10.1.0.10", kHostA, NUD_STALE));
    startDaemon(configOf(sviConfig()));
    EXPECT_EQ(routes->routedVia(ip("10.1.0.10")), kVlan);
    EXPECT_EQ(routes->writes, 0U);
}

// ---- platform sonic ---------------------------------------------------------------------

class HostroutedSonic : public HostroutedSvi {
  protected:
    // What intfmgrd set on the SVI (proxy ARP left off here, to be warned about).
    void writeSviSysctls() {
        for (const char* rel :
             {"net/ipv4/conf/Vlan1001/proxy_arp", "net/ipv6/conf/Vlan1001/proxy_ndp",
              "net/ipv4/conf/Vlan1001/proxy_arp_pvlan", "net/ipv4/conf/Vlan1001/arp_accept"}) {
            put(rel, "0");
        }
        put("net/ipv4/neigh/Vlan1001/proxy_delay", "80");
    }
    void put(const std::string& rel, const std::string& value) {
        std::filesystem::path p = std::filesystem::path(sysctl.root()) / rel;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p) << value << "\n";
    }
    static json proxyConfig(const char* platform) {
        auto doc = sviConfig();
        doc["HOSTROUTED"]["global"]["proxy_arp"] = "true";
        doc["HOSTROUTED"]["global"]["proxy_nd"] = "true";
        doc["HOSTROUTED"]["global"]["platform"] = platform;
        return doc;
    }
};

TEST_F(HostroutedSonic, OnLinuxHostroutedSetsProxyArpItself) {
    writeSviSysctls();
    startDaemon(configOf(proxyConfig("linux")));
    EXPECT_EQ(sysctl.read("net/ipv4/conf/Vlan1001/proxy_arp"), "1");
    EXPECT_EQ(sysctl.read("net/ipv6/conf/Vlan1001/proxy_ndp"), "1");
}

TEST_F(HostroutedSonic, OnSonicNothingSonicOwnsIsWrittenAndTheGapIsReported) {
    writeSviSysctls();
    startDaemon(configOf(proxyConfig("sonic")));
    for (const char* rel :
         {"net/ipv4/conf/Vlan1001/proxy_arp", "net/ipv6/conf/Vlan1001/proxy_ndp",
          "net/ipv4/conf/Vlan1001/proxy_arp_pvlan", "net/ipv4/conf/Vlan1001/arp_accept"})
        EXPECT_EQ(sysctl.read(rel), "0") << rel;
    EXPECT_EQ(sysctl.read("net/ipv4/neigh/Vlan1001/proxy_delay"), "0");  // hostrouted's
    auto summary = stateField("HOST_ROUTE_STATS|global", "sonic_settings");
    ASSERT_TRUE(summary);
    EXPECT_NE(summary->find("Vlan1001 proxy_arp 0"), std::string::npos) << *summary;
    put("net/ipv4/conf/Vlan1001/proxy_arp", "1");  // intfmgrd caught up
    kernel->snapshotNow();
    settle(1100ms);
    EXPECT_EQ(stateField("HOST_ROUTE_STATS|global", "sonic_settings"), "ok");
}

// ---- advertise table-direct and network-table -------------------------------------------

TEST_F(HostroutedSvi, TableDirectAuditsBgpsSelfOriginatedRoutesNotZebrasImports) {
    auto doc = sviConfig();
    doc["HOSTROUTED"]["global"]["advertise"] = "table-direct";
    doc["HOSTROUTED"]["global"]["frr_audit_interval"] = "1";
    doc["HOSTROUTED"]["global"]["ipv6"] = "false";
    startDaemon(configOf(doc));
    hostBehind(kEth0, "10.1.0.10", kHostA);
    hostBehind(kEth8, "10.1.0.11", kHostB);
    frr->showAnswers["show bgp ipv4 unicast self-originate json"] = kSelfOriginated;
    const size_t writesBefore = routes->writes;
    settle(1100ms);  // one audit
    EXPECT_TRUE(std::none_of(frr->shows.begin(), frr->shows.end(), [](const std::string& c) {
        return c.find("summary") != std::string::npos;  // zebra's imports are not asked
    }));
    EXPECT_EQ(stateField("HOST_ROUTE_STATS|global", "advertise"), "table-direct");
    EXPECT_EQ(stateField("HOST_ROUTE_STATS|global", "frr_audit_foreign"), "1");  // 10.1.0.77
    // 10.1.0.11 is not originated, but was written just now: not judged (nor rewritten) yet.
    EXPECT_EQ(stateField("HOST_ROUTE_STATS|global", "frr_audit_missing"), "0");
    EXPECT_EQ(routes->writes, writesBefore);
}

TEST_F(HostroutedSvi, NetworkTableRowsFollowTheRoutesAndOnlyOurStaleRowsGo) {
    auto doc = sviConfig();
    doc["HOSTROUTED"]["global"]["advertise"] = "network-table";
    leftoverRoutes.push_back({ip("10.1.0.10"), kVlan, 10, 201});
    seedFdb.push_back(fdb(kEth0, kHostA));
    seedNeighbors.push_back(neighbor(kVlan, "10.1.0.10", kHostA, NUD_STALE));
    startDaemon(configOf(doc));
    const std::string live = "ADVERTISE_NETWORK_TABLE|10.1.0.10/32";
    EXPECT_EQ(redis->hashes[live], (std::map<std::string, std::string>{{"", ""}}));
    hostBehind(kEth8, "10.1.0.11", kHostB);
    settle();
    EXPECT_TRUE(redis->hashes.count("ADVERTISE_NETWORK_TABLE|10.1.0.11/32"));
    // Each HSET makes bgpcfgd run vtysh: a neighbor state change writes nothing.
    redis->commands.clear();
    kernel->setNeighbor(neighbor(kVlan, "10.1.0.11", kHostB, NUD_STALE));
    settle();
    for (const auto& c : redis->commands)
        EXPECT_FALSE(c[0] == "HSET" && c[1] == "ADVERTISE_NETWORK_TABLE|10.1.0.11/32");
    kernel->removeNeighbor(kVlan, ip("10.1.0.11"));
    settle();
    EXPECT_FALSE(redis->hashes.count("ADVERTISE_NETWORK_TABLE|10.1.0.11/32"));
    // Rows left while Redis was away: a reconnect reconciles, deleting only stale rows of
    // ours and never a live one on the way.
    redis->setUp(false);
    for (const char* key :
         {"ADVERTISE_NETWORK_TABLE|10.1.0.99/32", "ADVERTISE_NETWORK_TABLE|10.9.9.9/32",
          "ADVERTISE_NETWORK_TABLE|Vrf1|10.1.0.98/32"})
        redis->hashes[key] = {{"", ""}};
    redis->commands.clear();
    redis->setUp(true);
    settle();
    EXPECT_TRUE(redis->hashes.count(live));
    EXPECT_FALSE(redis->hashes.count("ADVERTISE_NETWORK_TABLE|10.1.0.99/32"));  // ours, gone
    EXPECT_TRUE(redis->hashes.count("ADVERTISE_NETWORK_TABLE|10.9.9.9/32"));    // not ours
    EXPECT_TRUE(redis->hashes.count("ADVERTISE_NETWORK_TABLE|Vrf1|10.1.0.98/32"));
    for (const auto& c : redis->commands)
        EXPECT_FALSE(c.size() == 2 && c[0] == "DEL" && c[1] == live);
}

}  // namespace
}  // namespace twinrail::hostrouted::fixture
