// The attachment modes in the planner: the plan file (and its version 1), the leaf
// config each mode needs, the real servers' network config, and twinrail verify.
#include <gtest/gtest.h>

#include <map>

#include "twinrail/lab/plan_lab.h"
#include "twinrail/plan/outputs.h"
#include "twinrail/plan/server_config.h"
#include "verify.h"

namespace twinrail::plan {
namespace {

Plan labPlan(Attach a = Attach::Bond) {
    auto r = lab::defaultLabRequest();
    r.attach = a;
    return std::get<Plan>(buildPlan(r));
}

const Switch& sw(const Plan& p, const std::string& name) {
    return *p.findSwitch(name);
}

TEST(Attach, BondIsTheDefaultAndTheRequestIsChecked) {
    EXPECT_EQ(Request{}.attach, Attach::Bond);
    auto r = lab::defaultLabRequest();
    r.nicPorts = 4;  // two ports per plane: one leaf would see the host on two ports
    auto e = buildPlan(r);
    ASSERT_TRUE(std::holds_alternative<SizingError>(e));
    EXPECT_NE(std::get<SizingError>(e).message.find("one NIC port per plane"), std::string::npos);
    r = lab::defaultLabRequest();
    r.gatewayMac = "01:00:5e:00:01:01";  // multicast
    EXPECT_TRUE(std::holds_alternative<SizingError>(buildPlan(r)));
    r.gatewayMac = "00:00:5e:00:01";
    EXPECT_TRUE(std::holds_alternative<SizingError>(buildPlan(r)));
    r = lab::defaultLabRequest(Attach::EvpnMh);
    EXPECT_TRUE(std::holds_alternative<Plan>(buildPlan(r)));
    r.lb = Request::Lb::Static;  // pins follow ingress ports; evpn-mh hosts enter a bridge
    EXPECT_NE(std::get<SizingError>(buildPlan(r)).message.find("--lb ecmp"), std::string::npos);
    r = lab::defaultLabRequest(Attach::EvpnMh);
    r.planes = 1;
    r.nicPorts = 1;
    EXPECT_NE(std::get<SizingError>(buildPlan(r)).message.find("2 planes"), std::string::npos);
}

TEST(Attach, PlanFileKeepsTheModeAndReadsVersionOne) {
    for (Attach a : {Attach::Bond, Attach::Routed, Attach::EvpnMh}) {
        Plan p = labPlan(a);
        auto back = planFromJson(toJson(p));
        ASSERT_TRUE(std::holds_alternative<Plan>(back));
        EXPECT_EQ(std::get<Plan>(back), p) << attachName(a);
    }
    // A version 1 file: host_bgp instead of attach.
    auto j = toJson(labPlan(Attach::Routed));
    j["version"] = 1;
    j["request"].erase("attach");
    j["request"].erase("gateway_mac");
    j["request"]["host_bgp"] = true;
    auto old = planFromJson(j);
    ASSERT_TRUE(std::holds_alternative<Plan>(old));
    EXPECT_EQ(std::get<Plan>(old).request.attach, Attach::Routed);
    j["request"]["host_bgp"] = false;
    EXPECT_EQ(std::get<Plan>(planFromJson(j)).request.attach, Attach::Bond);
    j = toJson(labPlan());
    j["request"]["attach"] = "lacp";
    auto bad = planFromJson(j);
    ASSERT_TRUE(std::holds_alternative<SizingError>(bad));
    EXPECT_NE(std::get<SizingError>(bad).message.find("plan.request.attach"), std::string::npos);
}

TEST(Attach, LeafConfigFollowsTheMode) {
    auto bond = configDb(labPlan(), sw(labPlan(), "p1-leaf1"));
    EXPECT_EQ(bond["HOSTROUTED"]["global"]["proxy_arp"], "true");
    EXPECT_EQ(bond["INTERFACE"]["swp1"]["mac_addr"], "00:00:5e:00:01:01");
    EXPECT_TRUE(bond["INTERFACE"].contains("swp1|10.128.0.1/24"));
    EXPECT_EQ(frrConfig(labPlan(), sw(labPlan(), "p1-leaf1")).find("HOSTS"), std::string::npos);
    Plan routed = labPlan(Attach::Routed);
    auto r = configDb(routed, sw(routed, "p1-leaf1"));
    EXPECT_EQ(r["HOSTROUTED"]["global"]["proxy_arp"], "false");
    EXPECT_FALSE(r["INTERFACE"]["swp1"].contains("mac_addr"));
    EXPECT_NE(frrConfig(routed, sw(routed, "p1-leaf1")).find("neighbor HOSTS peer-group"),
              std::string::npos);
}

// Issue 18: every leaf binds exactly the NIC addresses the plan cables to it, each to its
// port (the EVPN-MH form, bridge and ES bond, is in evpn_mh_plan_test), in every mode, and
// hostrouted reads the binding back as the plan wrote it.
TEST(Attach, LeavesBindEveryNicAddressToItsPort) {
    for (Attach a : {Attach::Bond, Attach::Routed}) {
        Plan p = labPlan(a);
        size_t bound = 0;
        for (const auto& leaf : p.switches) {
            if (leaf.spine) continue;
            auto db = configDb(p, leaf);
            std::map<std::string, std::string> want;
            for (const auto& srv : p.servers)
                for (const auto& nic : srv.nics)
                    for (const auto& np : nic.ports)
                        if (np.leaf == leaf.name) want[nic.address] = np.leafPort;
            ASSERT_FALSE(want.empty()) << leaf.name;
            ASSERT_EQ(db["HOSTROUTED_BINDING"].size(), want.size()) << leaf.name;
            for (const auto& [address, port] : want)
                EXPECT_EQ(db["HOSTROUTED_BINDING"][address]["ifname"], port) << leaf.name;
            bound += want.size();
        }
        // Each NIC is bound once per plane: on each of its leaves.
        EXPECT_EQ(bound, p.servers.size() * p.servers[0].nics.size() * 2);
    }
    EXPECT_EQ(configDb(labPlan(), sw(labPlan(), "p1-leaf1"))["HOSTROUTED_BINDING"]["10.128.0.2"],
              (nlohmann::json{{"ifname", "swp1"}}));
}

TEST(Attach, ServersGetABondPerNicAndDualSendArp) {
    Plan p = labPlan();
    EXPECT_EQ(fabricAggregate(p), "10.128.0.0/23");
    std::string y = netplanConfig(p, p.servers[0]);
    for (const char* want :
         {"renderer: networkd", "    bond1:", "interfaces: [nic1p1, nic1p2]", "mode: balance-xor",
          "transmit-hash-policy: layer3+4", "mii-monitor-interval: 100",
          "addresses: [10.128.0.2/24]", "to: 10.128.0.0/23", "via: 10.128.0.1", "table: 101",
          "from: 10.128.0.2", "    bond2:", "via: 10.128.1.1"})
        EXPECT_NE(y.find(want), std::string::npos) << want << "\n" << y;
    std::string unit = dualSendUnit();
    EXPECT_NE(unit.find("protocol arp u32 match u32 0 0 action mirred egress mirror dev ${PORT1} "
                        "action mirred egress redirect dev ${PORT2}"),
              std::string::npos);
    EXPECT_EQ(dualSendEnv(p.servers[0].nics[0]),
              "# twinrail-dual-send@bond1: the bond's two ports\nPORT1=nic1p1\nPORT2=nic1p2\n");
}

}  // namespace
}  // namespace twinrail::plan

