// The lab's SONiC layout, decided from the overlay alone (sonic_layout.h), and the lab's
// stand-in for bgpcfgd's advertise manager (network_advertiser.h). No namespaces here.
#include <gtest/gtest.h>

#include "sku_dir.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "twinrail/lab/network_advertiser.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/sonic_layout.h"
#include "twinrail/plan/sizing.h"
#include "twinrail/plan/sonic_target.h"

namespace lab = twinrail::lab;
namespace plan = twinrail::plan;
using json = nlohmann::json;

namespace {

// The shape of a leaf's overlay: one rail VLAN with two members, two fabric ports.
json leafOverlay() {
    return json::parse(R"({
      "VLAN": {"Vlan1001": {"vlanid": "1001"}},
      "VLAN_MEMBER": {"Vlan1001|Ethernet0": {"tagging_mode": "untagged"},
                      "Vlan1001|Ethernet4": {"tagging_mode": "untagged"}},
      "VLAN_INTERFACE": {"Vlan1001": {"proxy_arp": "enabled", "mac_addr": "00:00:5e:00:01:01"},
                         "Vlan1001|10.128.0.1/24": {}},
      "INTERFACE": {"Ethernet8": {"ipv6_use_link_local_only": "enable"}},
      "LOOPBACK_INTERFACE": {"Loopback0": {}, "Loopback0|10.254.0.1/32": {}}
    })");
}

size_t indexOf(const std::vector<lab::Argv>& cmds, const lab::Argv& want) {
    auto it = std::find(cmds.begin(), cmds.end(), want);
    return it == cmds.end() ? cmds.size() : static_cast<size_t>(it - cmds.begin());
}

plan::Sku labSku() {
    auto sku = twinrail::plantool::loadSkuDir(std::string(TWINRAIL_LAB_HWSKU_DIR) + "/lab-4x200G");
    if (auto* e = std::get_if<twinrail::plantool::SkuLoadError>(&sku))
        throw std::runtime_error(e->message);
    return std::get<plan::Sku>(sku);
}

}  // namespace

TEST(SonicLayout, BridgePerVlanMembersSviAndIntfmgrdSettings) {
    auto cmds = lab::sonicKernelCommands(leafOverlay());
    const lab::Argv bridge{"ip", "link", "add", "Vlan1001", "type", "bridge"};
    const lab::Argv mac{"ip", "link", "set", "dev", "Vlan1001", "address", "00:00:5e:00:01:01"};
    const lab::Argv member{"ip", "link", "set", "dev", "Ethernet0", "master", "Vlan1001"};
    const lab::Argv gw{"ip", "addr", "add", "10.128.0.1/24", "dev", "Vlan1001"};
    ASSERT_LT(indexOf(cmds, bridge), cmds.size());
    ASSERT_LT(indexOf(cmds, member), cmds.size());
    ASSERT_LT(indexOf(cmds, gw), cmds.size());
    // The MAC is set before a member joins (a bridge then keeps it), after the bridge exists.
    EXPECT_LT(indexOf(cmds, bridge), indexOf(cmds, mac));
    EXPECT_LT(indexOf(cmds, mac), indexOf(cmds, member));
    EXPECT_LT(indexOf(cmds, {"ip", "link", "set", "dev", "Ethernet4", "master", "Vlan1001"}),
              cmds.size());
    EXPECT_LT(indexOf(cmds, {"sysctl", "-qw", "net.ipv4.conf.Vlan1001.proxy_arp=1"}), cmds.size());
    EXPECT_LT(indexOf(cmds, {"sysctl", "-qw", "net.ipv4.conf.Vlan1001.proxy_arp_pvlan=1"}),
              cmds.size());
    EXPECT_LT(indexOf(cmds, {"sysctl", "-qw", "net.ipv6.conf.Ethernet8.disable_ipv6=0"}),
              cmds.size());
    EXPECT_LT(indexOf(cmds, {"ip", "addr", "add", "10.254.0.1/32", "dev", "lo"}), cmds.size());
    // Nothing the overlay does not ask for: no arp_accept without grat_arp, no address on
    // a link-local-only port.
    for (const auto& c : cmds) {
        for (const auto& word : c) EXPECT_EQ(word.find("arp_accept"), std::string::npos);
        if (c.size() > 5 && c[1] == "addr") {
            EXPECT_NE(c[5], "Ethernet8");
        }
    }
}

