// pathqd on SONiC, the orchestration: the weight auditor with a source that cannot be read,
// and the daemon with weight_audit_source sonic over fake APPL_DB, ASIC_DB, COUNTERS_DB and
// CONFIG_DB (the real SonicWeightReader). The pure rules and rows: pathqd_sonic_test.cpp.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "config.h"
#include "daemon.h"
#include "pathqd_sonic_fixture.h"
#include "twinrail_fakes/frr.h"
#include "twinrail_fakes/kernel.h"
#include "twinrail_fakes/pathqd_edges.h"
#include "twinrail_fakes/redis.h"

namespace twinrail::pathqd {
namespace {

using namespace std::chrono_literals;

constexpr const char* kQuarterJson = R"json({"paths": [
    {"valid": true, "multipath": true, "peer": {"interface": "Ethernet0"},
     "extendedCommunity": {"string": "LB:65100:3125000 (25.000 Mbps)"}},
    {"valid": true, "multipath": true, "peer": {"interface": "Ethernet4"},
     "extendedCommunity": {"string": "LB:65100:9375000 (75.000 Mbps)"}}]})json";

bool runUntil(boost::asio::io_context& io, const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + 3s;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        if (io.stopped()) io.restart();
        io.run_for(1ms);
    }
    return true;
}

TEST(PathqdSonicAuditor, ASourceThatCannotBeReadIsUnreachableAndNeverRepaired) {
    boost::asio::io_context io;
    fakes::FakeFrr frr(io);
    frr.showAnswers["show bgp ipv4 unicast 10.20.1.0/24 json"] = kQuarterJson;
    auto owned = std::make_unique<fakes::FakeForwardingWeights>(io);
    auto& source = *owned;
    source.error = "APPL_DB: not connected";
    size_t writers = 0;
    WeightAuditor auditor(
        io, frr, std::move(owned),
        [&writers] {
            ++writers;
            return std::unique_ptr<netlink::RouteProgrammer>();
        },
        /*repair=*/true, 1ms);
    auditor.start(3600s);
    auditor.runSoon();
    ASSERT_TRUE(runUntil(io, [&] { return auditor.stats().state == "unreachable"; }));
    EXPECT_EQ(auditor.stats().readErrors, 1u);
    EXPECT_TRUE(frr.shows.empty());
    // Readable again, diverged: reported, but a source that is not the kernel is never
    // "repaired" by a kernel route delete.
    source.error.clear();
    source.result.routes = {
        {*IpPrefix::parse("10.20.1.0/24"), w(1, 1), WeightRule::Exact, "ASIC_DB"}};
    source.result.badRows = {"ROUTE_TABLE:10.40.0.0/24: missing field nexthop"};
    auditor.runSoon();
    ASSERT_TRUE(runUntil(io, [&] { return auditor.stats().state == "diverged"; }));
    EXPECT_EQ(auditor.stats().divergedPrefixes, 1u);
    EXPECT_EQ(auditor.stats().badRows, 1u);
    EXPECT_EQ(auditor.stats().repairs, 0u);
    EXPECT_EQ(writers, 0u);
}

// The daemon with weight_audit_source sonic over fake APPL_DB, ASIC_DB, COUNTERS_DB and
// CONFIG_DB: the real SonicWeightReader reads them with SCAN and HGETALL.
class PathqdSonicDaemon : public ::testing::Test {
  protected:
    PathqdSonicDaemon() {
        cfg.sampleInterval = 5ms;
        cfg.probePort = 0;
        cfg.publish = false;
        cfg.weightsInterval = 5ms;
        cfg.weightAuditInterval = 3600s;  // FRR restarts run it here
        cfg.weightAuditSource = WeightAuditSource::Sonic;
        cfg.bgpPeersInterval = 0ms;
        options.periods.stats = 5ms;
        options.periods.auditAfterRestart = 5ms;
        options.periods.wcmpPoll = 5ms;
        for (const char* p : {"10.20.0.0/24", "10.20.1.0/24", "10.20.2.0/24", "10.40.2.0/24"})
            frr.showAnswers[std::string("show bgp ipv4 unicast ") + p + " json"] = kQuarterJson;
        load(appl, "appl_db.json");
        load(counters, "counters_db.json");
    }
    static void load(fakes::FakeRedis& db, const char* file) {
        for (auto& [k, row] : loadDump(kFixtures + "/" + file))
            for (auto& [f, v] : row) db.hashes[k][f] = v;
    }
    void start() {
        Edges e;
        e.counters = std::make_unique<fakes::FakeCounterSource>(io);
        e.frr = std::move(frrOwned_);
        e.stateDb = std::move(stateOwned_);
        e.applDb = std::move(applOwned_);
        e.asicDb = std::move(asicOwned_);
        e.countersDb = std::move(countersOwned_);
        e.configDb = std::move(configOwned_);
        daemon = std::make_unique<Daemon>(io, cfg, options, std::move(e));
        daemon->start();
    }
    std::string stat(const std::string& field) {
        auto it = state.hashes.find("PATHQD_STATS|global");
        if (it == state.hashes.end() || !it->second.count(field)) return "";
        return it->second.at(field);
    }
    bool statIs(const std::string& field, const std::string& value) {
        return runUntil(io, [&] { return stat(field) == value; });
    }

