// The lab smoke test on SONiC's layout (`twinrail-lab up --nos sonic`), in one bring-up:
// EthernetN ports, a bridge per rail VLAN with its SVI, CONFIG_DB loaded and the daemons
// finding Redis through database_config.json; every NIC reaches every NIC through both
// planes; each NIC's /32 on both its leaves (ADVERTISE_NETWORK_TABLE, BGP) and in the
// kernel of remote switches; WCMP weights move under a shaped link; a member port going
// down is withdrawn at once (the figure is printed); and nothing writes the sysctls
// SONiC's intfmgrd owns on the SVIs. Routed NICs on the same layout: sessions to each
// plane's address on the rail SVI, reachability through every plane, a member port down.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <thread>

#include "lab_fixture.h"
#include "twinrail/lab/fabric.h"
#include "twinrail/lab/frr_container.h"
#include "twinrail/lab/lab_status.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/shell.h"

namespace lab = twinrail::lab;
namespace plan = twinrail::plan;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

using twinrail::it::binaries;
using twinrail::it::leftovers;
using twinrail::it::pingAllPlanes;
using twinrail::it::pingEachPlane;

class SonicLab : public twinrail::it::LabTest {
  protected:
    SonicLab() : LabTest("snc") {}
    std::string sysctl(const std::string& node, const std::string& dev,
                       const std::string& key) const {
        auto out = sh(node, {"sysctl", "-n", "net.ipv4.conf." + dev + "." + key});
        return out.substr(0, out.find('\n'));
    }
    bool kernelRoute(const std::string& node, const std::string& host) const {
        return sh(node, {"ip", "route", "show", host}).find("proto bgp") != std::string::npos;
    }
};

// The command line of the running service `comm` in the node.
std::string cmdlineOf(const std::string& lab, const std::string& node, lab::Service s) {
    auto pids = lab::servicePids(lab, node, s);
    if (pids.empty()) return "";
    std::ifstream in("/proc/" + std::to_string(pids[0]) + "/cmdline");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    for (auto& c : text)
        if (c == '\0') c = ' ';
    return text;
}

}  // namespace

