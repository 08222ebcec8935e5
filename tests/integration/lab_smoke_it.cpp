// The lab as CI runs it, in both attachments. Routed: up (after a simulated crash left
// debris), every NIC reaches every other NIC through each plane, a leaf fails under
// traffic and every flow carries on through the other plane, the leaf returns, its FRR
// crashes and its hosts return by themselves, down leaves nothing behind. Bond (the
// seed's design, the default): no routing protocol on any host, reachability through each
// plane, both leaves keep every host for 10 holdtimes, a NIC port fails under traffic, and
// twinrail verify finds a swapped cable.
#include <gtest/gtest.h>

#include <unistd.h>
#include <regex>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "lab_fixture.h"
#include "twinrail/lab/lab_status.h"
#include "twinrail/lab/measure.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/shell.h"

namespace lab = twinrail::lab;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

using twinrail::it::binaries;
using twinrail::it::leftovers;
using twinrail::it::pingAllPlanes;
using twinrail::it::pingEachPlane;

class LabSmoke : public twinrail::it::LabTest {};

}  // namespace

TEST_F(LabSmoke, RoutedUpReachFailALeafRestoreDown) {
    // Debris of a crashed run: a namespace and a state directory of the same name.
    lab::runOk({"ip", "netns", "add", lab::PlanLab::nsPrefix(name_) + "p1-leaf1"});
    fs::create_directories(lab::PlanLab::stateDir(name_) + "/p1-leaf1");

    auto request = lab::defaultLabRequest();
    request.attach = twinrail::plan::Attach::Routed;
    auto built = twinrail::plan::buildPlan(request);
    ASSERT_TRUE(std::holds_alternative<twinrail::plan::Plan>(built));
    lab::PlanLab l(name_, std::get<twinrail::plan::Plan>(built), binaries());
    ASSERT_NO_THROW(l.up());

    auto status = lab::labStatus(name_);
    EXPECT_TRUE(status["healthy"].get<bool>()) << status.dump(2);
    for (const auto& sw : status["switches"]) {
        if (sw["role"] == "leaf") {
            EXPECT_EQ(sw["host_routes"], 2) << sw.dump();
        }
    }
    EXPECT_EQ(pingAllPlanes(name_, l.plan()), "") << "unreachable out of these ports";
    // Every lab port keeps each flow on one CPU, as a NIC's RSS does (Fabric::link): both
    // ends, in the namespaces the ports moved to.
    for (const char* node : {"p1-leaf1", "p1-spine1", "srv1-nic1"}) {
        std::istringstream devices(lab::inNodeRun(name_, node, {"ls", "/sys/class/net"}).out);
        int ports = 0;
        for (std::string dev; devices >> dev;) {
            if (dev == "lo") continue;
            ++ports;
            auto mask = lab::inNodeRun(name_, node,
                                       {"cat", "/sys/class/net/" + dev + "/queues/rx-0/rps_cpus"})
                            .out;
            EXPECT_NE(mask.find_first_not_of("0,\n"), std::string::npos)
                << node << " " << dev << ": no RPS (" << mask << ")";
        }
        EXPECT_GE(ports, 2) << node;
    }

    // p1-leaf1 carries rail 1 of plane 1: srv1-nic1 and srv2-nic1 hang off it.
    const std::vector<lab::FlowPair> pairs{
        {"srv1-nic2", "srv1-nic1"}, {"srv1-nic1", "srv1-nic2"}, {"srv2-nic1", "srv1-nic1"}};
    auto reports = lab::measureDuring(
        name_, binaries(), pairs, [this] { lab::failNode(name_, "p1-leaf1"); }, 6);
    std::cout << lab::describeMeasurement(reports);
    for (const auto& r : reports) {
        ASSERT_FALSE(r.contains("error")) << r.dump();
        EXPECT_EQ(r["flows"], 16u) << r["pair"];
        EXPECT_EQ(r["flows_not_recovered"], 0)
            << r["pair"] << ": a flow stayed on the failed plane";
    }
    // The failed plane is gone for rail 1; plane 2 still reaches everyone.
    status = lab::labStatus(name_);
    for (const auto& n : status["nics"]) EXPECT_EQ(n["peers_unreachable"], 0) << n.dump();

    lab::restoreNode(name_, binaries(), "p1-leaf1");
    EXPECT_TRUE(
        lab::waitUntil([this] { return lab::labStatus(name_)["healthy"].get<bool>(); }, 60s, 1s))
        << lab::labStatus(name_).dump(2);
    EXPECT_EQ(pingAllPlanes(name_, l.plan()), "") << "after the leaf came back";

    // Its FRR crashes (zebra and bgpd killed, started again as watchfrr would): zebra's
    // restart drops the fabric routes, the host-port hold takes the host ports down and
    // raises them once the routes are back. Its hosts return by themselves, no NIC
    // announcing anything: they answer hostrouted's probes, which the kernel never
    // learns from, and no later neighbor dump may take them away again.
    auto hostRoutes = [this] {
        const auto now = lab::labStatus(name_);  // a local: the loop runs over a part of it
        for (const auto& sw : now["switches"])
            if (sw["name"] == "p1-leaf1") return sw.value("host_routes", -1);
        return -1;
    };
    lab::restartFrr(name_, "p1-leaf1", lab::FrrRestart::Kill);
    std::this_thread::sleep_for(10s);  // past the hold's release (about 6 s)
    EXPECT_TRUE(lab::waitUntil([&] { return hostRoutes() == 2; }, 60s, 500ms))
        << "p1-leaf1 after its FRR crashed: " << hostRoutes() << " host routes\n"
        << lab::inNodeRun(
               name_, "p1-leaf1",
               {"tail", "-n", "30", lab::PlanLab::stateDir(name_) + "/p1-leaf1/hostrouted.log"})
               .out;
    std::this_thread::sleep_for(5s);  // and they stay (the next dumps keep them)
    EXPECT_EQ(hostRoutes(), 2);
    EXPECT_EQ(pingAllPlanes(name_, l.plan()), "") << "after the leaf's FRR crashed";

    // The operator CLI against a leaf's and a spine's Redis: table, JSON, and a stopped daemon.
    auto cli = [this](const std::string& node, const lab::Argv& args) {
        lab::Argv argv{TWINRAIL_BIN, "--redis-socket",
                       lab::PlanLab::stateDir(name_) + "/" + node + "/redis.sock"};
        argv.insert(argv.end(), args.begin(), args.end());
        return lab::run(argv);
    };
    auto table = cli("p1-leaf1", {"show", "host-routes", "--family", "4"});
    EXPECT_EQ(table.rc, 0) << table.err;
    EXPECT_NE(table.out.find("10.128.0.2 "), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("10.128.0.3 "), std::string::npos) << table.out;
    auto rows = nlohmann::json::parse(
        cli("p1-leaf1", {"--json", "show", "host-routes", "--interface", "swp1"}).out, nullptr,
        false);
    ASSERT_TRUE(rows.is_array());
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0]["host"], "10.128.0.2");
    auto ports = nlohmann::json::parse(cli("p1-spine2", {"--json", "show", "path-quality"}).out,
                                       nullptr, false);
    ASSERT_TRUE(ports.is_array());
    EXPECT_EQ(ports.size(), 2u);
    lab::inNodeRun(name_, "p1-spine2", {"pkill", "-x", "pathqd"});
    EXPECT_TRUE(lab::waitUntil(
        [&cli] {
            return cli("p1-spine2", {"show", "path-quality"}).rc == 3;
        },
        20s, 1s))
        << "a stopped pathqd must give exit 3 once its state is 10 s old";
    EXPECT_NE(cli("p1-spine2", {"show", "path-quality"}).err.find("not running"),
              std::string::npos);

    auto removed = lab::PlanLab::down(name_);
    EXPECT_FALSE(removed.empty());
    EXPECT_EQ(leftovers(name_), std::vector<std::string>{});
}