    boost::asio::io_context io;
    Config cfg;
    DaemonOptions options;

  private:
    std::unique_ptr<fakes::FakeFrr> frrOwned_ = std::make_unique<fakes::FakeFrr>(io);
    std::unique_ptr<fakes::FakeRedis> stateOwned_ = std::make_unique<fakes::FakeRedis>(io),
                                      applOwned_ = std::make_unique<fakes::FakeRedis>(io),
                                      asicOwned_ = std::make_unique<fakes::FakeRedis>(io),
                                      countersOwned_ = std::make_unique<fakes::FakeRedis>(io),
                                      configOwned_ = std::make_unique<fakes::FakeRedis>(io);

  protected:
    fakes::FakeFrr& frr = *frrOwned_;
    fakes::FakeRedis &state = *stateOwned_, &appl = *applOwned_, &asic = *asicOwned_,
                     &counters = *countersOwned_, &config = *configOwned_;
    std::unique_ptr<Daemon> daemon;  // last: goes first
};

TEST_F(PathqdSonicDaemon, ADivergedApplDbRouteIsReported) {
    start();
    ASSERT_TRUE(statIs("weight_audit_source", "sonic"));
    frr.restart("zebra");
    ASSERT_TRUE(statIs("weight_audit", "diverged")) << stat("weight_audit");
    // 10.20.1.0/24 (49:49 against 25:75); 10.20.0.0/24 and fc00:20::/64 (24:74) and the
    // nexthop group (25:75) agree after 202505's rule. ASIC_DB is empty: APPL_DB alone.
    EXPECT_EQ(stat("weight_audit_diverged_groups"), "1");
    EXPECT_EQ(stat("weight_audit_diverged_routes"), "1");
    EXPECT_EQ(stat("weight_audit_lookups"), "3");
    EXPECT_EQ(stat("weight_audit_bad_rows"), "0");
    EXPECT_EQ(stat("weight_audit_repairs"), "0");
}

TEST_F(PathqdSonicDaemon, TheAsicsWeightsAreAuditedAndMalformedRowsCounted) {
    load(asic, "asic_db.json");
    load(appl, "appl_db_malformed.json");
    start();
    frr.restart("zebra");
    ASSERT_TRUE(statIs("weight_audit", "diverged")) << stat("weight_audit");
    // 10.20.2.0/24 is ECMP in the ASIC although APPL_DB asks 25:75: a second group.
    EXPECT_EQ(stat("weight_audit_diverged_groups"), "2");
    EXPECT_EQ(stat("weight_audit_bad_rows"), "9");
}

TEST_F(PathqdSonicDaemon, RedisDownIsUnreachableNotACrash) {
    appl.setUp(false);
    start();
    frr.restart("zebra");
    ASSERT_TRUE(statIs("weight_audit", "unreachable")) << stat("weight_audit");
    EXPECT_EQ(stat("weight_audit_read_errors"), "1");
}

TEST_F(PathqdSonicDaemon, SonicsStaticWecmpIsShownAndFollowed) {
    config.hashes[kWcmpKey]["wcmp_enabled"] = "true";
    start();
    ASSERT_TRUE(statIs("sonic_wcmp", "on"));
    config.hashes[kWcmpKey]["wcmp_enabled"] = "false";
    ASSERT_TRUE(statIs("sonic_wcmp", "off"));
    // A change of source or release needs a restart: refused, the running one stays.
    auto next = cfg;
    next.sonicRelease = 202311;
    daemon->applyConfig(next);
    EXPECT_EQ(daemon->stats().configRejected, 1u);
}

}  // namespace
}  // namespace twinrail::pathqd