TEST_F(SonicLab, SmokeOnTheSonicLayout) {
    auto built = plan::buildPlan(lab::defaultLabRequest());  // bonded NICs
    ASSERT_TRUE(std::holds_alternative<plan::Plan>(built));
    lab::PlanLab l(name_, std::get<plan::Plan>(built), binaries(), lab::SonicLayout{});
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_NO_THROW(l.up());
    std::cout << "[figure] up --nos sonic: "
              << std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - t0)
                     .count()
              << " ms\n";
    const plan::Plan& p = l.plan();
    const auto record = lab::labSonicRecord(name_);
    ASSERT_FALSE(record.is_null());
    auto port = [&record](const std::string& node, const std::string& planPort) {
        return lab::labPortName(record, node, planPort);
    };

    // The kernel shape: EthernetN ports, the rail's bridge with its members and gateway.
    const std::string member = port("p1-leaf1", "swp1");
    ASSERT_EQ(member.rfind("Ethernet", 0), 0u) << member;
    EXPECT_NE(sh("p1-leaf1", {"ip", "-d", "link", "show", "Vlan1001"}).find("bridge"),
              std::string::npos);
    EXPECT_NE(sh("p1-leaf1", {"ip", "link", "show", member}).find("master Vlan1001"),
              std::string::npos);
    EXPECT_NE(sh("p1-leaf1", {"ip", "-4", "addr", "show", "dev", "Vlan1001"}).find("10.128.0.1/24"),
              std::string::npos);
    EXPECT_NE(sh("p1-leaf1", {"ip", "link", "show", "Vlan1001"}).find("00:00:5e:00:01:01"),
              std::string::npos);
    EXPECT_EQ(sh("p1-leaf1", {"ip", "link", "show"}).find("swp"), std::string::npos);
    // Redis in SONiC's layout: CONFIG_DB holds the overlay; the daemons find it by name.
    EXPECT_EQ(redis("p1-leaf1", "4", {"HGET", "VLAN_INTERFACE|Vlan1001", "proxy_arp"}),
              "enabled\n");
    EXPECT_EQ(redis("p1-leaf1", "4", {"HGET", "PATHQD|global", "source"}), "linux\n");
    // FRR as the release runs it: in the switch's bgp container, bgpd's vty TCP port closed
    // (-P 0, 202505), its vty sockets only in the container; the daemons reach it through
    // Docker, as SONiC's host vtysh does.
    const std::string leafNs = lab::PlanLab::nsPrefix(name_) + "p1-leaf1";
    EXPECT_TRUE(lab::frrInContainer(leafNs));
    EXPECT_EQ(lab::run({"docker", "inspect", lab::frrContainerName(leafNs)}).rc, 0);
    EXPECT_NE(
        lab::inNodeRun(name_, "p1-leaf1", {"bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/2605"}).rc, 0)
        << "bgpd's vty TCP port answered";
    EXPECT_FALSE(fs::exists("/var/run/frr/" + leafNs + "/bgpd.vty"));
    for (auto s : {lab::Service::Hostrouted, lab::Service::Pathqd}) {
        auto cmd = cmdlineOf(name_, "p1-leaf1", s);
        EXPECT_NE(cmd.find("--db-config"), std::string::npos) << cmd;
        EXPECT_EQ(cmd.find("--redis-socket"), std::string::npos) << cmd;
        EXPECT_NE(cmd.find("--frr docker --frr-container " + lab::frrContainerName(leafNs)),
                  std::string::npos)
            << cmd;
    }

    // Every NIC to every NIC, both directions pinned to each plane in turn.
    EXPECT_EQ(pingEachPlane(name_, p), "");
    auto status = lab::labStatus(name_);
    EXPECT_TRUE(status["healthy"].get<bool>()) << status.dump(2);

    // Each NIC's /32 on both its leaves (the row, then BGP's own network) and in the
    // kernel of a remote switch of each plane (the spine, the other rail's leaf).
    for (const auto& srv : p.servers) {
        for (const auto& nic : srv.nics) {
            const std::string host = nic.address + "/32";
            for (const auto& np : nic.ports) {
                // From 202411 hostrouted's table goes to BGP as table-direct (the lab's FRR
                // 8.4 as redistribute table): no ADVERTISE_NETWORK_TABLE rows.
                EXPECT_EQ(redis(np.leaf, "6", {"EXISTS", "ADVERTISE_NETWORK_TABLE|" + host}),
                          "0\n");
                lab::Argv show = lab::vtyshFor(lab::PlanLab::nsPrefix(name_) + np.leaf);
                show.insert(show.end(), {"-c", "show bgp ipv4 unicast " + host + " json"});
                auto bgp = nlohmann::json::parse(lab::run(show).out, nullptr, false);
                EXPECT_TRUE(!bgp.is_discarded() && bgp.contains("paths") && !bgp["paths"].empty())
                    << np.leaf << " has no BGP route " << host;
                const std::string spine = "p" + std::to_string(np.plane) + "-spine1";
                EXPECT_TRUE(
                    lab::waitUntil([&] { return kernelRoute(spine, nic.address); }, 5s, 100ms))
                    << spine << " " << nic.address;
                for (const auto& sw : p.switches) {
                    if (sw.spine || sw.plane != np.plane || sw.name == np.leaf) continue;
                    EXPECT_TRUE(kernelRoute(sw.name, nic.address)) << sw.name << " " << host;
                }
            }
        }
    }

    // WCMP: p1-spine1's port to p1-leaf1 drops to a quarter of its speed; p1-leaf2 moves
    // traffic toward p1-leaf1's hosts off p1-spine1.
    const std::string spinePort = port("p1-spine1", "swp1");
    const std::string via1 = port("p1-leaf2", "swp3"), via2 = port("p1-leaf2", "swp4");
    auto weights = [&] {
        return lab::parseRouteWeights(sh("p1-leaf2", {"ip", "route", "show", "10.128.0.2"}));
    };
    ASSERT_TRUE(lab::waitUntil([&] { return weights().size() == 2; }, 10s, 200ms));
    const auto before = weights();
    ASSERT_EQ(lab::inNodeRun(name_, "p1-spine1",
                             {"tc", "qdisc", "replace", "dev", spinePort, "root", "tbf", "rate",
                              "2500mbit", "burst", "1mb", "latency", "1ms"})
                  .rc,
              0);
    EXPECT_TRUE(lab::waitUntil(
        [&] {
            auto w = weights();
            return w.size() == 2 && w[via1] * 3 < w[via1] + w[via2];
        },
        20s, 200ms))
        << "before " << before.at(via1) << "/" << before.at(via2) << ", now "
        << sh("p1-leaf2", {"ip", "route", "show", "10.128.0.2"});
    lab::inNodeRun(name_, "p1-spine1", {"tc", "qdisc", "del", "dev", spinePort, "root"});

    // Nothing but the lab's intfmgrd role writes proxy_arp, proxy_arp_pvlan, arp_accept:
    // sentinels on p1-leaf1's SVI, hostrouted and pathqd restarted and settled, unchanged.
    EXPECT_EQ(sysctl("p1-leaf1", "Vlan1001", "proxy_arp"), "1");
    EXPECT_EQ(sysctl("p1-leaf1", "Vlan1001", "proxy_arp_pvlan"), "1");
    const std::map<std::string, std::string> sentinel{
        {"proxy_arp", "0"}, {"proxy_arp_pvlan", "0"}, {"arp_accept", "2"}};
    for (const auto& [k, v] : sentinel)
        sh("p1-leaf1", {"sysctl", "-qw", "net.ipv4.conf.Vlan1001." + k + "=" + v});
    for (auto s : {lab::Service::Hostrouted, lab::Service::Pathqd}) {
        lab::stopService(name_, "p1-leaf1", s, SIGTERM);
        lab::startService(name_, binaries(), "p1-leaf1", s);
    }
    lab::announceOn(name_, binaries(), p, "p1-leaf1", {member});
    EXPECT_TRUE(
        lab::waitUntil([&] { return table10("p1-leaf1").count("10.128.0.2") == 1; }, 10s, 100ms));
    std::this_thread::sleep_for(3s);  // a holdtime of the restarted daemons' checks
    for (const auto& [k, v] : sentinel)
        EXPECT_EQ(sysctl("p1-leaf1", "Vlan1001", k), v) << k << " was written";
    for (const auto& [k, v] : std::map<std::string, std::string>{
             {"proxy_arp", "1"}, {"proxy_arp_pvlan", "1"}, {"arp_accept", "0"}})
        sh("p1-leaf1", {"sysctl", "-qw", "net.ipv4.conf.Vlan1001." + k + "=" + v});

    // A member port goes down (given by its plan name): p1-leaf1 withdraws the host from
    // its table, BGP with it, and p1-spine1's kernel loses the route.
    ASSERT_TRUE(kernelRoute("p1-spine1", "10.128.0.2"));
    const auto down = std::chrono::steady_clock::now();
    lab::failNode(name_, "p1-leaf1:swp1");
    auto since = [&down] {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - down)
            .count();
    };
    EXPECT_TRUE(
        lab::waitUntil([&] { return table10("p1-leaf1").count("10.128.0.2") == 0; }, 1s, 10ms));
    const auto leafMs = since();
    EXPECT_TRUE(lab::waitUntil([&] { return !kernelRoute("p1-spine1", "10.128.0.2"); }, 2s, 10ms));
    const auto spineMs = since();
    std::cout << "[figure] member port " << member << " down: withdrawn on p1-leaf1 in " << leafMs
              << " ms, gone from p1-spine1's kernel in " << spineMs << " ms\n";
    EXPECT_EQ(table10("p2-leaf1").count("10.128.0.2"), 1u) << "the other plane kept it";
    lab::restoreNode(name_, binaries(), "p1-leaf1:" + member);  // the EthernetN name
    EXPECT_TRUE(lab::waitUntil([&] { return kernelRoute("p1-spine1", "10.128.0.2"); }, 10s, 100ms));

    // twinrail verify against the lab's Redis: every switch read, every fabric link ok.
    auto v = lab::run({TWINRAIL_BIN, "--json", "verify", "--lab", name_});
    auto report = nlohmann::json::parse(v.out, nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << v.out << v.err;
    EXPECT_TRUE(report["unreachable"].empty()) << report["unreachable"].dump();
    ASSERT_EQ(report["links"].size(), 8u);
    for (const auto& link : report["links"]) EXPECT_EQ(link["status"], "ok") << link.dump();
    for (const auto& nic : report["nic_ports"]) {
        // Each NIC through every plane, seen behind its planned member port (hostrouted
        // publishes the member the bridge learned the host behind, not only the SVI).
        EXPECT_EQ(nic["nic_state"], "all-planes") << nic.dump();
        EXPECT_EQ(nic["status"], "ok") << nic.dump();
        std::cout << "[verify] " << nic["planned"].get<std::string>() << " seen on "
                  << nic["seen_on"].get<std::string>() << "\n";
    }
    // Lossless as planned (RoCE QoS in every switch's CONFIG_DB); then a port's PFC priority
    // changed by hand, and a cable lossless on one end only, are both named.
    EXPECT_EQ(report["lossless"]["configured"], true);
    EXPECT_EQ(report["lossless"]["problems"], nlohmann::json::array());
    redis("p1-leaf1", "4", {"HSET", "PORT_QOS_MAP|Ethernet8", "pfc_enable", "4"});
    redis("p2-spine1", "4", {"HDEL", "PORT_QOS_MAP|Ethernet0", "pfc_enable"});
    auto degraded = lab::run({TWINRAIL_BIN, "--json", "verify", "--lab", name_});
    EXPECT_EQ(degraded.rc, 69);
    const auto after = nlohmann::json::parse(degraded.out, nullptr, false);
    ASSERT_FALSE(after.is_discarded()) << degraded.out << degraded.err;
    std::string problems;
    for (const auto& pr : after["lossless"]["problems"])
        problems +=
            pr["switch"].get<std::string>() + ": " + pr["problem"].get<std::string>() + "\n";
    std::cout << problems;
    for (const char* want :
         {"p1-leaf1: PORT_QOS_MAP|Ethernet8 pfc_enable: \"4\", the plan says \"3\"",
          "p1-leaf1: cable p1-leaf1:Ethernet8 - p1-spine1:Ethernet0: PFC on 4 at p1-leaf1, PFC "
          "on 3 at p1-spine1",
          "p2-spine1: PORT_QOS_MAP|Ethernet0 pfc_enable: (none)",
          "p2-leaf1: cable p2-leaf1:Ethernet8 - p2-spine1:Ethernet0: PFC on 3 at p2-leaf1, lossy "
          "at p2-spine1"})
        EXPECT_NE(problems.find(want), std::string::npos) << want;
    // A lossless queue the PFC watchdog finds stormed, as SONiC's pfcwd writes it in
    // COUNTERS_DB (the lab has no syncd: the queue's oid is made up here).
    redis("p1-leaf1", "2",
          {"HSET", "COUNTERS_QUEUE_NAME_MAP", "Ethernet0:3", "oid:0x150000000b03"});
    redis("p1-leaf1", "2", {"HSET", "COUNTERS:oid:0x150000000b03", "PFC_WD_STATUS", "stormed"});
    auto stormed = lab::run({TWINRAIL_BIN, "verify", "--lab", name_});
    EXPECT_EQ(stormed.rc, 69);
    EXPECT_NE(stormed.out.find("PFC storm on Ethernet0 queue 3"), std::string::npos) << stormed.out;

    EXPECT_TRUE(lab::waitUntil([this] { return lab::labStatus(name_)["healthy"].get<bool>(); }, 20s,
                               500ms));
    EXPECT_FALSE(lab::PlanLab::down(name_).empty());
    EXPECT_EQ(leftovers(name_), std::vector<std::string>{});
}

