// EVPN multihoming on the lab (`twinrail-lab up --attach evpn-mh`): real FRR EVPN between
// each leaf pair over its AUX link, real hostrouted on every leaf. Every NIC's ARP goes to
// its plane-1 leaf only (an 802.3ad bond sends it out one port), so every /32 in plane 2
// is there through the ES sync alone.
#include <gtest/gtest.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "lab_fixture.h"
#include "twinrail/lab/measure.h"

namespace twinrail::it {
namespace {

using namespace std::chrono_literals;

// "[2026-12-01T19:55:01.123456] ..." (ip -ts) -> seconds since the epoch.
double stampOf(const std::string& line) {
    std::tm tm{};
    if (line.size() < 28 || line[0] != '[') return -1;
    if (strptime(line.substr(1, 19).c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return -1;
    return static_cast<double>(timegm(&tm)) + std::stod("0" + line.substr(20, 7));
}

// The first line of a monitor log that mentions `ip` as its subject, not deleted.
double firstSeen(const std::string& path, const std::string& ip) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        auto at = line.find("] ");
        if (at == std::string::npos || line.find("Deleted") != std::string::npos) continue;
        if (line.compare(at + 2, ip.size() + 1, ip + " ") == 0) return stampOf(line);
    }
    return -1;
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0
                     : v[static_cast<size_t>(std::lround(p * static_cast<double>(v.size() - 1)))];
}

class LabEvpn : public ::testing::Test {
  protected:
    void SetUp() override {
        if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
        lab::PlanLab::down(name_);
        auto built =
            twinrail::plan::buildPlan(lab::defaultLabRequest(twinrail::plan::Attach::EvpnMh));
        ASSERT_TRUE(std::holds_alternative<twinrail::plan::Plan>(built));
        plan_ = std::get<twinrail::plan::Plan>(built);
        std::optional<lab::SonicLayout> layout;
        if (sonic()) layout = lab::SonicLayout{};
        lab_ = std::make_unique<lab::PlanLab>(name_, plan_, binaries(), layout);
        ASSERT_NO_THROW(lab_->up());
    }
    // The layout's names for rail 1's bridge and VXLAN device, and the AUX port.
    virtual bool sonic() const { return false; }
    std::string bridge() const { return sonic() ? "Vlan1001" : "br-rail1"; }
    std::string vxlan() const { return sonic() ? "vtep-1001" : "vx-rail1"; }
    std::string aux() const { return sonic() ? "Ethernet16" : "aux1"; }
    void esPortDownWithdrawsOnThatLeafOnlyAndRestartsWithdrawNothing();
    void TearDown() override {
        lab_.reset();
        lab::PlanLab::down(name_);
        EXPECT_TRUE(leftovers(name_).empty());
    }
    // `argv` in the node's namespace (no shell): its output.
    std::string in(const std::string& node, const lab::Argv& argv) const {
        return lab::inNodeRun(name_, node, argv).out;
    }
    // ping's "N received", as `grep -o "[0-9]* received"` printed it.
    static std::string received(const std::string& pingOut) {
        static const std::regex kReceived("[0-9]+ received");
        std::smatch m;
        return std::regex_search(pingOut, m, kReceived) ? m.str() + "\n" : "";
    }
    // The plan binds each NIC's address to its leaf (issue 18): the addresses a test adds
    // on its own are bound the way an operator would, in the leaf's config_db.json and a
    // SIGHUP, like the NIC's planned address (same bridge, same ES bond behind it).
    void bindLike(const std::string& leaf, const std::string& planned,
                  const std::vector<std::string>& ips, const std::string& port = "same") const {
        const std::string dir = lab::PlanLab::stateDir(name_) + "/" + leaf;
        nlohmann::json db;
        std::ifstream(dir + "/config_db.json") >> db;
        auto row = db["HOSTROUTED_BINDING"][planned];
        if (port != "same") row["port"] = port;
        if (row.contains("port") && row["port"] == "") row.erase("port");
        for (const auto& ip : ips) db["HOSTROUTED_BINDING"][ip] = row;
        std::ofstream(dir + "/config_db.json") << db.dump(2);
        const size_t want = db["HOSTROUTED_BINDING"].size();
        std::string pid;
        std::ifstream(dir + "/hostrouted.pid") >> pid;
        ::kill(std::stoi(pid), SIGHUP);
        const std::string line = "bindings: " + std::to_string(want) + " host addresses";
        EXPECT_TRUE(lab::waitUntil(
            [&] {
                return contains(in(leaf, {"cat", dir + "/hostrouted.log"}), line);
            },
            5s, 20ms))
            << leaf << ": no reload with " << line;
    }
    // The leaf's kernel can deliver to `ip` on the rail's bridge: a resolved entry that is
    // not a remote VTEP's. On a kernel that refuses zebra's peer-sync install (EINVAL,
    // EVPN-MH-FACTS.md 4) that is hostrouted's static entry (PERMANENT, proto 201); where
    // zebra's own install or the kernel's own resolution got there first, hostrouted leaves
    // that usable entry alone (evpn_mh.cpp) and it is the one that forwards.
    bool forwardsTo(const std::string& leaf, const std::string& ip) const {
        auto out = in(leaf, {"ip", "-d", "neigh", "show", "dev", bridge(), ip});
        if (out.empty() || contains(out, "extern_learn") || contains(out, "FAILED") ||
            contains(out, "INCOMPLETE")) {
            return false;
        }
        for (const char* state : {"PERMANENT", "REACHABLE", "STALE", "DELAY", "PROBE"})
            if (contains(out, state)) return true;
        return false;
    }
    bool routed(const std::string& leaf, const std::string& ip) const {
        return contains(in(leaf, {"ip", "route", "show", "table", "10", ip + "/32"}), ip);
    }
    bool inPlane(const std::string& spine, const std::string& ip) const {
        return contains(in(spine, {"ip", "route", "show", ip + "/32"}), ip);
    }
    static bool contains(const std::string& s, const std::string& what) {
        return s.find(what) != std::string::npos;
    }
    // `ip -ts monitor` in a node, logging to a file of the lab's (ended by `down`).
    std::string monitor(const std::string& node, const std::string& what) const {
        std::string path = lab::PlanLab::stateDir(name_) + "/" + node + "-" + what + ".mon";
        lab::spawnDetached(
            lab::inNamespace(lab::PlanLab::nsPrefix(name_) + node, {"ip", "-ts", "monitor", what}),
            path);
        return path;
    }
    std::string stat(const std::string& leaf, const std::string& field) const {
        auto r =
            in(leaf, {"redis-cli", "-s", lab::PlanLab::stateDir(name_) + "/" + leaf + "/redis.sock",
                      "-n", "6", "HGET", "HOST_ROUTE_STATS|global", field});
        return r.empty() ? "" : r.substr(0, r.size() - 1);
    }

