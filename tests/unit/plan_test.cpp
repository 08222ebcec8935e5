// The planner: the seed's sizing tables row for row, refusals, and the layout's
// invariants (every cable once, addresses in their rail subnet, configs the daemons accept).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "config.h"  // hostrouted's parser: the generated config must pass it
#include "twinrail/lab/plan_lab.h"
#include "twinrail/plan/outputs.h"
#include "twinrail/plan/plan.h"

using namespace twinrail::plan;

namespace {

struct SeedRow {
    const char* model;
    int gpus;
    int servers;
    int leaves;
    int spines;
    int links;
};

// The seed white paper, section 4.1.2: both tables, all 9 rows (totals over both planes).
const SeedRow kSeed[] = {
    {"CX864E-N", 512, 64, 8, 4, 32},      {"CX864E-N", 1024, 128, 16, 8, 16},
    {"CX864E-N", 2048, 256, 32, 16, 8},   {"CX864E-N", 4096, 512, 64, 32, 4},
    {"CX864E-N", 8192, 1024, 128, 64, 2}, {"CX864E-N", 16384, 2048, 256, 128, 1},
    {"CX732Q-N", 256, 32, 16, 8, 4},      {"CX732Q-N", 512, 64, 32, 16, 2},
    {"CX732Q-N", 1024, 128, 64, 32, 1},
};

Request request(const std::string& model, int gpus) {
    Request r;
    r.gpus = gpus;
    r.leafModel = *findModel(model);
    return r;
}

Plan mustPlan(const Request& r) {
    auto p = buildPlan(r);
    if (auto* e = std::get_if<SizingError>(&p)) ADD_FAILURE() << e->message;
    return std::get<Plan>(p);
}

std::string errorOf(const Request& r) {
    auto p = buildPlan(r);
    EXPECT_TRUE(std::holds_alternative<SizingError>(p));
    return std::holds_alternative<SizingError>(p) ? std::get<SizingError>(p).message : "";
}

// The lab's own plan, so that what these tests check is what the lab builds.
Request labRequest() {
    return twinrail::lab::defaultLabRequest();
}

}  // namespace

class SeedTable : public ::testing::TestWithParam<SeedRow> {};

TEST_P(SeedTable, ReproducesTheRow) {
    const SeedRow& row = GetParam();
    auto n = normalize(request(row.model, row.gpus));
    auto s = size(std::get<Request>(n));
    ASSERT_TRUE(std::holds_alternative<Sizing>(s)) << std::get<SizingError>(s).message;
    const Sizing& z = std::get<Sizing>(s);
    EXPECT_EQ(z.servers, row.servers);
    EXPECT_EQ(z.leavesTotal(), row.leaves);
    EXPECT_EQ(z.spinesTotal(), row.spines);
    EXPECT_EQ(z.linksPerLeafSpine, row.links);
    EXPECT_EQ(z.uplinkSpeedGbps, 400);  // the seed counts 400G links
    EXPECT_EQ(z.spinePortsUsed, z.spineRadix) << "the seed fills every spine";
}

INSTANTIATE_TEST_SUITE_P(AllNineRows, SeedTable, ::testing::ValuesIn(kSeed));

TEST(Planner, RefusesWhatTwoTiersCannotHold) {
    auto msg = errorOf(request("CX864E-N", 32768));
    EXPECT_NE(msg.find("256 leaves per plane"), std::string::npos) << msg;
    EXPECT_NE(msg.find("at most 128 leaves (16384 GPUs)"), std::string::npos) << msg;
    msg = errorOf(request("CX732Q-N", 2048));
    EXPECT_NE(msg.find("at most 32 leaves (1024 GPUs)"), std::string::npos) << msg;
}

TEST(Planner, RefusesImpossibleInputsNamingThem) {
    EXPECT_NE(errorOf(request("CX864E-N", 100)).find("not whole servers of 8"), std::string::npos);
    auto r = request("CX864E-N", 1024);
    r.planes = 3;
    EXPECT_NE(errorOf(r).find("planes must be 1 or 2"), std::string::npos);
    r = request("CX732Q-N", 256);
    r.nicSpeedGbps = 800;  // 400G ports cannot become 400G... they can; 2x400G NIC ports fit
    r.nicPorts = 2;
    EXPECT_TRUE(std::holds_alternative<Plan>(buildPlan(r)));
    r.nicSpeedGbps = 300;
    r.nicPorts = 2;  // 150G NIC ports: no breakout of a 400G port gives that
    EXPECT_NE(errorOf(r).find("does not break out to 150G"), std::string::npos);
    r = request("CX864E-N", 2048);
    r.spinesPerPlane = 3;  // 64 uplinks do not split over 3 spines
    EXPECT_NE(errorOf(r).find("3 spines per plane do not work"), std::string::npos);
    r = request("CX864E-N", 2048);
    r.oversubscription = 5;  // 64 ports do not split 5:1
    EXPECT_NE(errorOf(r).find("do not split 5:1"), std::string::npos);
    EXPECT_NE(errorOf(Request{}).find("GPU count"), std::string::npos);
}