// Routed NICs on SONiC leaves (sonic_routed.cpp): the rail SVI carries its plane's address
// and no gateway, each NIC's sessions to both its leaves come up from its own address,
// every NIC reaches every NIC and leaf through each plane, and a member port going down
// takes its host off that leaf at once while the NIC carries on through the other plane.
TEST_F(SonicLab, RoutedNicsOnTheSonicLayout) {
    auto built = plan::buildPlan(lab::defaultLabRequest(plan::Attach::Routed));
    ASSERT_TRUE(std::holds_alternative<plan::Plan>(built));
    // 202405: before table-direct (FRR 8.5): host routes go to BGP as SONiC then did, as
    // ADVERTISE_NETWORK_TABLE rows that bgpcfgd (the lab's stand-in) turns into `network`.
    lab::PlanLab l(name_, std::get<plan::Plan>(built), binaries(),
                   lab::SonicLayout{plan::SonicRelease::R202405, ""});
    ASSERT_NO_THROW(l.up());
    const plan::Plan& p = l.plan();
    const auto record = lab::labSonicRecord(name_);
    ASSERT_FALSE(record.is_null());

    const auto svi1 = sh("p1-leaf1", {"ip", "-4", "addr", "show", "dev", "Vlan1001"});
    EXPECT_NE(svi1.find("10.128.0.254/24"), std::string::npos) << svi1;
    EXPECT_EQ(svi1.find("10.128.0.1/"), std::string::npos) << svi1;
    const auto svi2 = sh("p2-leaf1", {"ip", "-4", "addr", "show", "dev", "Vlan1001"});
    EXPECT_NE(svi2.find("10.128.0.253/24"), std::string::npos) << svi2;
    EXPECT_EQ(sysctl("p1-leaf1", "Vlan1001", "proxy_arp"), "0");

    auto status = lab::labStatus(name_);
    EXPECT_TRUE(status["healthy"].get<bool>()) << status.dump(2);
    for (const auto& nic : status["nics"]) {
        EXPECT_EQ(nic["bgp"]["established"], 2) << nic.dump();
        EXPECT_EQ(nic["bgp"]["configured"], 2) << nic.dump();
    }
    EXPECT_EQ(pingAllPlanes(name_, p), "");
    EXPECT_TRUE(lab::waitUntil(
        [&] {
            auto t = table10("p1-leaf1");
            return t.count("10.128.0.2") == 1 && t.count("10.128.0.3") == 1;
        },
        5s, 100ms));
    EXPECT_TRUE(lab::waitUntil(
        [&] {
            return redis("p1-leaf1", "6", {"EXISTS", "ADVERTISE_NETWORK_TABLE|10.128.0.2/32"}) ==
                   "1\n";
        },
        5s, 100ms));

    // srv1-nic1's port to p1-leaf1 (the member port, by its plan name) goes down.
    const std::string member = lab::labPortName(record, "p1-leaf1", "swp1");
    const auto down = std::chrono::steady_clock::now();
    lab::failNode(name_, "p1-leaf1:swp1");
    EXPECT_TRUE(
        lab::waitUntil([&] { return table10("p1-leaf1").count("10.128.0.2") == 0; }, 1s, 10ms));
    std::cout << "[figure] routed member port " << member << " down: withdrawn on p1-leaf1 in "
              << std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - down)
                     .count()
              << " ms\n";
    EXPECT_EQ(table10("p1-leaf1").count("10.128.0.3"), 1u) << "the other host stays";
    EXPECT_EQ(table10("p2-leaf1").count("10.128.0.2"), 1u) << "the other plane kept it";
    EXPECT_TRUE(lab::waitUntil(
        [&] {
            return lab::inNodeRun(name_, "srv1-nic1",
                                  {"ping", "-c1", "-W1", "-I", "10.128.0.2", "10.128.0.3"})
                       .rc == 0;
        },
        10s, 200ms))
        << "srv1-nic1 must reach srv2-nic1 through plane 2";
    lab::restoreNode(name_, binaries(), "p1-leaf1:" + member);
    EXPECT_TRUE(
        lab::waitUntil([this] { return lab::labStatus(name_)["healthy"].get<bool>(); }, 30s, 500ms))
        << lab::labStatus(name_).dump(2);
    EXPECT_EQ(pingAllPlanes(name_, p), "") << "after the port came back";
    EXPECT_FALSE(lab::PlanLab::down(name_).empty());
    EXPECT_EQ(leftovers(name_), std::vector<std::string>{});
}

// What no daemon of the lab's SONiC layout would carry out is refused before anything is
// built, naming why: static pins (aclorch's ACL redirects), and ARS (no release has it).
TEST(SonicLabRefusals, PinsAndArsAreRefusedByName) {
    auto attempt = [](plan::Request::Lb lb) -> std::string {
        auto built = plan::buildPlan(lab::defaultLabRequest(plan::Attach::Bond));
        auto p = std::get<plan::Plan>(built);
        p.request.lb = lb;
        try {
            lab::PlanLab l("sncref", p, lab::LabBinaries{}, lab::SonicLayout{});
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_NE(attempt(plan::Request::Lb::Static).find("no aclorch"), std::string::npos);
    EXPECT_NE(attempt(plan::Request::Lb::Ars).find("ARS_PROFILE"), std::string::npos);
    EXPECT_EQ(attempt(plan::Request::Lb::Ecmp), "");
}
