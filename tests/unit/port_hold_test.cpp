// The host-port hold's decisions (daemons/hostrouted/port_hold.h) on synthetic time.
#include "port_hold.h"

#include <gtest/gtest.h>
#include <linux/rtnetlink.h>

#include "config.h"

namespace twinrail::hostrouted {
namespace {

using namespace std::chrono_literals;

const IpPrefix kA = *IpPrefix::parse("10.1.2.0/24");
const IpPrefix kB = *IpPrefix::parse("10.1.3.0/24");
const IpPrefix kC = *IpPrefix::parse("10.2.2.0/24");
const TimePoint kT0 = TimePoint{} + 1000s;

HoldSettings settings() {
    return HoldSettings{{kA, kB, kC}, 60s};
}

// What decide() asked for, as "port:L|R|N" (lower, raise, record) in port order.
std::vector<std::string> acts(const HoldDecision& d) {
    std::vector<std::string> out;
    for (const auto& a : d.actions) {
        char k = a.kind == HoldActionKind::Lower   ? 'L'
                 : a.kind == HoldActionKind::Raise ? 'R'
                                                   : 'N';
        out.push_back(a.port + ":" + k);
    }
    return out;
}

using V = std::vector<std::string>;

class PortHoldTest : public ::testing::Test {
  protected:
    // Two managed ports, admin up, the first view of the routes holding `present`.
    HoldDecision startWith(std::set<IpPrefix> present, HoldSettings s = settings()) {
        hold = std::make_unique<PortHold>(std::move(s), kT0);
        hold->portSeen("swp1", true, kT0);
        hold->portSeen("swp2", true, kT0);
        hold->setPresent(std::move(present));
        return hold->decide(kT0);
    }
    // The kernel's answer to a lower or raise.
    void applied(const HoldDecision& d, TimePoint now) {
        for (const auto& a : d.actions) {
            if (a.kind == HoldActionKind::Record) continue;
            hold->portSeen(a.port, a.kind == HoldActionKind::Raise, now);
        }
    }
    std::unique_ptr<PortHold> hold;
};

TEST_F(PortHoldTest, StartWithoutRoutesHoldsEveryPort) {
    auto d = startWith({});
    EXPECT_EQ(acts(d), (V{"swp1:L", "swp2:L"}));
    EXPECT_TRUE(hold->holding());
    EXPECT_TRUE(hold->records().at("swp1").held);
    applied(d, kT0);
    EXPECT_TRUE(acts(hold->decide(kT0 + 1s)).empty());  // nothing twice
    EXPECT_EQ(hold->nextDeadline(), kT0 + 60s);
}

TEST_F(PortHoldTest, ReleasedWhenAllPrefixesArePresent) {
    applied(startWith({}), kT0);
    hold->setPresent({kA, kB});
    EXPECT_TRUE(acts(hold->decide(kT0 + 2s)).empty());  // not all: still held
    hold->setPresent({kA, kB, kC});
    auto d = hold->decide(kT0 + 3s);
    EXPECT_EQ(acts(d), (V{"swp1:R", "swp2:R"}));
    EXPECT_FALSE(d.warning);
    EXPECT_EQ(d.transition, "all 3 fabric prefixes present");
    EXPECT_FALSE(hold->holding());
    EXPECT_FALSE(hold->records().at("swp2").held);
    EXPECT_EQ(hold->nextDeadline(), std::nullopt);
}

TEST_F(PortHoldTest, BoundReleasesWithSomePrefixesAndNamesTheMissing) {
    applied(startWith({}), kT0);
    hold->setPresent({kA});
    EXPECT_TRUE(acts(hold->decide(kT0 + 59s)).empty());
    auto d = hold->decide(kT0 + 60s);
    EXPECT_EQ(acts(d), (V{"swp1:R", "swp2:R"}));
    EXPECT_TRUE(d.warning);
    EXPECT_NE(d.transition.find("1 of 3"), std::string::npos) << d.transition;
    EXPECT_NE(d.transition.find("10.1.3.0/24, 10.2.2.0/24"), std::string::npos) << d.transition;
}

TEST_F(PortHoldTest, BoundWithNoPrefixAtAllKeepsHolding) {
    applied(startWith({}), kT0);
    EXPECT_TRUE(acts(hold->decide(kT0 + 600s)).empty());
    EXPECT_TRUE(hold->holding());
}

TEST_F(PortHoldTest, IsolationHoldsAgainButNeverTakesAnOperatorsShutPort) {
    auto d = startWith({kA, kB, kC});
    EXPECT_TRUE(acts(d).empty());  // a ready leaf at start: nothing lowered at all
    // An operator shuts swp1 during the outage, a second before the routes go: it stays
    // the operator's however close to the isolation it went down.
    hold->portSeen("swp1", false, kT0 + 100s);
    hold->setPresent({});
    d = hold->decide(kT0 + 101s);
    EXPECT_TRUE(d.warning);
    EXPECT_EQ(d.transition, "isolated: none of the 3 fabric prefixes");
    EXPECT_EQ(acts(d), (V{"swp2:L"}));
    applied(d, kT0 + 101s);
    EXPECT_EQ(hold->records().count("swp1"), 0U);
    // The routes come back: only the hold's own port is raised.
    hold->setPresent({kA, kB, kC});
    EXPECT_EQ(acts(hold->decide(kT0 + 105s)), (V{"swp2:R"}));
    EXPECT_EQ(hold->records().count("swp1"), 0U);
}

TEST_F(PortHoldTest, OneRemotePrefixMissingNeverHolds) {
    startWith({kA, kB, kC});
    hold->setPresent({kA, kB});  // one remote leaf down
    EXPECT_TRUE(acts(hold->decide(kT0 + 10s)).empty());
    hold->setPresent({kA});
    EXPECT_TRUE(acts(hold->decide(kT0 + 20s)).empty());
    EXPECT_FALSE(hold->holding());
}

TEST_F(PortHoldTest, ThePlanesOnlyOtherLeafGoneHoldsNothing) {
    // One listed prefix: its loss alone cannot tell a remote leaf down from this leaf cut
    // off. The spines' routes still there say which.
    auto one = HoldSettings{{kA}, 60s};
    startWith({kA}, one);
    hold->setPresent({}, true);
    EXPECT_TRUE(acts(hold->decide(kT0 + 10s)).empty());
    EXPECT_FALSE(hold->holding());
    hold->setPresent({}, false);  // now nothing through the fabric at all
    EXPECT_EQ(acts(hold->decide(kT0 + 20s)), (V{"swp1:L", "swp2:L"}));
}

TEST_F(PortHoldTest, RestartWithOnlyOtherFabricRoutesHoldsNothing) {
    hold = std::make_unique<PortHold>(HoldSettings{{kA}, 60s}, kT0);
    hold->portSeen("swp1", true, kT0);
    hold->setPresent({}, true);
    EXPECT_TRUE(acts(hold->decide(kT0)).empty());
}

TEST_F(PortHoldTest, RestartOnARunningLeafWithARemoteMissingHoldsNothing) {
    auto d = startWith({kA, kB});
    EXPECT_TRUE(acts(d).empty());
    EXPECT_TRUE(d.warning);
    EXPECT_FALSE(hold->holding());
}

TEST_F(PortHoldTest, NoPrefixesMeansOff) {
    auto d = startWith({}, HoldSettings{{}, 60s});
    EXPECT_TRUE(acts(d).empty());
    EXPECT_FALSE(hold->holding());
    EXPECT_FALSE(hold->enabled());
    EXPECT_TRUE(acts(hold->decide(kT0 + 1000s)).empty());
}

TEST_F(PortHoldTest, ClearingThePrefixesRaisesWhatIsHeld) {
    applied(startWith({}), kT0);
    hold->setSettings(HoldSettings{{}, 60s}, kT0 + 5s);
    auto d = hold->decide(kT0 + 5s);
    EXPECT_EQ(acts(d), (V{"swp1:R", "swp2:R"}));
    EXPECT_EQ(d.transition, "fabric_prefixes cleared: the hold is off");
}

TEST_F(PortHoldTest, OperatorsAdminDownPortIsNeverRaised) {
    hold = std::make_unique<PortHold>(settings(), kT0);
    hold->portSeen("swp1", true, kT0);
    hold->portSeen("swp2", false, kT0);  // down by the operator before hostrouted started
    auto d = hold->decide(kT0);
    EXPECT_EQ(acts(d), (V{"swp1:L"}));
    applied(d, kT0);
    hold->setPresent({kA, kB, kC});
    EXPECT_EQ(acts(hold->decide(kT0 + 5s)), (V{"swp1:R"}));
    // Taken down by hand long before an isolation: not the hold's either.
    hold->portSeen("swp1", false, kT0 + 100s);
    hold->setPresent({});
    EXPECT_TRUE(acts(hold->decide(kT0 + 200s)).empty());
    hold->setPresent({kA, kB, kC});
    EXPECT_TRUE(acts(hold->decide(kT0 + 210s)).empty());
    EXPECT_EQ(hold->records().count("swp2"), 0U);
}

TEST_F(PortHoldTest, AHeldPortRaisedByHandIsLoweredAgainWhileIsolated) {
    applied(startWith({}), kT0);
    hold->portSeen("swp1", true, kT0 + 5s);
    EXPECT_EQ(acts(hold->decide(kT0 + 5s)), (V{"swp1:L"}));
}

TEST_F(PortHoldTest, APreviousRunsHoldIsAdoptedAndRaised) {
    hold = std::make_unique<PortHold>(settings(), kT0);
    hold->adopt("swp1");                 // read from STATE_DB before the port was seen
    hold->portSeen("swp1", false, kT0);  // still down
    hold->portSeen("swp2", false, kT0);  // down, no record: the operator's
    hold->setPresent({kA, kB, kC});
    EXPECT_EQ(acts(hold->decide(kT0)), (V{"swp1:R"}));
    // Adopted after being seen (STATE_DB answered late), while released: raised then.
    hold->adopt("swp2");
    EXPECT_EQ(acts(hold->decide(kT0 + 1s)), (V{"swp2:R"}));
}

TEST_F(PortHoldTest, AnAdoptedPortSomeoneRaisedMeanwhileIsNotOurs) {
    hold = std::make_unique<PortHold>(settings(), kT0);
    hold->adopt("swp1");
    hold->portSeen("swp1", true, kT0);
    hold->setPresent({kA, kB, kC});
    EXPECT_TRUE(acts(hold->decide(kT0)).empty());
    EXPECT_EQ(hold->records().count("swp1"), 0U);
}

netlink::KernelRoute route(const IpPrefix& dst, const std::vector<int>& oifs,
                           uint8_t type = RTN_UNICAST) {
    netlink::KernelRoute r;
    r.dst = dst;
    r.table = RT_TABLE_MAIN;
    r.type = type;
    for (int oif : oifs) r.nexthops.push_back({oif, *IpAddr::parse("169.254.0.1"), 1, true});
    return r;
}

TEST(FabricPrefixes, OnlyExactUnicastRoutesThroughAFabricLinkThatIsUpCount) {
    netlink::RouteFeed::Routes routes;
    auto add = [&routes](const netlink::KernelRoute& r) { routes[netlink::keyOf(r)] = r; };
    add(route(kA, {20, 22}));                          // via an uplink that is up
    add(route(kB, {11}));                              // via a host port only
    add(route(kC, {}, RTN_BLACKHOLE));                 // a discard route
    add(route(*IpPrefix::parse("10.0.0.0/8"), {20}));  // covers them, but is not them
    // The uplinks up: 20 and 21 (22 is down, 11 and 12 are host ports).
    auto view = fabricView(routes, {kA, kB, kC}, {20, 21});
    EXPECT_EQ(view.present, (std::set<IpPrefix>{kA}));
    EXPECT_TRUE(view.anyRoute);
    // Its uplink down: the kernel's leftover routes through it do not count.
    view = fabricView(routes, {kA, kB, kC}, {21});
    EXPECT_TRUE(view.present.empty());
    EXPECT_FALSE(view.anyRoute);
    // No listed prefix, but another route through the fabric (a spine's loopback): the
    // leaf is still in the fabric. A connected route of the uplink itself says nothing.
    auto loopback = route(*IpPrefix::parse("10.254.0.9/32"), {21});
    loopback.protocol = RTPROT_BGP;
    add(loopback);
    auto connected = route(*IpPrefix::parse("10.0.0.0/31"), {23});
    connected.protocol = RTPROT_KERNEL;
    add(connected);
    view = fabricView(routes, {kA, kB, kC}, {21, 23});
    EXPECT_TRUE(view.present.empty());
    EXPECT_TRUE(view.anyRoute);
    EXPECT_FALSE(fabricView(routes, {kA, kB, kC}, {23}).anyRoute);
}

TEST(FabricPrefixesConfig, ParsedAndRefusedWithTheFieldNamed) {
    auto parse = [](const std::string& prefixes) {
        nlohmann::json doc = {{"HOSTROUTED", {{"global", {{"fabric_prefixes", prefixes}}}}}};
        return parseConfig(doc);
    };
    auto ok = parse("10.1.2.0/24, 10.1.3.0/24");
    ASSERT_TRUE(std::holds_alternative<Config>(ok));
    EXPECT_EQ(std::get<Config>(ok).fabricPrefixes, (std::vector<IpPrefix>{kA, kB}));
    EXPECT_EQ(std::get<Config>(ok).holdMax, 60s);
    EXPECT_TRUE(std::get<Config>(parse("")).fabricPrefixes.empty());
    for (const char* bad :
         {"10.1.2.0/24,", "10.1.2.5/24", "10.1.2.0", "nonsense/8", "10.1.2.0/24,10.1.2.0/24"}) {
        auto r = parse(bad);
        ASSERT_TRUE(std::holds_alternative<ConfigError>(r)) << bad;
        EXPECT_EQ(std::get<ConfigError>(r).where, "HOSTROUTED|global field fabric_prefixes") << bad;
    }
    nlohmann::json sonic = {
        {"HOSTROUTED", {{"global", {{"fabric_prefixes", "10.1.2.0/24"}, {"platform", "sonic"}}}}}};
    auto r = parseConfig(sonic);
    ASSERT_TRUE(std::holds_alternative<ConfigError>(r));
    EXPECT_NE(std::get<ConfigError>(r).what.find("Linux only"), std::string::npos);
    nlohmann::json bound = {{"HOSTROUTED", {{"global", {{"hold_max_s", "0"}}}}}};
    EXPECT_TRUE(std::holds_alternative<ConfigError>(parseConfig(bound)));
}

}  // namespace
}  // namespace twinrail::hostrouted