    std::string name_ = labName("e");
    twinrail::plan::Plan plan_;
    std::unique_ptr<lab::PlanLab> lab_;
};

// srv1-nic1 is 10.128.0.2 on ES 1 of p1-leaf1/p2-leaf1.
TEST_F(LabEvpn, PeerLearnedHostsAreRoutedInBothPlanesAndRemoteVtepHostsNever) {
    // Both planes deliver to every NIC, though only plane 1's leaves got their ARP.
    EXPECT_EQ(pingEachPlane(name_, plan_), "");
    EXPECT_TRUE(forwardsTo("p2-leaf1", "10.128.0.2"))
        << in("p2-leaf1", {"ip", "-d", "neigh", "show", "dev", "br-rail1"});
    EXPECT_TRUE(inPlane("p2-spine1", "10.128.0.2"));

    // Sync latency: a new address on srv1-nic1 ARPs to p1-leaf1; from that ARP's arrival
    // (p1-leaf1's neighbor event) to the /32 in p2-leaf1's table 10 (its route event).
    auto neighLog = monitor("p1-leaf1", "neigh");
    auto routeLog1 = monitor("p1-leaf1", "route");
    auto routeLog2 = monitor("p2-leaf1", "route");
    std::this_thread::sleep_for(300ms);  // the monitors are listening
    std::vector<double> sync, own;
    const int kTrials = 30;
    std::vector<std::string> added;
    added.reserve(kTrials);
    for (int i = 0; i < kTrials; ++i) added.push_back("10.128.0." + std::to_string(100 + i));
    for (const char* leaf : {"p1-leaf1", "p2-leaf1"}) bindLike(leaf, "10.128.0.2", added);
    for (int i = 0; i < kTrials; ++i) {
        std::string ip = "10.128.0." + std::to_string(100 + i);
        in("srv1-nic1", {"ip", "addr", "add", ip + "/24", "dev", "bond0"});
        in("srv1-nic1", {binaries().self, "announce", "bond0", ip, "10.128.0.1"});
        ASSERT_TRUE(lab::waitUntil([&] { return routed("p2-leaf1", ip); }, 5s, 10ms))
            << ip << " not synced to p2-leaf1 within 5 s";
    }
    std::this_thread::sleep_for(200ms);
    for (int i = 0; i < kTrials; ++i) {
        std::string ip = "10.128.0." + std::to_string(100 + i);
        double arp = firstSeen(neighLog, ip), r1 = firstSeen(routeLog1, ip),
               r2 = firstSeen(routeLog2, ip);
        ASSERT_GT(arp, 0) << ip;
        ASSERT_GT(r2, 0) << ip;
        sync.push_back((r2 - arp) * 1000);
        if (r1 > 0) own.push_back((r1 - arp) * 1000);
    }
    std::cout << "[figure] ES sync, ARP on p1-leaf1 -> /32 in p2-leaf1 table 10 (" << kTrials
              << " trials): p50 " << percentile(sync, 0.5) << " ms, p99 " << percentile(sync, 0.99)
              << " ms, max " << percentile(sync, 1) << " ms; p1-leaf1's own /32: p50 "
              << percentile(own, 0.5) << " ms\n";
    std::cout << "[figure] p2-leaf1 EVPN reads: last " << stat("p2-leaf1", "evpn_poll_ms")
              << " ms, max " << stat("p2-leaf1", "evpn_poll_ms_max") << " ms, "
              << stat("p2-leaf1", "evpn_polls") << " reads, "
              << stat("p2-leaf1", "evpn_poll_errors") << " errors\n";

    // A single-homed host on p2-leaf1 only (a plain bridge port, no ES): p2-leaf1 routes
    // it; p1-leaf1 holds it as a remote VTEP's (extern_learn) and never routes it.
    const std::string sh = lab::PlanLab::nsPrefix(name_) + "sh1";
    ASSERT_EQ(lab::runAll({{"ip", "netns", "add", sh},
                           {"ip", "link", "add", "shv0", "type", "veth", "peer", "name", "shv1"},
                           {"ip", "link", "set", "shv0", "netns", sh},
                           {"ip", "link", "set", "shv1", "netns",
                            lab::PlanLab::nsPrefix(name_) + "p2-leaf1"}})
                  .rc,
              0);
    lab::inNodeAll(name_, "p2-leaf1",
                   {{"ip", "link", "set", "shv1", "name", "swp9"},
                    {"ip", "link", "set", "swp9", "master", "br-rail1"},
                    {"ip", "link", "set", "swp9", "up"}});
    // Bound on both leaves' rail bridge, behind no ES (p1-leaf1 still never routes it).
    for (const char* leaf : {"p1-leaf1", "p2-leaf1"})
        bindLike(leaf, "10.128.0.2", {"10.128.0.50"}, "");
    lab::runAll(
        {lab::inNamespace(sh, {"ip", "link", "set", "lo", "up"}),
         lab::inNamespace(sh, {"ip", "link", "set", "shv0", "address", "02:00:00:00:00:50"}),
         lab::inNamespace(sh, {"ip", "link", "set", "shv0", "up"}),
         lab::inNamespace(sh, {"ip", "addr", "add", "10.128.0.50/24", "dev", "shv0"}),
         lab::inNamespace(sh, {"ping", "-c2", "-W1", "10.128.0.1"})},
        false);
    EXPECT_TRUE(lab::waitUntil([&] { return routed("p2-leaf1", "10.128.0.50"); }, 5s, 20ms));
    ASSERT_TRUE(lab::waitUntil(
        [&] {
            return contains(in("p1-leaf1", {"ip", "neigh", "show", "10.128.0.50"}), "extern_learn");
        },
        10s, 50ms))
        << in("p1-leaf1", {"ip", "neigh", "show", "dev", "br-rail1"});
    std::this_thread::sleep_for(1s);  // ten EVPN reads on p1-leaf1
    EXPECT_FALSE(routed("p1-leaf1", "10.128.0.50"));
    EXPECT_TRUE(contains(
        in("p1-leaf1",
           {"grep", "10.128.0.50", lab::PlanLab::stateDir(name_) + "/p1-leaf1/hostrouted.log"}),
        "not routed, behind"));
    EXPECT_TRUE(inPlane("p2-spine1", "10.128.0.50"));
    EXPECT_FALSE(inPlane("p1-spine1", "10.128.0.50"));
}

// The same on SONiC's layout (`--nos sonic`): the segments are PortChannels in the rail's
// VLAN, the VXLAN device vtep-<VLAN id>, the AUX link the SKU's spare port.
class SonicLabEvpn : public LabEvpn {
  protected:
    bool sonic() const override { return true; }
};

TEST_F(LabEvpn, EsPortDownWithdrawsOnThatLeafOnlyAndRestartsWithdrawNothing) {
    esPortDownWithdrawsOnThatLeafOnlyAndRestartsWithdrawNothing();
}

TEST_F(SonicLabEvpn, EsPortDownWithdrawsOnThatLeafOnlyAndRestartsWithdrawNothing) {
    // Every NIC port seen where the plan cables it, behind its segment (twinrail verify).
    // A BGP session that resets once at start (seen in CI on p2-spine2) is back within a few
    // seconds; what this checks is where each NIC port is seen.
    lab::ShellResult verify;
    lab::waitUntil(
        [&] {
            verify =
                lab::runAll({{binaries().twinrail, "verify", "--lab", name_, "--json"}}, false);
            return verify.rc == 0;
        },
        10s, 1s);
    EXPECT_EQ(verify.rc, 0) << verify.out;
    esPortDownWithdrawsOnThatLeafOnlyAndRestartsWithdrawNothing();
}

void LabEvpn::esPortDownWithdrawsOnThatLeafOnlyAndRestartsWithdrawNothing() {
    ASSERT_TRUE(routed("p1-leaf1", "10.128.0.2"));
    ASSERT_TRUE(routed("p2-leaf1", "10.128.0.2"));
    // srv1-nic1's port to p1-leaf1 fails under traffic within the rail, both ways: no flow
    // is lost for good (the leaf's ES port loses its carrier; the bridge's detour takes
    // over in p1-leaf1, the NIC's bond moves to port2).
    // First the bridge announces its own view of its VXLAN port (AF_BRIDGE link messages,
    // as it does on any port flag change): it must not blind hostrouted to that port.
    in("p1-leaf1", {"bridge", "link", "set", "dev", vxlan(), "neigh_suppress", "on"});
    auto reports = lab::measureDuring(
        name_, binaries(), {{"srv2-nic1", "srv1-nic1"}},
        [this] { lab::failNode(name_, "srv1-nic1:port1"); }, 6);
    std::cout << lab::describeMeasurement(reports);
    for (const auto& r : reports) EXPECT_EQ(r.value("flows_not_recovered", -1), 0) << r.dump();
    EXPECT_TRUE(lab::waitUntil([&] { return !routed("p1-leaf1", "10.128.0.2"); }, 3s, 10ms));
    EXPECT_TRUE(lab::waitUntil([&] { return !inPlane("p1-spine1", "10.128.0.2"); }, 5s, 20ms));
    EXPECT_TRUE(routed("p1-leaf1", "10.128.0.3"))  // the other segment's host stays
        << in("p1-leaf1", {"ip", "-d", "neigh", "show", "dev", bridge()})
        << in("p1-leaf1",
              {"tail", "-n", "60", lab::PlanLab::stateDir(name_) + "/p1-leaf1/hostrouted.log"});
    // Nor was it ever withdrawn for silence: its answers to p1-leaf1's probes reach
    // p2-leaf1 (same gateway MAC), and FRR's view, read slowly through SONiC's bgp
    // container, is its proof of life here.
    EXPECT_EQ(stat("p1-leaf1", "expired"), "0");
    // p2-leaf1 keeps it, beyond two holdtimes (6 s) since the failure, 4 s into the
    // measurement: it now answers p2-leaf1's probes.
    std::this_thread::sleep_for(3s);
    EXPECT_TRUE(routed("p2-leaf1", "10.128.0.2"));
    EXPECT_TRUE(inPlane("p2-spine1", "10.128.0.2"));
    EXPECT_FALSE(routed("p1-leaf1", "10.128.0.2"));
    // Traffic to it continues, from another rail, sent into either plane: plane 2 delivers
    // it, and what plane 1 still carries (through the rail subnet's route to p1-leaf1) is
    // detoured over the AUX link to p2-leaf1.
    EXPECT_TRUE(contains(in("p1-leaf1", {"ip", "route", "show", "table", "990"}),
                         "10.128.0.2 via 10.253.0.1"));
    for (const char* port : {"port1", "port2"}) {
        in("srv1-nic2",
           {"tc",       "filter", "add",      "dev",   "bond0", "egress", "pref",          "5",
            "protocol", "ip",     "u32",      "match", "ip",    "dst",    "10.128.0.2/32", "action",
            "mirred",   "egress", "redirect", "dev",   port});
        auto auxBefore = std::stoull(
            in("p2-leaf1", {"cat", "/sys/class/net/" + aux() + "/statistics/rx_packets"}));
        auto p = received(
            in("srv1-nic2", {"ping", "-c5", "-i0.2", "-W1", "-I", "10.128.1.2", "10.128.0.2"}));
        auto viaAux = std::stoull(in("p2-leaf1", {"cat", "/sys/class/net/" + aux() +
                                                             "/statistics/rx_packets"})) -
                      auxBefore;
        in("srv1-nic2", {"tc", "filter", "del", "dev", "bond0", "egress", "pref", "5"});
        std::cout << "[figure] srv1-nic2 -> srv1-nic1 sent into plane " << port[4]
                  << ", its plane-1 port down: " << p.substr(0, p.size() - 1) << " of 5, " << viaAux
                  << " packets over the AUX link\n";
        EXPECT_TRUE(contains(p, "5 received")) << port << ": " << p;
        if (std::string(port) == "port1") {
            EXPECT_GE(viaAux, 5u);
        }
    }
    // And within the rail (bridged): srv2-nic1's frames into p1-leaf1 go to its VXLAN port
    // for the host's MAC, and so to p2-leaf1.
    EXPECT_TRUE(
        contains(in("p1-leaf1", {"bridge", "fdb", "show", "dev", vxlan()}), "02:00:0a:80:00:02"));
    in("srv2-nic1",
       {"tc",       "filter", "add",      "dev",   "bond0", "egress", "pref",          "5",
        "protocol", "ip",     "u32",      "match", "ip",    "dst",    "10.128.0.2/32", "action",
        "mirred",   "egress", "redirect", "dev",   "port1"});
    auto bridged = received(
        in("srv2-nic1", {"ping", "-c5", "-i0.2", "-W1", "-I", "10.128.0.3", "10.128.0.2"}));
    in("srv2-nic1", {"tc", "filter", "del", "dev", "bond0", "egress", "pref", "5"});
    std::cout << "[figure] srv2-nic1 -> srv1-nic1 into p1-leaf1's bridge: " << bridged;
    EXPECT_TRUE(contains(bridged, "5 received")) << bridged;
    EXPECT_TRUE(contains(in("p1-leaf1", {"bridge", "fdb", "show", "dev", vxlan()}),
                         "02:00:0a:80:00:02 sticky"));
    lab::restoreNode(name_, binaries(), "srv1-nic1:port1");
    EXPECT_TRUE(lab::waitUntil([&] { return routed("p1-leaf1", "10.128.0.2"); }, 10s, 20ms))
        << in("p1-leaf1", {"ip", "neigh", "show", "dev", bridge()});
    EXPECT_TRUE(lab::waitUntil(
        [&] {
            return !contains(in("p1-leaf1", {"ip", "route", "show", "table", "990"}), "10.128.0.2");
        },
        3s, 20ms));
    EXPECT_FALSE(
        contains(in("p1-leaf1", {"bridge", "fdb", "show", "dev", vxlan()}), "02:00:0a:80:00:02"));

    // hostrouted restarts on either leaf: not one host route is deleted meanwhile.
    auto log1 = monitor("p1-leaf1", "route");
    auto log2 = monitor("p2-leaf1", "route");
    std::this_thread::sleep_for(300ms);
    for (const char* leaf : {"p1-leaf1", "p2-leaf1"}) {
        ASSERT_TRUE(lab::stopService(name_, leaf, lab::Service::Hostrouted, SIGTERM));
        std::this_thread::sleep_for(1s);
        lab::startService(name_, binaries(), leaf, lab::Service::Hostrouted);
    }
    std::this_thread::sleep_for(3s);
    for (const auto& path : {log1, log2}) {
        std::ifstream f(path);
        std::stringstream s;
        s << f.rdbuf();
        EXPECT_FALSE(contains(s.str(), "Deleted 10.128.0.")) << path << ":\n" << s.str();
    }
    for (const char* ip : {"10.128.0.2", "10.128.0.3"}) {
        EXPECT_TRUE(routed("p1-leaf1", ip));
        EXPECT_TRUE(routed("p2-leaf1", ip));
    }
    EXPECT_TRUE(forwardsTo("p2-leaf1", "10.128.0.2"))
        << in("p2-leaf1", {"ip", "-d", "neigh", "show", "dev", bridge()});
}

}  // namespace
}  // namespace twinrail::it