TEST_F(LabSmoke, BondedNicsThroughBothPlanesNoFlapPortFailVerifyDown) {
    auto built = twinrail::plan::buildPlan(lab::defaultLabRequest());  // attach bond
    ASSERT_TRUE(std::holds_alternative<twinrail::plan::Plan>(built));
    const auto& plan = std::get<twinrail::plan::Plan>(built);
    ASSERT_EQ(plan.request.attach, twinrail::plan::Attach::Bond);
    lab::PlanLab l(name_, plan, binaries());
    ASSERT_NO_THROW(l.up());
    auto status = lab::labStatus(name_);
    EXPECT_TRUE(status["healthy"].get<bool>()) << status.dump(2);
    // No routing protocol on any host: nothing but the bond agent in a NIC's namespace.
    for (const auto& srv : plan.servers) {
        for (const auto& nic : srv.nics) {
            std::string procs;
            std::istringstream pids(
                lab::run({"ip", "netns", "pids",
                          lab::PlanLab::nsPrefix(name_) + lab::PlanLab::nicNode(srv, nic)})
                    .out);
            for (std::string pid; pids >> pid;) {
                std::ifstream comm("/proc/" + pid + "/comm");
                procs += std::string(std::istreambuf_iterator<char>(comm), {});
            }
            EXPECT_EQ(procs.find("bgpd"), std::string::npos) << procs;
            EXPECT_EQ(procs.find("zebra"), std::string::npos) << procs;
        }
    }
    EXPECT_EQ(pingEachPlane(name_, l.plan()), "");

    // Both leaves keep every host, without a single withdrawal, for 10 holdtimes (the lab
    // runs hostrouted with keepalive 1 s, holdtime 3 s).
    const std::map<std::string, std::set<std::string>> want{
        {"p1-leaf1", {"10.128.0.2", "10.128.0.3"}},
        {"p2-leaf1", {"10.128.0.2", "10.128.0.3"}},
        {"p1-leaf2", {"10.128.1.2", "10.128.1.3"}},
        {"p2-leaf2", {"10.128.1.2", "10.128.1.3"}}};
    auto stat = [this](const std::string& leaf, const std::string& field) {
        return redis(leaf, "6", {"HGET", "HOST_ROUTE_STATS|global", field});
    };
    std::map<std::string, std::string> withdrawnBefore;
    for (const auto& [leaf, hosts] : want) withdrawnBefore[leaf] = stat(leaf, "withdrawn");
    int samples = 0, misses = 0;
    for (auto until = std::chrono::steady_clock::now() + 30s;
         std::chrono::steady_clock::now() < until;) {
        for (const auto& [leaf, hosts] : want) misses += table10(leaf) != hosts;
        ++samples;
        std::this_thread::sleep_for(1s);
    }
    EXPECT_EQ(misses, 0) << "of " << samples << " samples per leaf";
    for (const auto& [leaf, hosts] : want)
        EXPECT_EQ(stat(leaf, "withdrawn"), withdrawnBefore[leaf]) << leaf << " withdrew a host";

    // A NIC port fails under traffic: its leaf withdraws the host at once, the other leaf
    // keeps it, and the bond moves the NIC's own flows to the other port (a remote bonded
    // sender's flows into the failed plane are the design's gap: the failure matrix).
    auto reports = lab::measureDuring(
        name_, binaries(), {{"srv1-nic1", "srv2-nic1"}},
        [this] {
            lab::failNode(name_, "srv1-nic1:port1");
            EXPECT_TRUE(lab::waitUntil(
                [this] { return table10("p1-leaf1").count("10.128.0.2") == 0; }, 1s, 20ms))
                << "p1-leaf1 kept the host of a port that is down";
        },
        6);
    std::cout << lab::describeMeasurement(reports);
    ASSERT_FALSE(reports[0].contains("error")) << reports[0].dump();
    EXPECT_EQ(reports[0]["flows_not_recovered"], 0) << "the bond did not move its flows";
    EXPECT_LT(reports[0]["max_gap_ms"].get<double>(), 500) << reports[0].dump();
    EXPECT_EQ(table10("p2-leaf1").count("10.128.0.2"), 1u) << "p2-leaf1 lost the host";
    lab::restoreNode(name_, binaries(), "srv1-nic1:port1");
    EXPECT_TRUE(lab::waitUntil([this] { return lab::labStatus(name_)["healthy"].get<bool>(); }, 30s,
                               500ms));

    // The gap, closed: with planesteer on the NICs, a remote sender's flows into the plane
    // that lost the host come back (pinned to the other plane) instead of dying there:
    // from the same rail (ARP probes, answered by the leaves' proxy ARP) and from another
    // rail (echo probes through the gateway, the peer learned from sampled traffic).
    lab::startPlaneSteers(name_, plan, PLANESTEER_BIN);
    auto counter = [&stat](const char* leaf, const char* field) {
        auto v = stat(leaf, field);
        return v.empty() ? -1L : std::stol(v);
    };
    const long eventsBefore = counter("p1-leaf1", "notice_events");
    const long relayedBefore = counter("p1-leaf2", "notice_relayed");
    auto steered = lab::measureDuring(
        name_, binaries(), {{"srv2-nic1", "srv1-nic1"}, {"srv1-nic2", "srv1-nic1"}},
        [this] { lab::failNode(name_, "srv1-nic1:port1"); }, 6);
    std::cout << lab::describeMeasurement(steered);
    for (const auto& r : steered) {
        ASSERT_FALSE(r.contains("error")) << r.dump();
        EXPECT_EQ(r["flows_not_recovered"], 0) << "planesteer did not move the peer: " << r.dump();
    }
    // Fast notices (issue 34): p1-leaf1 told srv2-nic1 (a server on it) at once, and
    // p1-leaf2 passed it on to srv1-nic2; each planesteer moved srv1-nic1 off plane 1 on
    // that notice, before any of its probes could miss.
    for (const char* nic : {"srv2-nic1", "srv1-nic2"}) {
        auto log =
            lab::run({"cat", lab::PlanLab::stateDir(name_) + "/" + nic + "/planesteer.log"}).out;
        std::regex moved(
            "host-port-down from 10\\.254\\.0\\.[12] plane 1 .*subjects "
            "10\\.128\\.0\\.2/32: [1-9][0-9]* peer\\(s\\) off port1");
        EXPECT_TRUE(std::regex_search(log, moved)) << nic << " moved nobody on a notice:\n" << log;
    }
    // Once each (STATE_DB's stats row is rewritten every few seconds).
    EXPECT_TRUE(lab::waitUntil(
        [&] {
            return counter("p1-leaf1", "notice_events") == eventsBefore + 1 &&
                   counter("p1-leaf2", "notice_relayed") == relayedBefore + 1;
        },
        15s, 500ms))
        << "p1-leaf1 notice_events " << eventsBefore << " -> "
        << counter("p1-leaf1", "notice_events") << ", p1-leaf2 notice_relayed " << relayedBefore
        << " -> " << counter("p1-leaf2", "notice_relayed");
    lab::restoreNode(name_, binaries(), "srv1-nic1:port1");
    EXPECT_TRUE(lab::waitUntil([this] { return lab::labStatus(name_)["healthy"].get<bool>(); }, 30s,
                               500ms));

    // twinrail verify: healthy, then it names exactly the two ports of a swapped cable.
    auto verify = [this] {
        auto r = lab::run({TWINRAIL_BIN, "--json", "verify", "--lab", name_});
        return std::pair{r.rc, nlohmann::json::parse(r.out, nullptr, false)};
    };
    EXPECT_TRUE(lab::waitUntil([&verify] { return verify().first == 0; }, 30s, 1s))
        << verify().second.dump(2);
    lab::swapNicCables(name_, binaries(), "srv1-nic1:port1", "srv2-nic1:port1");
    // The leaf refuses each NIC where the other is bound (issue 18): verify reads the
    // refused claims as where the cables end.
    const std::set<std::string> swapped{"srv1-nic1:port1 miscabled p1-leaf1:swp2 (refused)",
                                        "srv2-nic1:port1 miscabled p1-leaf1:swp1 (refused)"};
    std::set<std::string> wrong;
    EXPECT_TRUE(lab::waitUntil(
        [&verify, &wrong, &swapped] {
            auto [rc, j] = verify();
            wrong.clear();
            for (const auto& p : j["nic_ports"]) {
                if (p["status"] != "ok")
                    wrong.insert(p["server"].get<std::string>() + "-" +
                                 p["nic"].get<std::string>() + ":" + p["port"].get<std::string>() +
                                 " " + p["status"].get<std::string>() + " " +
                                 p["seen_on"].get<std::string>());
            }
            return rc == 69 && wrong == swapped;  // until both hosts are learned again
        },
        20s, 1s));
    EXPECT_EQ(wrong, swapped);
    lab::swapNicCables(name_, binaries(), "srv1-nic1:port1", "srv2-nic1:port1");
    EXPECT_TRUE(lab::waitUntil([&verify] { return verify().first == 0; }, 30s, 1s))
        << verify().second.dump(2);

    // Issue 18: srv2-nic1 claims srv1-nic1's address (ARP requests and gratuitous ARP with
    // its own MAC) on its own plane-1 port (p1-leaf1:swp2), and p1-spine1 does the same
    // toward p1-leaf1's uplink, under traffic to the victim. The victim's /32 stays on its
    // port and in the plane, no flow is lost, and the claim is in STATE_DB and verify.
    const std::string victim = "10.128.0.2", gateway = "10.128.0.1";
    std::string spinePort;
    for (const auto& sw : plan.switches) {
        for (const auto& p : sw.ports)
            if (sw.name == "p1-spine1" && p.peer == "p1-leaf1") spinePort = p.name;
    }
    auto announce = [this](const std::string& node, const std::string& dev, const std::string& src,
                           const std::string& dst, const std::string& op = "") {
        lab::Argv argv{TWINRAIL_LAB_BIN, "announce", dev, src, dst};
        if (!op.empty()) argv.push_back(op);
        return lab::inNodeRun(name_, node, argv).rc;
    };
    auto routeOn = [this](const std::string& leaf, const std::string& ip) {
        return sh(leaf, {"ip", "-o", "route", "show", "table", "10", ip});
    };
    auto inPlane = [this, &victim] {
        return !sh("p1-leaf2", {"ip", "-o", "route", "show", victim}).empty();
    };
    ASSERT_NE(routeOn("p1-leaf1", victim).find("dev swp1"), std::string::npos);
    int planeMisses = 0;
    auto attacked = lab::measureDuring(
        name_, binaries(), {{"srv2-nic2", "srv1-nic1"}, {"srv1-nic2", "srv1-nic1"}},
        [&] {
            for (int i = 0; i < 3; ++i) {
                EXPECT_EQ(announce("srv2-nic1", "port1", victim, gateway), 0);
                EXPECT_EQ(announce("srv2-nic1", "port1", victim, victim), 0);  // gratuitous
                EXPECT_EQ(announce("srv2-nic1", "port1", victim, gateway, "reply"), 0);
                if (!spinePort.empty()) announce("p1-spine1", spinePort, victim, gateway);
                std::this_thread::sleep_for(300ms);
            }
            for (int i = 0; i < 8; ++i) {  // the old failure came a few seconds later
                planeMisses +=
                    !inPlane() || routeOn("p1-leaf1", victim).find("dev swp1") == std::string::npos;
                std::this_thread::sleep_for(500ms);
            }
        },
        6);
    std::cout << lab::describeMeasurement(attacked);
    for (const auto& r : attacked) {
        ASSERT_FALSE(r.contains("error")) << r.dump();
        EXPECT_EQ(r["flows_not_recovered"], 0) << r.dump();
        EXPECT_LT(r["max_gap_ms"].get<double>(), 200)
            << "a flow to the victim stalled: " << r.dump();
    }
    EXPECT_EQ(planeMisses, 0) << "the victim's /32 left its port or plane 1";
    EXPECT_EQ(sh("p1-leaf1", {"ip", "neigh", "show", victim, "dev", "swp2"}), "")
        << "the kernel guard let the spoofed entry in";
    auto claim = redis("p1-leaf1", "6", {"HGET", "HOST_CLAIM_TABLE|" + victim + "|swp2", "reason"});
    EXPECT_EQ(claim, "bound-elsewhere\n");
    auto [rc, report] = verify();
    EXPECT_EQ(rc, 69) << "a refused claim must make verify say so";
    bool claimed = false;
    for (const auto& c : report["claims"]) {
        claimed = claimed || (c["address"] == victim && c["port"] == "swp2" &&
                              c["owner"] == "srv1/nic1" && c["switch"] == "p1-leaf1");
    }
    EXPECT_TRUE(claimed) << report.dump(2);
    for (const auto& p : report["nic_ports"])
        EXPECT_EQ(p["status"], "ok") << "a claim is not a cabling fault: " << p.dump();

    lab::PlanLab::down(name_);
    EXPECT_EQ(leftovers(name_), std::vector<std::string>{});
}