TEST(SonicLayout, GratArpAndDisabledProxyArp) {
    auto db = leafOverlay();
    db["VLAN_INTERFACE"]["Vlan1001"] = {{"proxy_arp", "disabled"}, {"grat_arp", "enabled"}};
    auto cmds = lab::sonicKernelCommands(db);
    EXPECT_LT(indexOf(cmds, {"sysctl", "-qw", "net.ipv4.conf.Vlan1001.proxy_arp=0"}), cmds.size());
    EXPECT_LT(indexOf(cmds, {"sysctl", "-qw", "net.ipv4.conf.Vlan1001.arp_accept=1"}), cmds.size());
}

TEST(SonicLayout, RefusesWhatItCannotApplyNamingTheRow) {
    auto expectRefused = [](const json& db, const std::string& needle) {
        try {
            lab::sonicKernelCommands(db);
            ADD_FAILURE() << "accepted: " << db.dump();
        } catch (const lab::SonicLayoutError& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    auto tagged = leafOverlay();
    tagged["VLAN_MEMBER"]["Vlan1001|Ethernet0"]["tagging_mode"] = "tagged";
    expectRefused(tagged, "VLAN_MEMBER|Vlan1001|Ethernet0");
    auto orphan = leafOverlay();
    orphan["VLAN_MEMBER"]["Vlan7|Ethernet0"] = {{"tagging_mode", "untagged"}};
    expectRefused(orphan, "no VLAN|Vlan7 row");
    auto badPrefix = leafOverlay();
    badPrefix["VLAN_INTERFACE"]["Vlan1001|10.128.0.1"] = json::object();
    expectRefused(badPrefix, "not an address/length");
    auto badName = leafOverlay();
    badName["INTERFACE"]["../../etc"] = json::object();
    expectRefused(badName, "INTERFACE|");
    auto badMac = leafOverlay();
    badMac["VLAN_INTERFACE"]["Vlan1001"]["mac_addr"] = "-f";
    expectRefused(badMac, "mac_addr");
    auto longName = leafOverlay();
    longName["VLAN"]["Vlan100000000000000"] = json::object();
    expectRefused(longName, "VLAN|Vlan100000000000000");
}

TEST(SonicLayout, DatabaseConfigHasSonicIdsAndSeparators) {
    auto d = lab::labDatabaseConfig("/run/x/redis.sock");
    EXPECT_EQ(d["INSTANCES"]["redis"]["unix_socket_path"], "/run/x/redis.sock");
    const std::map<std::string, std::pair<int, std::string>> want{{"APPL_DB", {0, ":"}},
                                                                  {"ASIC_DB", {1, ":"}},
                                                                  {"COUNTERS_DB", {2, ":"}},
                                                                  {"CONFIG_DB", {4, "|"}},
                                                                  {"STATE_DB", {6, "|"}}};
    for (const auto& [name, v] : want) {
        EXPECT_EQ(d["DATABASES"][name]["id"], v.first) << name;
        EXPECT_EQ(d["DATABASES"][name]["separator"], v.second) << name;
        EXPECT_EQ(d["DATABASES"][name]["instance"], "redis") << name;
    }
}

TEST(SonicLayout, LabOverridesReplaceTheSonicSources) {
    json db{
        {"PATHQD",
         {{"global",
           {{"source", "sonic"}, {"weight_audit_source", "sonic"}, {"sonic_release", "202405"}}}}},
        {"PATHQD_PORT", {{"Ethernet8", {{"capacity_mbps", "200000"}}}}},
        {"HOSTROUTED", {{"global", {{"platform", "sonic"}}}}}};
    lab::applyLabOverrides(db);
    EXPECT_EQ(db["PATHQD"]["global"]["source"], "linux");
    EXPECT_EQ(db["PATHQD"]["global"]["weight_audit_source"], "kernel");
    EXPECT_EQ(db["PATHQD"]["global"]["sonic_release"], "202405");  // untouched
    EXPECT_EQ(db["PATHQD_PORT"]["Ethernet8"]["capacity_mbps"], "10000");
    EXPECT_EQ(db["HOSTROUTED"]["global"]["platform"], "sonic");
    EXPECT_EQ(db["HOSTROUTED"]["global"]["holdtime"], "3");
}

TEST(SonicLayout, MergeKeepsTheBaseFieldsTheOverlayLacks) {
    json base{
        {"DEVICE_METADATA", {{"localhost", {{"hwsku", "lab-4x200G"}, {"hostname", "sonic"}}}}}};
    json overlay{{"DEVICE_METADATA", {{"localhost", {{"hostname", "p1-leaf1"}}}}},
                 {"VLAN_INTERFACE", {{"Vlan1001|10.128.0.1/24", json::object()}}}};
    auto db = lab::mergeConfigDb(base, overlay);
    EXPECT_EQ(db["DEVICE_METADATA"]["localhost"]["hwsku"], "lab-4x200G");
    EXPECT_EQ(db["DEVICE_METADATA"]["localhost"]["hostname"], "p1-leaf1");
    EXPECT_TRUE(db["VLAN_INTERFACE"]["Vlan1001|10.128.0.1/24"].is_object());
}

// The lab's own HWSKU holds the default lab plan, every switch's overlay lays out, and the
// renamed plan names the same cables by EthernetN on both ends.
TEST(SonicLayout, DefaultLabPlanOnTheLabSku) {
    auto built = plan::buildPlan(lab::defaultLabRequest());
    ASSERT_TRUE(std::holds_alternative<plan::Plan>(built));
    const auto& p = std::get<plan::Plan>(built);
    const auto sku = labSku();
    std::map<std::string, plan::PortMap> maps;
    for (const auto& sw : p.switches) {
        auto cfg = plan::sonicSwitchConfig(p, sw, sku, {lab::kLabSonicRelease});
        ASSERT_TRUE(std::holds_alternative<plan::SonicSwitchConfig>(cfg))
            << std::get<std::string>(cfg);
        const auto& c = std::get<plan::SonicSwitchConfig>(cfg);
        EXPECT_NO_THROW(lab::sonicKernelCommands(c.overlay)) << sw.name;
        if (!sw.spine) {
            // From 202411: table-direct, which the lab's FRR 8.4 takes the older way.
            EXPECT_EQ(c.overlay["HOSTROUTED"]["global"]["advertise"], "table-direct");
            EXPECT_EQ(lab::labFrrConf(c.frrConf).find("table-direct"), std::string::npos);
            EXPECT_NE(lab::labFrrConf(c.frrConf).find("redistribute table 10"), std::string::npos);
        }
        EXPECT_EQ(lab::labFrrConf(c.frrConf).find("fpm "), std::string::npos);
        maps[sw.name] = std::get<plan::PortMap>(plan::mapPorts(sku, sw));
    }
    auto renamed = lab::withSkuPortNames(p, maps);
    for (const auto& sw : renamed.switches) {
        for (const auto& port : sw.ports) {
            EXPECT_EQ(port.name.rfind("Ethernet", 0), 0u) << sw.name << " " << port.name;
            if (port.role == plan::PortRole::Host) continue;
            const auto* peer = renamed.findSwitch(port.peer);
            ASSERT_NE(peer, nullptr);
            bool back = false;
            for (const auto& pp : peer->ports)
                back = back || (pp.name == port.peerPort && pp.peerPort == port.name);
            EXPECT_TRUE(back) << sw.name << ":" << port.name;
        }
    }
    for (const auto& srv : renamed.servers) {
        for (const auto& nic : srv.nics)
            for (const auto& np : nic.ports) EXPECT_EQ(np.leafPort.rfind("Ethernet", 0), 0u);
    }
    // The CLI's port arguments: plan names map, EthernetN and NIC ports stay.
    auto record = lab::sonicRecord(lab::kLabSonicRelease, maps);
    EXPECT_EQ(lab::labPortName(record, "p1-leaf1", "swp1"), maps["p1-leaf1"].names["swp1"]);
    EXPECT_EQ(lab::labPortName(record, "p1-leaf1", "Ethernet4"), "Ethernet4");
    EXPECT_EQ(lab::labPortName(record, "srv1-nic1", "port1"), "port1");
    EXPECT_EQ(lab::labPortName(nullptr, "p1-leaf1", "swp1"), "swp1");
    EXPECT_THROW(lab::withSkuPortNames(p, {}), lab::SonicLayoutError);
}

TEST(SonicLayout, FrrConfWithoutTheFpmLinesOnly) {
    const std::string conf =
        "frr defaults datacenter\nno fpm use-next-hop-groups\n"
        "fpm address 127.0.0.1\nrouter bgp 65001\n";
    EXPECT_EQ(lab::labFrrConf(conf), "frr defaults datacenter\nrouter bgp 65001\n");
}

TEST(NetworkAdvertiser, AcceptsWhatBgpcfgdAdvertisesAsAPlainNetwork) {
    const json plain{{"", ""}};
    EXPECT_EQ(lab::advertisedPrefix("10.128.0.2/32", plain), "10.128.0.2/32");
    EXPECT_EQ(lab::advertisedPrefix("10.128.0.7/24", plain), "10.128.0.0/24");  // strict=False
    EXPECT_EQ(lab::advertisedPrefix("2001:db8::5/128", plain), "2001:db8::5/128");
    EXPECT_EQ(lab::advertisedPrefix("Vrf1|10.1.0.0/24", plain), std::nullopt);
    EXPECT_EQ(lab::advertisedPrefix("10.1.0.0/24", json{{"profile", "X"}}), std::nullopt);
    EXPECT_EQ(lab::advertisedPrefix("10.1.0.0/33", plain), std::nullopt);
    EXPECT_EQ(lab::advertisedPrefix("10.1.0.0/24\n -c write", plain), std::nullopt);
    EXPECT_EQ(lab::advertisedPrefixes(
                  {{"ADVERTISE_NETWORK_TABLE", {{"10.128.0.2/32", plain}, {"junk", plain}}}}),
              std::set<std::string>{"10.128.0.2/32"});
}

TEST(NetworkAdvertiser, RendersBgpcfgdsStepsInItsOrder) {
    lab::NetworkAdvertiser a;
    EXPECT_TRUE(a.update("", {"10.128.0.2/32"}).empty()) << "no bgp_asn yet: nothing";
    EXPECT_TRUE(a.update("65001; write", {"10.128.0.2/32"}).empty()) << "a bad AS is not one";
    using Step = lab::NetworkAdvertiser::Step;
    auto steps = a.update("65001", {"10.128.0.2/32"});
    ASSERT_EQ(steps.size(), 2u);
    EXPECT_EQ(steps[0], (Step{"router bgp 65001", " no bgp network import-check", "exit"}));
    EXPECT_EQ(steps[1], (Step{"router bgp 65001", " address-family ipv4 unicast",
                              "  network 10.128.0.2/32", " exit-address-family", "exit"}));
    steps = a.update("65001", {"10.128.0.2/32", "2001:db8::5/128"});
    ASSERT_EQ(steps.size(), 1u);
    EXPECT_EQ(steps[0][1], " address-family ipv6 unicast");
    steps = a.update("65001", {"2001:db8::5/128"});
    ASSERT_EQ(steps.size(), 1u);
    EXPECT_EQ(steps[0][2], "  no network 10.128.0.2/32");
    steps = a.update("65001", {});
    ASSERT_EQ(steps.size(), 2u);  // the last one: import-check back on first, as bgpcfgd
    EXPECT_EQ(steps[0], (Step{"router bgp 65001", " bgp network import-check", "exit"}));
    EXPECT_EQ(steps[1][2], "  no network 2001:db8::5/128");
    EXPECT_TRUE(a.update("65001", {}).empty());
    EXPECT_TRUE(a.applied().empty());
}

// evpn-mh on the lab SKU: the segments and VXLAN devices come after FRR (sonicSegment-
// Commands), nothing of them before; the AUX port is the spare 10G one.
TEST(SonicLayout, EvpnSegmentsAfterFrrOnTheLabSku) {
    auto built = plan::buildPlan(lab::defaultLabRequest(plan::Attach::EvpnMh));
    ASSERT_TRUE(std::holds_alternative<plan::Plan>(built));
    const auto& p = std::get<plan::Plan>(built);
    auto cfg = plan::sonicSwitchConfig(p, *p.findSwitch("p1-leaf1"), labSku(),
                                       {plan::SonicRelease::Master});
    ASSERT_TRUE(std::holds_alternative<plan::SonicSwitchConfig>(cfg)) << std::get<std::string>(cfg);
    const json& db = std::get<plan::SonicSwitchConfig>(cfg).overlay;
    EXPECT_EQ(db["HOSTROUTED"]["global"]["evpn_peer_interface"], "Ethernet16");
    const auto early = lab::sonicKernelCommands(db);
    const auto late = lab::sonicSegmentCommands(db);
    const lab::Argv member{"ip", "link", "set", "dev", "PortChannel1", "master", "Vlan1001"};
    const lab::Argv vxlan{"ip",      "link", "add",        "vtep-1001", "type",
                          "vxlan",   "id",   "10001",      "local",     "10.253.0.0",
                          "dstport", "4789", "nolearning", "ttl",       "64"};
    EXPECT_EQ(indexOf(early, member), early.size());
    EXPECT_LT(indexOf(late, member), late.size());
    ASSERT_LT(indexOf(late, vxlan), late.size());
    EXPECT_LT(indexOf(late, {"ip", "link", "set", "dev", "vtep-1001", "master", "Vlan1001"}),
              late.size());
    EXPECT_LT(indexOf(late, {"bridge", "link", "set", "dev", "vtep-1001", "learning", "off",
                             "neigh_suppress", "on", "flood", "off"}),
              late.size());
    EXPECT_LT(indexOf(early, {"ip", "addr", "add", "10.253.0.0/31", "dev", "Ethernet16"}),
              early.size());
    // A hostile row is refused naming it, before anything runs.
    json bad = db;
    bad["VXLAN_TUNNEL_MAP"]["vtep|map_10001_Vlan1001"]["vni"] = "16777216";
    EXPECT_THROW(lab::sonicSegmentCommands(bad), lab::SonicLayoutError);
    bad = db;
    bad["VXLAN_TUNNEL"]["vtep"]["src_ip"] = "-rf";
    EXPECT_THROW(lab::sonicSegmentCommands(bad), lab::SonicLayoutError);
    bad = db;
    bad["VXLAN_TUNNEL_MAP"]["vtep|map_10001_Vlan1001"]["vlan"] = "Vlan9";
    EXPECT_THROW(lab::sonicSegmentCommands(bad), lab::SonicLayoutError);
}

// From 202411 the overlay says `redistribute table-direct`; FRR 8.4 takes the table the
// older way, with the import before `router bgp`.
TEST(SonicLayout, TableDirectBecomesImportTableForFrr84) {
    const std::string conf =
        "frr defaults datacenter\n!\nrouter bgp 65001\n address-family ipv4 unicast\n"
        "  redistribute table-direct 10\n exit-address-family\nexit\n";
    EXPECT_EQ(lab::labFrrConf(conf),
              "frr defaults datacenter\n!\nip import-table 10\n!\nrouter bgp 65001\n"
              " address-family ipv4 unicast\n  redistribute table 10\n exit-address-family\n"
              "exit\n");
    EXPECT_THROW(lab::labFrrConf("router bgp 1\n  redistribute table-direct 1;x\n"),
                 lab::SonicLayoutError);
}