TEST(Planner, SmallFabricsPutSeveralRailsOnALeaf) {
    Plan p = mustPlan(request("CX864E-N", 512));
    EXPECT_EQ(p.sizing.railsPerLeaf, 2);
    EXPECT_EQ(p.sizing.groups, 1);
    const Switch* l1 = p.findSwitch("p1-leaf1");
    ASSERT_NE(l1, nullptr);
    EXPECT_EQ(l1->rails, (std::vector<int>{1, 2}));
    EXPECT_EQ(p.findSwitch("p2-leaf4")->rails, (std::vector<int>{7, 8}));
    // srv64's NIC 2 is in the second rail slot of leaf 1: host port 64+63 = 127 -> swp32s3.
    const Nic& nic = p.servers[63].nics[1];
    EXPECT_EQ(nic.ports[0].leaf, "p1-leaf1");
    EXPECT_EQ(nic.ports[0].leafPort, "swp32s3");
    EXPECT_EQ(nic.ports[1].leaf, "p2-leaf1");
}

TEST(Planner, LargeFabricsRepeatALeafPerRailInGroups) {
    Plan p = mustPlan(request("CX864E-N", 2048));
    EXPECT_EQ(p.sizing.groups, 2);
    EXPECT_EQ(p.sizing.serversPerGroup, 128);
    const Server& srv = p.servers[128];  // first server of group 2
    EXPECT_EQ(srv.group, 2);
    EXPECT_EQ(srv.nics[2].ports[0].leaf, "p1-leaf11");  // group 2 starts at leaf 9; rail 3
    EXPECT_EQ(srv.nics[2].ports[1].leaf, "p2-leaf11");
    EXPECT_EQ(srv.nics[2].ports[1].plane, 2);
}

TEST(Planner, EveryCableIsUsedOnceAndLinksAreEven) {
    for (const auto& row : kSeed) {
        Plan p = mustPlan(request(row.model, row.gpus));
        std::set<std::string> ends;
        std::map<std::pair<std::string, std::string>, int> pairLinks;
        for (const auto& sw : p.switches)
            for (const auto& port : sw.ports) {
                EXPECT_TRUE(ends.insert(sw.name + ":" + port.name).second) << sw.name << port.name;
                if (port.role == PortRole::Uplink) ++pairLinks[{sw.name, port.peer}];
                if (port.role != PortRole::Host) {
                    const Switch* peer = p.findSwitch(port.peer);
                    ASSERT_NE(peer, nullptr);
                    EXPECT_EQ(peer->plane, sw.plane) << "planes never meet";
                }
            }
        EXPECT_EQ(pairLinks.size(),
                  static_cast<size_t>(p.sizing.leavesTotal() * p.sizing.spinesPerPlane));
        for (const auto& [pair, links] : pairLinks) EXPECT_EQ(links, row.links);
        size_t nicPorts = 0;
        for (const auto& srv : p.servers)
            for (const auto& nic : srv.nics) {
                ASSERT_EQ(nic.ports.size(), 2u);
                EXPECT_EQ(nic.ports[0].plane, 1);
                EXPECT_EQ(nic.ports[1].plane, 2);
                nicPorts += nic.ports.size();
            }
        EXPECT_EQ(nicPorts, static_cast<size_t>(row.gpus) * 2);
    }
}

TEST(Planner, AddressesAreUniqueAndInTheirRailSubnet) {
    Plan p = mustPlan(request("CX864E-N", 4096));
    std::set<std::string> seen;
    for (const auto& sw : p.switches) {
        EXPECT_TRUE(seen.insert(sw.loopback).second) << sw.loopback;
        EXPECT_GE(sw.asn, 4200000000u);
    }
    for (const auto& srv : p.servers)
        for (const auto& nic : srv.nics) {
            EXPECT_TRUE(seen.insert(nic.address).second) << nic.address;
            const RailSubnet* rs = p.subnetFor(srv.group, nic.rail);
            ASSERT_NE(rs, nullptr);
            // /24 subnets: the first three octets match.
            EXPECT_EQ(rs->prefix.substr(0, rs->prefix.rfind('.')),
                      nic.address.substr(0, nic.address.rfind('.')));
        }
    EXPECT_EQ(p.subnets.size(), static_cast<size_t>(p.sizing.groups * 8));
}