namespace twinrail::cli {
namespace {

std::string sw_loopback(const plan::Plan& p, const std::string& name) {
    return p.findSwitch(name)->loopback;
}

// Every switch reachable, every fabric session up with the planned peer; no hosts yet.
std::map<std::string, SwitchState> fabricUp(const plan::Plan& p) {
    std::map<std::string, SwitchState> st;
    for (const auto& sw : p.switches) {
        SwitchState& s = st[sw.name];
        s.reachable = true;
        for (const auto& port : sw.ports) {
            if (port.role == plan::PortRole::Host) continue;
            s.peers[port.name] = {{"state", "Established"},
                                  {"remote_router_id", sw_loopback(p, port.peer)}};
        }
    }
    return st;
}

// The fabric up, and every NIC port learned where the plan puts it: a healthy fabric.
std::map<std::string, SwitchState> fabricUpAndLearned(const plan::Plan& p) {
    auto st = fabricUp(p);
    for (const auto& srv : p.servers)
        for (const auto& nic : srv.nics)
            for (const auto& np : nic.ports)
                st[np.leaf].hosts[nic.address] = {{"ifname", np.leafPort}, {"state", "installed"}};
    return st;
}

TEST(Verify, NamesWhatIsOffAndWhere) {
    auto p = std::get<plan::Plan>(plan::buildPlan(lab::defaultLabRequest()));
    std::map<std::string, SwitchState> st;
    auto host = [](const std::string& port) {
        return Fields{{"ifname", port}, {"state", "installed"}};
    };
    for (const auto& sw : p.switches) {
        SwitchState& s = st[sw.name];
        s.reachable = true;
        for (const auto& port : sw.ports) {
            if (port.role == plan::PortRole::Host) continue;
            const plan::Switch* far = p.findSwitch(port.peer);
            s.peers[port.name] = {{"state", "Established"}, {"remote_router_id", far->loopback}};
        }
    }
    for (const auto& srv : p.servers)
        for (const auto& nic : srv.nics)
            for (const auto& np : nic.ports) st[np.leaf].hosts[nic.address] = host(np.leafPort);
    auto healthy = verifyFabric(p, st);
    EXPECT_TRUE(healthy.healthy) << healthy.json.dump(2);

    st["p1-leaf1"].hosts["10.128.0.2"] = host("swp2");  // srv1-nic1 port1 in the wrong port
    st["p2-leaf2"].hosts.erase("10.128.1.3");           // srv2-nic2 port2 gone
    st["p1-leaf1"].peers["swp3"]["remote_router_id"] = sw_loopback(p, "p1-spine2");
    st["p2-spine1"].peers["swp2"]["state"] = "Active";
    auto r = verifyFabric(p, st);
    EXPECT_FALSE(r.healthy);
    std::map<std::string, std::string> by;
    for (const auto& row : r.json["nic_ports"])
        by[row["address"].get<std::string>() + " " + row["port"].get<std::string>()] =
            row["status"].get<std::string>() + " " + row["seen_on"].get<std::string>() + " " +
            row["nic_state"].get<std::string>();
    EXPECT_EQ(by["10.128.0.2 port1"], "miscabled p1-leaf1:swp2 all-planes");
    EXPECT_EQ(by["10.128.1.3 port2"], "missing  single-plane");
    EXPECT_EQ(by["10.128.0.3 port1"], "ok p1-leaf1:swp2 all-planes");
    std::map<std::string, std::string> links;
    for (const auto& l : r.json["links"]) links[l["link"]] = l["status"];
    EXPECT_EQ(links["p1-leaf1:swp3 - p1-spine1:swp1"], "wrong-peer");
    EXPECT_EQ(links["p2-leaf2:swp3 - p2-spine1:swp2"], "down");
    EXPECT_EQ(links["p1-leaf2:swp3 - p1-spine1:swp2"], "ok");
    st["p2-spine2"] = SwitchState{};
    st["p2-spine2"].error = "cannot connect";
    EXPECT_EQ(verifyFabric(p, st).json["unreachable"].size(), 1u);
}

// On SONiC a rail's hosts are on its SVI: the row's `port` (the member port the bridge
// learned the host behind) is where the cable ends, not the SVI.
TEST(Verify, AHostOnAnSviIsWhereItsMemberPortIs) {
    auto p = std::get<plan::Plan>(plan::buildPlan(lab::defaultLabRequest()));
    auto st = fabricUp(p);
    for (const auto& srv : p.servers)
        for (const auto& nic : srv.nics)
            for (const auto& np : nic.ports)
                st[np.leaf].hosts[nic.address] = {
                    {"ifname", "Vlan1001"}, {"port", np.leafPort}, {"state", "installed"}};
    auto healthy = verifyFabric(p, st);
    EXPECT_TRUE(healthy.healthy) << healthy.json.dump(2);
    st["p1-leaf1"].hosts["10.128.0.2"]["port"] = "swp2";  // behind another member
    auto r = verifyFabric(p, st);
    EXPECT_FALSE(r.healthy);
    bool found = false;
    for (const auto& row : r.json["nic_ports"]) {
        if (row["address"] == "10.128.0.2" && row["port"] == "port1") {
            EXPECT_EQ(row["status"], "miscabled");
            EXPECT_EQ(row["seen_on"], "p1-leaf1:swp2");
            found = true;
        }
    }
    EXPECT_TRUE(found);
}

// With EVPN-MH the row's `port` is the segment's bond over the planned port: hbond<es-id>
// on Linux, PortChannel<es-id> on SONiC. Another segment is another cable.
TEST(Verify, AnEvpnHostIsWhereItsSegmentIs) {
    auto p = std::get<plan::Plan>(plan::buildPlan(lab::defaultLabRequest(plan::Attach::EvpnMh)));
    for (const std::string bond : {"hbond", "PortChannel"}) {
        auto st = fabricUp(p);
        for (const auto& srv : p.servers) {
            for (const auto& nic : srv.nics) {
                for (const auto& np : nic.ports) {
                    const auto mh = plan::evpnMhLeaf(p, *p.findSwitch(np.leaf));
                    for (const auto& seg : mh.segments) {
                        if (seg.port != np.leafPort) continue;
                        st[np.leaf].hosts[nic.address] = {{"ifname", "br-rail1"},
                                                          {"port", bond + std::to_string(seg.esId)},
                                                          {"state", "installed"}};
                    }
                }
            }
        }
        auto healthy = verifyFabric(p, st);
        EXPECT_TRUE(healthy.healthy) << bond << healthy.json.dump(2);
        // srv1-nic1 (ES 1 of p1-leaf1) heard behind ES 2.
        st["p1-leaf1"].hosts["10.128.0.2"]["port"] = bond + "2";
        auto r = verifyFabric(p, st);
        EXPECT_FALSE(r.healthy) << bond;
        bool found = false;
        for (const auto& row : r.json["nic_ports"]) {
            if (row["address"] == "10.128.0.2" && row["port"] == "port1") {
                EXPECT_EQ(row["status"], "miscabled");
                EXPECT_EQ(row["seen_on"], "p1-leaf1:" + bond + "2");
                found = true;
            }
        }
        EXPECT_TRUE(found) << bond;
    }
}

// Lossless: nothing to say on a fabric without RoCE QoS (Linux switches); with it on any
// switch, a cable lossless at one end only is named, with both ends.
TEST(Verify, LosslessOnlyWhereConfiguredAndBothEndsOfACable) {
    auto p = std::get<plan::Plan>(plan::buildPlan(lab::defaultLabRequest()));
    auto st = fabricUpAndLearned(p);
    auto plain = verifyFabric(p, st);
    EXPECT_TRUE(plain.healthy) << plain.json.dump(2);
    EXPECT_EQ(plain.json["lossless"]["configured"], false);
    st["p1-leaf1"].config["PORT_QOS_MAP"]["swp3"] = {{"pfc_enable", "3"}};
    auto r = verifyFabric(p, st);
    EXPECT_FALSE(r.healthy);
    EXPECT_EQ(r.json["lossless"]["configured"], true);
    std::string all;
    for (const auto& pr : r.json["lossless"]["problems"])
        all += pr["problem"].get<std::string>() + "\n";
    EXPECT_NE(all.find("cable p1-leaf1:swp3 - p1-spine1:swp1: PFC on 3 at p1-leaf1, lossy at "
                       "p1-spine1"),
              std::string::npos)
        << all;
    EXPECT_NE(all.find("PORT_QOS_MAP|swp1 pfc_enable: (none)"), std::string::npos) << all;
}

TEST(Verify, PfcStormsAndPauseRatesAreNamedOnAnyFabric) {
    auto p = std::get<plan::Plan>(plan::buildPlan(lab::defaultLabRequest()));
    auto st = fabricUpAndLearned(p);
    // A Linux fabric (no QoS): pauses are still named, storms too where a watchdog says so.
    st["p1-spine1"].quality["swp1"] = {{"pause_rx_pps", "250.0"}};
    st["p1-spine1"].quality["swp2"] = {{"pause_rx_pps", "99.0"}};  // under the limit
    st["p1-leaf1"].quality["swp3"] = {{"pause_rx_pps", "nan"}};    // junk: never named
    st["p1-leaf1"].watchdog["swp3:3"] = "stormed";
    st["p1-leaf1"].watchdog["swp4:3"] = "operational";
    st["p1-leaf1"].watchdog["swp99:3"] = "stormed";  // not a port of the plan
    auto r = verifyFabric(p, st);
    EXPECT_FALSE(r.healthy);
    EXPECT_EQ(r.json["lossless"]["configured"], false);
    std::string all;
    for (const auto& pr : r.json["lossless"]["problems"])
        all += pr["switch"].get<std::string>() + ": " + pr["problem"].get<std::string>() + "\n";
    EXPECT_NE(all.find("p1-spine1: swp1 receives 250.0 pause frames/s (over 100): p1-leaf1 is "
                       "congested and holding it back"),
              std::string::npos)
        << all;
    EXPECT_NE(all.find("p1-leaf1: PFC storm on swp3 queue 3"), std::string::npos) << all;
    EXPECT_EQ(r.json["lossless"]["problems"].size(), 2u) << all;
    // A higher limit: the pause is no longer named; the storm still is.
    auto lenient = verifyFabric(p, st, VerifyOptions{.maxPausePps = 500});
    EXPECT_EQ(lenient.json["lossless"]["problems"].size(), 1u);
    st["p1-leaf1"].watchdog.clear();
    EXPECT_TRUE(verifyFabric(p, st, VerifyOptions{.maxPausePps = 500}).healthy);
}

}  // namespace
}  // namespace twinrail::cli
