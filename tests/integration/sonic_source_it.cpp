// SonicCounterSource against a real redis-server (a private one on a unix socket; no
// root, no namespaces), on a real io_context: SONiC's own data (every scenario load.py
// offers, checked against SONiC's reading rules and the oracles of SOURCES.md), our own
// fixture, a simulated flex-counter poll at 1 s / 2 s / 500 ms, and Redis dying mid-read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <csignal>
#include <iostream>
#include <regex>

#include "sonic_source_fixture.h"
#include "twinrail/lab/shell.h"

namespace twinrail::it {
namespace {

// ---- What SONiC's rules say a port is, read straight from Redis (the oracle) ----------

std::optional<double> number(const std::map<std::string, std::string>& h, const std::string& f) {
    auto it = h.find(f);
    if (it == h.end()) return std::nullopt;
    char* end = nullptr;
    double v = std::strtod(it->second.c_str(), &end);
    if (it->second.empty() || *end != '\0' || !std::isfinite(v) || v <= 0) return std::nullopt;
    return v;
}

struct Expected {
    bool reported = false;
    double mbps = 0;
    bool up = false;
    std::string queueSource = "none";
    double queueBytes = 0;
    uint64_t txBytes = 0, txPackets = 0, drops = 0;
    uint64_t pauseRx = 0, pauseTx = 0;  // 802.3x and PFC 0-7, received and sent
    bool ecn = false;                   // a unicast queue has marks and packets
    uint64_t ecnMarked = 0, ecnPackets = 0;
    bool storm = false;  // PFC_WD_STATUS stormed on a unicast queue
};

Expected sonicRules(SyncRedis& r, const std::string& name, const std::string& oid) {
    Expected e;
    auto row = r.hgetall(kCounters, "COUNTERS:" + oid);
    auto appl = r.hgetall(kAppl, "PORT_TABLE:" + name);
    auto state = r.hgetall(kState, "PORT_TABLE|" + name);
    // portstat get_port_speed(): STATE when present and APPL oper up, else APPL.
    e.up = appl.count("oper_status") != 0 && appl["oper_status"] == "up";
    auto speed = e.up && number(state, "speed") ? number(state, "speed") : number(appl, "speed");
    bool pseudo = name == "CPU" || name == "PortConfigDone" || name == "PortInitDone";
    e.reported = !pseudo && row.count("SAI_PORT_STAT_IF_OUT_OCTETS") != 0 && speed.has_value();
    e.mbps = speed.value_or(0);
    auto counter = [&row](const char* f) {
        return static_cast<uint64_t>(row.count(f) != 0 ? std::strtod(row[f].c_str(), nullptr) : 0);
    };
    e.txBytes = counter("SAI_PORT_STAT_IF_OUT_OCTETS");
    e.txPackets =
        counter("SAI_PORT_STAT_IF_OUT_UCAST_PKTS") + counter("SAI_PORT_STAT_IF_OUT_NON_UCAST_PKTS");
    e.drops = counter("SAI_PORT_STAT_IF_OUT_DISCARDS");
    e.pauseRx = counter("SAI_PORT_STAT_PAUSE_RX_PKTS");
    e.pauseTx = counter("SAI_PORT_STAT_PAUSE_TX_PKTS");
    for (int prio = 0; prio < 8; ++prio) {
        std::string pfc = "SAI_PORT_STAT_PFC_" + std::to_string(prio);
        e.pauseRx += counter((pfc + "_RX_PKTS").c_str());
        e.pauseTx += counter((pfc + "_TX_PKTS").c_str());
    }
    // Queues as queuestat maps them; unicast (or untyped) only; best source first.
    auto portOids = r.hgetall(kCounters, "COUNTERS_PORT_NAME_MAP");
    auto types = r.hgetall(kCounters, "COUNTERS_QUEUE_TYPE_MAP");
    auto owners = r.hgetall(kCounters, "COUNTERS_QUEUE_PORT_MAP");
    std::map<std::string, std::vector<double>> found;  // source -> values
    for (const auto& [qname, qoid] : r.hgetall(kCounters, "COUNTERS_QUEUE_NAME_MAP")) {
        std::string owner = qname.substr(0, qname.rfind(':'));
        if (owners.count(qoid) != 0) {
            owner.clear();
            for (const auto& [p, o] : portOids)
                if (o == owners[qoid]) owner = p;
        }
        bool unicast = types.count(qoid) == 0 || types[qoid] == "SAI_QUEUE_TYPE_UNICAST" ||
                       types[qoid] == "SAI_QUEUE_TYPE_ALL";
        if (owner != name || !unicast) continue;
        auto q = r.hgetall(kCounters, "COUNTERS:" + qoid);
        auto periodic = r.hgetall(kCounters, "PERIODIC_WATERMARKS:" + qoid);
        if (q.count("SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS") != 0 &&
            q.count("SAI_QUEUE_STAT_PACKETS") != 0) {
            e.ecn = true;
            e.ecnMarked += std::stoull(q["SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS"]);
            e.ecnPackets += std::stoull(q["SAI_QUEUE_STAT_PACKETS"]);
        }
        e.storm = e.storm || (q.count("PFC_WD_STATUS") != 0 && q["PFC_WD_STATUS"] == "stormed");
        for (auto [src, h, f] :
             {std::tuple{"curr_occupancy", &q, "SAI_QUEUE_STAT_CURR_OCCUPANCY_BYTES"},
              {"watermark", &q, "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES"},
              {"periodic_watermark", &periodic, "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES"}})
            if (h->count(f) != 0) found[src].push_back(std::strtod((*h)[f].c_str(), nullptr));
    }
    for (const char* src : {"curr_occupancy", "watermark", "periodic_watermark"}) {
        if (found.count(src) == 0) continue;
        e.queueSource = src;
        for (double v : found[src]) e.queueBytes += v;
        break;
    }
    return e;
}

// Every port of COUNTERS_PORT_NAME_MAP (and one that is not there) as the source reports it,
// against the rules above.
void checkAgainstRules(SyncRedis& r, SonicCounterSource& src, const CounterMap& got,
                       const std::vector<std::string>& asked) {
    auto oids = r.hgetall(kCounters, "COUNTERS_PORT_NAME_MAP");
    for (const auto& name : asked) {
        SCOPED_TRACE(name);
        auto info = src.info(name);
        ASSERT_TRUE(info);
        if (oids.count(name) == 0) {
            EXPECT_EQ(got.count(name), 0u);
            EXPECT_EQ(info->skip, "not in COUNTERS_PORT_NAME_MAP");
            continue;
        }
        Expected e = sonicRules(r, name, oids[name]);
        EXPECT_EQ(got.count(name) != 0, e.reported) << "skip: " << info->skip;
        if (!e.reported) {
            EXPECT_FALSE(info->skip.empty());
            continue;
        }
        const auto& pc = got.at(name);
        EXPECT_DOUBLE_EQ(*pc.capacityBps, e.mbps * 1e6);
        EXPECT_EQ(pc.up, e.up);
        EXPECT_EQ(pc.queueSource, e.queueSource);
        EXPECT_DOUBLE_EQ(pc.queueBytes, e.queueBytes);
        EXPECT_EQ(pc.counters.txBytes, e.txBytes);
        EXPECT_EQ(pc.counters.txPackets, e.txPackets);
        EXPECT_EQ(pc.counters.drops, e.drops);
        EXPECT_EQ(pc.counters.pauseRx, e.pauseRx);
        EXPECT_EQ(pc.counters.pauseTx, e.pauseTx);
        EXPECT_EQ(pc.ecn.has_value(), e.ecn);
        EXPECT_EQ(pc.ecnSource, e.ecn ? "queue_counters" : "none");
        if (pc.ecn && e.ecn) {
            EXPECT_EQ(pc.ecn->marked, e.ecnMarked);
            EXPECT_EQ(pc.ecn->packets, e.ecnPackets);
        }
        EXPECT_EQ(pc.pfcStorm, e.storm);
    }
}

// ---- (a) every scenario SONiC's data offers ------------------------------------------

struct Scenario {
    std::string name;
    std::vector<std::string> files;
};

std::vector<Scenario> listScenarios() {
    auto out = lab::runOk({"python3", kLoadPy.string(), "--list"});
    std::vector<Scenario> list;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
        if (line.empty()) continue;
        if (line[0] != ' ') {
            list.push_back({line.substr(0, line.find(':')), {}});
        } else if (!list.empty()) {
            list.back().files.push_back(line.substr(line.find_first_not_of(' ')));
        }
    }
    return list;
}

// load.py's spec: path[@DB][#KEY], the path relative to fixtures/.
std::optional<std::string> missingFile(const Scenario& s) {
    static const std::regex kSpec(R"(^(.+?)(?:@([A-Za-z_0-9]+))?(?:#(.+))?$)");
    for (const auto& spec : s.files) {
        std::smatch m;
        if (!std::regex_match(spec, m, kSpec)) return spec;
        if (!fs::exists(kShared / "fixtures/sonic-counters/fixtures" / m[1].str()))
            return m[1].str();
    }
    return std::nullopt;
}

void load(const lab::RedisServer& redis, const std::string& scenario, bool flush) {
    lab::Argv argv{"python3", kLoadPy.string(), "-q", "-s", redis.socket()};
    if (flush) argv.push_back("--flush-all");
    argv.push_back(scenario);
    lab::runOk(argv);
}

TEST_F(SonicSource, EverySonicScenarioReadsAsSonicsToolsReadIt) {
    if (!fs::exists(kLoadPy)) GTEST_SKIP() << kLoadPy << " not found (no ../shared)";
    auto scenarios = listScenarios();
    ASSERT_FALSE(scenarios.empty());
    int checked = 0, withPauses = 0, withMarks = 0, stormed = 0;
    for (const auto& sc : scenarios) {
        SCOPED_TRACE(sc.name);
        if (auto missing = missingFile(sc)) {
            std::cout << "[ SKIPPED  ] scenario " << sc.name << ": " << *missing << " is absent\n";
            continue;
        }
        load(*redis_, sc.name, true);
        auto& src = makeSource();
        auto ports = portNames();
        ports.push_back("Ethernet999");  // asked for, not on this box
        auto r = pollReady(ports);
        ASSERT_TRUE(r.error.empty()) << r.error;
        checkAgainstRules(*db_, src, r.map, ports);
        std::cout << "[ CHECKED  ] scenario " << sc.name << ":";
        for (const auto& p : ports) {
            auto i = src.info(p);
            std::cout << " " << p << "="
                      << (i->skip.empty() ? std::to_string(static_cast<long>(*i->speedMbps)) + "/" +
                                                (i->up ? "up" : "down") + "/" + i->queueSource
                                          : "skip(" + i->skip + ")");
            auto pc = r.map.find(p);
            if (pc == r.map.end()) continue;
            const auto& c = pc->second;
            if (c.counters.pauseRx + c.counters.pauseTx > 0) {
                ++withPauses;
                std::cout << "/pauses " << c.counters.pauseRx << " in " << c.counters.pauseTx
                          << " out";
            }
            if (c.ecn) {
                ++withMarks;
                std::cout << "/ECN " << c.ecn->marked << " of " << c.ecn->packets;
            }
            if (c.pfcStorm) {
                ++stormed;
                std::cout << "/stormed";
            }
        }
        std::cout << "\n";
        // SOURCES.md section 5, where the scenario has them.
        if (sc.name == "utilities-mock" || sc.name == "utilities-portstat") {
            ASSERT_EQ(r.map.count("Ethernet0"), 1u);
            EXPECT_DOUBLE_EQ(*r.map["Ethernet0"].capacityBps, 25000e6);  // APPL: oper down
            EXPECT_FALSE(r.map["Ethernet0"].up);
            for (const char* na : {"Ethernet4", "Ethernet8", "Ethernet9"})
                EXPECT_EQ(r.map.count(na), 0u);
        }
        if (sc.name == "utilities-mock") {  // never the operator-cleared watermarks
            EXPECT_EQ(r.map["Ethernet0"].queueSource, "watermark");
            EXPECT_LT(r.map["Ethernet0"].queueBytes, 2057328);
        }
        if (sc.name == "gnmi-interface-counters") {
            EXPECT_DOUBLE_EQ(*r.map.at("Ethernet0").capacityBps, 100000e6);
            EXPECT_TRUE(r.map.at("Ethernet0").up);
        }
        if (sc.name == "gnmi-queues") {  // no APPL_DB: every port is skipped, queues still mapped
            EXPECT_TRUE(r.map.empty());
            EXPECT_EQ(src.info("Ethernet68")->queueSource, "curr_occupancy");
            EXPECT_EQ(src.info("Ethernet68")->sourceQueues, 2);
            EXPECT_EQ(src.info("Ethernet7")->queueSource, "watermark");
        }
        if (sc.name == "gnmi-dump") {
            EXPECT_EQ(r.map.count("CPU"), 0u);
            EXPECT_FALSE(r.map.at("Ethernet0").up);
        }
        source_.reset();
        ++checked;
    }
    EXPECT_GT(checked, 0);
    // SONiC's dumps carry PFC counters and WRED ECN queue counters: both were read and
    // matched the rules above on real rows, not only on our fixture.
    std::cout << "ports with pause counters " << withPauses << ", with ECN queue counters "
              << withMarks << ", stormed " << stormed << "\n";
    EXPECT_GT(withPauses, 0);
    EXPECT_GT(withMarks, 0);
}

TEST_F(SonicSource, GnmiSnapshotsGiveSonicsTxOkAndStateSpeed) {
    if (!fs::exists(kLoadPy)) GTEST_SKIP() << kLoadPy << " not found (no ../shared)";
    load(*redis_, "gnmi-interface-counters", true);
    SonicOptions opt;
    opt.slowRefresh = 200ms;
    makeSource(opt);
    auto first = pollReady({"Ethernet0"});
    ASSERT_EQ(first.map.count("Ethernet0"), 1u) << first.error;
    load(*redis_, "gnmi-interface-counters-2", false);
    load(*redis_, "gnmi-state-port", false);
    runFor(300ms);
    auto second = pollReady({"Ethernet0"});
    ASSERT_EQ(second.map.count("Ethernet0"), 1u);
    // sonic-gnmi interface_cli_test.go: "TxOk":"11270" between the snapshots.
    EXPECT_EQ(
        second.map["Ethernet0"].counters.txPackets - first.map["Ethernet0"].counters.txPackets,
        11270u);
    // STATE 200000 vs APPL 100000, oper up: portstat takes STATE.
    EXPECT_DOUBLE_EQ(*second.map["Ethernet0"].capacityBps, 200000e6);
    EXPECT_EQ(source_->info("Ethernet0")->speedFrom, "state_db");
}

// ---- (b) our own fixture: the same code on a fresh clone ----------------------------

TEST_F(SonicSource, OwnFixturePortsAsSonicsToolsReadThem) {
    loadOwnFixture();
    auto& src = makeSource();
    auto ports = portNames();
    ports.push_back("Ethernet56");  // an APPL_DB row ({}), not in the name map
    auto r = pollReady(ports);
    ASSERT_TRUE(r.error.empty()) << r.error;
    checkAgainstRules(*db_, src, r.map, ports);
    // The same, written down (tests/fixtures/sonic-counters/README.md).
    struct Want {
        const char* port;
        double mbps;
        bool up;
        const char* speedFrom;
        const char* queueSource;
        double queueBytes;
        int queues;
    };
    for (const auto& w : {Want{"Ethernet0", 400000, true, "state_db", "curr_occupancy", 3500, 2},
                          Want{"Ethernet8", 400000, false, "appl_db", "watermark", 36000, 8},
                          Want{"Ethernet16", 400000, true, "appl_db", "periodic_watermark", 360, 8},
                          Want{"Ethernet24", 200000, true, "appl_db", "watermark", 55, 10}}) {
        SCOPED_TRACE(w.port);
        ASSERT_EQ(r.map.count(w.port), 1u);
        const auto& pc = r.map[w.port];
        EXPECT_DOUBLE_EQ(*pc.capacityBps, w.mbps * 1e6);
        EXPECT_EQ(pc.up, w.up);
        EXPECT_EQ(src.info(w.port)->speedFrom, w.speedFrom);
        EXPECT_EQ(pc.queueSource, w.queueSource);
        EXPECT_DOUBLE_EQ(pc.queueBytes, w.queueBytes);
        EXPECT_EQ(src.info(w.port)->sourceQueues, w.queues);
        EXPECT_FALSE(pc.sampledAt);  // nothing has changed yet: no poll instant known
    }
    EXPECT_EQ(r.map["Ethernet0"].counters.txBytes, 123456789u);  // a JSON number
    EXPECT_EQ(r.map["Ethernet0"].counters.txPackets, 1010u);
    EXPECT_EQ(r.map["Ethernet0"].counters.pauseRx, 43u);  // 802.3x 1 + PFC 3 40 + PFC 4 2
    EXPECT_EQ(r.map["Ethernet0"].counters.pauseTx, 12u);
    ASSERT_TRUE(r.map["Ethernet0"].ecn);
    EXPECT_EQ(r.map["Ethernet0"].ecn->marked, 5u);  // queues 3 and 4: 4 + 1 of 10 + 10
    EXPECT_EQ(r.map["Ethernet0"].ecn->packets, 20u);
    EXPECT_TRUE(r.map["Ethernet0"].pfcStorm);  // queue 4
    EXPECT_FALSE(r.map["Ethernet8"].ecn);      // no queue counts marks
    EXPECT_FALSE(r.map["Ethernet8"].pfcStorm);
    EXPECT_EQ(r.map["Ethernet16"].counters.txBytes, 3000000u);  // a float string
    EXPECT_EQ(src.info("Ethernet24")->unicastQueues, 10);       // of 20
    EXPECT_EQ(r.map.size(), 4u);
    EXPECT_EQ(src.info("Ethernet32")->skip, "no COUNTERS row");
    EXPECT_EQ(src.info("Ethernet40")->skip, "no speed in APPL_DB PORT_TABLE");
    EXPECT_EQ(src.info("Ethernet48")->skip, "no speed in APPL_DB PORT_TABLE");
    EXPECT_EQ(src.info("CPU")->skip, "not a front-panel port");
    EXPECT_EQ(src.info("Ethernet56")->skip, "not in COUNTERS_PORT_NAME_MAP");
}

TEST_F(SonicSource, OwnFixtureWithoutATypeMapCountsEveryQueue) {
    loadOwnFixture();
    db_->select(kCounters);
    db_->cmd({"DEL", "COUNTERS_QUEUE_TYPE_MAP"});
    auto& src = makeSource();
    auto r = pollReady(portNames());
    ASSERT_TRUE(r.error.empty()) << r.error;
    checkAgainstRules(*db_, src, r.map, portNames());
    EXPECT_EQ(r.map["Ethernet8"].queueSource, "curr_occupancy");  // its multicast queue now
    EXPECT_DOUBLE_EQ(r.map["Ethernet8"].queueBytes, 888888);
    EXPECT_DOUBLE_EQ(r.map["Ethernet24"].queueBytes, 1000055);
    EXPECT_EQ(src.info("Ethernet24")->unicastQueues, 20);
}

TEST_F(SonicSource, SyncdRestartWithNewOidsIsFollowed) {
    loadOwnFixture();
    SonicOptions opt;
    opt.mapRetry = 200ms;
    auto& src = makeSource(opt);
    ASSERT_EQ(pollReady({"Ethernet0"}).map.count("Ethernet0"), 1u);
    // syncd came back: the port has a new oid, its old row is gone, counters start at 0.
    db_->select(kCounters);
    db_->cmd({"RENAME", "COUNTERS:oid:0x1000000000a00", "COUNTERS:oid:0x1000000000c00"});
    db_->cmd({"HSET", "COUNTERS:oid:0x1000000000c00", "SAI_PORT_STAT_IF_OUT_OCTETS", "1000"});
    db_->cmd({"HSET", "COUNTERS_PORT_NAME_MAP", "Ethernet0", "oid:0x1000000000c00"});
    for (const auto& [q, port] : db_->hgetall(kCounters, "COUNTERS_QUEUE_PORT_MAP")) {
        if (port == "oid:0x1000000000a00")
            db_->cmd({"HSET", "COUNTERS_QUEUE_PORT_MAP", q, "oid:0x1000000000c00"});
    }
    auto gone = pollOnce({"Ethernet0"});
    EXPECT_TRUE(gone.error.empty());
    EXPECT_EQ(gone.map.count("Ethernet0"), 0u);  // its row went: not reported, maps re-read
    PollResult back;
    for (int i = 0; i < 30 && back.map.count("Ethernet0") == 0; ++i) {
        runFor(100ms);
        back = pollOnce({"Ethernet0"});
    }
    ASSERT_EQ(back.map.count("Ethernet0"), 1u);
    EXPECT_EQ(src.info("Ethernet0")->oid, "oid:0x1000000000c00");
    EXPECT_EQ(back.map["Ethernet0"].counters.txBytes, 1000u);
    EXPECT_EQ(back.map["Ethernet0"].queueSource, "curr_occupancy");
    EXPECT_GE(src.stats().mapLoads, 2u);
}

}  // namespace
}  // namespace twinrail::it