TEST(Planner, PlanFileRoundTripsAndRejectsTampering) {
    Plan p = mustPlan(request("CX732Q-N", 512));
    auto j = toJson(p);
    auto back = planFromJson(j);
    ASSERT_TRUE(std::holds_alternative<Plan>(back)) << std::get<SizingError>(back).message;
    EXPECT_EQ(std::get<Plan>(back), p);

    auto bad = j;
    bad["sizing"]["spines_per_plane"] = 3;
    auto r = planFromJson(bad);
    ASSERT_TRUE(std::holds_alternative<SizingError>(r));
    EXPECT_NE(std::get<SizingError>(r).message.find("plan.sizing"), std::string::npos);

    bad = j;
    bad["switches"][3]["ports"][0].erase("speed_gbps");
    r = planFromJson(bad);
    ASSERT_TRUE(std::holds_alternative<SizingError>(r));
    EXPECT_EQ(std::get<SizingError>(r).message, "plan.switches[3].ports[0].speed_gbps: missing");

    bad = j;
    bad["servers"][0]["nics"][0]["ports"][0]["leaf_port"] = "swp99";
    r = planFromJson(bad);
    ASSERT_TRUE(std::holds_alternative<SizingError>(r));
    EXPECT_NE(std::get<SizingError>(r).message.find("srv1/nic1/port1"), std::string::npos);
}

TEST(Planner, FrrConfigHasWhatTheFabricAndHostroutedNeed) {
    Plan p = mustPlan(request("CX864E-N", 1024));
    const Switch& leaf = *p.findSwitch("p2-leaf3");
    std::string c = frrConfig(p, leaf);
    for (const char* line : {"ip import-table 10\n", "  redistribute table 10\n",
                             " bgp bestpath as-path multipath-relax\n", "  maximum-paths 64\n",
                             " neighbor FABRIC remote-as external\n",
                             " neighbor swp33s0 interface peer-group FABRIC\n",
                             " neighbor swp64s1 interface peer-group FABRIC\n",
                             "  network 10.128.2.0/24\n", "ip route 10.128.2.0/24 blackhole\n"})
        EXPECT_NE(c.find(line), std::string::npos) << line << "\n" << c;
    EXPECT_EQ(c.find("HOSTS"), std::string::npos) << "no host peers unless asked";
    std::string s = frrConfig(p, *p.findSwitch("p1-spine4"));
    EXPECT_NE(s.find(" neighbor swp64s1 interface peer-group FABRIC\n"), std::string::npos);
    EXPECT_NE(s.find("  maximum-paths 16\n"), std::string::npos);
    EXPECT_EQ(s.find("import-table"), std::string::npos);
}

TEST(Planner, GeneratedDaemonConfigIsAcceptedByHostrouted) {
    Plan p = mustPlan(labRequest());
    const Switch& leaf = *p.findSwitch("p1-leaf2");
    auto db = configDb(p, leaf);
    auto parsed = twinrail::hostrouted::parseConfig(db);
    ASSERT_TRUE(std::holds_alternative<twinrail::hostrouted::Config>(parsed))
        << std::get<twinrail::hostrouted::ConfigError>(parsed).str();
    const auto& cfg = std::get<twinrail::hostrouted::Config>(parsed);
    EXPECT_EQ(cfg.interfaces, (std::vector<std::string>{"swp1", "swp2"}));
    EXPECT_FALSE(cfg.ipv6);
    EXPECT_TRUE(db["INTERFACE"].contains("swp1|10.128.1.1/24"));
    EXPECT_EQ(db["PATHQD_PORT"]["swp3"]["role"], "uplink");
    EXPECT_FALSE(configDb(p, *p.findSwitch("p1-spine1")).contains("HOSTROUTED"));
}

TEST(Planner, CablingCsvHasEveryCable) {
    Plan p = mustPlan(labRequest());
    std::string csv = cablingCsv(p);
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 4 * 2 + 4 * 2);
    EXPECT_NE(csv.find("server,2,srv2/nic2,port2,p2-leaf2,swp2,200\n"), std::string::npos) << csv;
    EXPECT_NE(csv.find("fabric,1,p1-leaf1,swp4,p1-spine2,swp1,200\n"), std::string::npos) << csv;
    EXPECT_EQ(cablingJson(p)["cables"].size(), 16u);
}
