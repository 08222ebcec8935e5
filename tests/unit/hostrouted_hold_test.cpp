// The host-port hold in a real Daemon on fakes (hostrouted_harness.h): routes played into
// its route feed, admin state through the link control edge, rows in STATE_DB.
#include <linux/rtnetlink.h>

#include "hostrouted_harness.h"

namespace twinrail::hostrouted::fixture {
namespace {

const char* kHeld = "HOST_PORT_HOLD_TABLE|swp1";

json holdConfig() {
    json doc = baseConfig();
    doc["HOSTROUTED"]["global"]["fabric_prefixes"] = "10.1.2.0/24,10.1.3.0/24";
    doc["HOSTROUTED"]["global"]["hold_max_s"] = "30";
    return doc;
}

netlink::KernelRoute fabricRoute(const char* prefix, int oif) {
    netlink::KernelRoute r;
    r.dst = *IpPrefix::parse(prefix);
    r.table = RT_TABLE_MAIN;
    r.protocol = RTPROT_BGP;
    r.nexthops.push_back({oif, ip("169.254.0.1"), 1, true});
    return r;
}

using Calls = std::vector<std::pair<std::string, bool>>;

class HostroutedHoldTest : public HostroutedHarness {
  protected:
    fakes::FakeRouteFeed& feed() { return *feeds.back(); }
    bool adminUp(const char* name) { return kernel->linkNamed(name)->adminUp; }
};

TEST_F(HostroutedHoldTest, HeldFromStartUntilEveryFabricPrefixIsRouted) {
    startDaemon(configOf(holdConfig()));
    EXPECT_EQ(links->calls, (Calls{{"swp1", false}, {"swp2", false}}));
    EXPECT_FALSE(adminUp("swp1"));
    EXPECT_TRUE(adminUp("uplink"));  // not a host port
    EXPECT_EQ(stateField(kHeld, "state"), "held");
    EXPECT_EQ(stateField(kHeld, "reason"), "start-up: waiting for the fabric prefixes");
    // One prefix, and one through a host port (not the fabric): still held.
    feed().set(fabricRoute("10.1.2.0/24", kUplink));
    feed().set(fabricRoute("10.1.3.0/24", kSwp2));
    settle();
    EXPECT_EQ(links->calls.size(), 2U);
    feed().set(fabricRoute("10.1.3.0/24", kUplink));
    settle();
    EXPECT_EQ(links->calls,
              (Calls{{"swp1", false}, {"swp2", false}, {"swp1", true}, {"swp2", true}}));
    EXPECT_TRUE(adminUp("swp1"));
    EXPECT_EQ(stateField(kHeld, "state"), "released");
    EXPECT_EQ(stateField(kHeld, "reason"), "all 2 fabric prefixes present");
}

TEST_F(HostroutedHoldTest, OneRemoteLeafGoneHoldsNothingAndIsolationHoldsAgain) {
    startDaemon(configOf(holdConfig()));
    feed().set(fabricRoute("10.1.2.0/24", kUplink));
    feed().set(fabricRoute("10.1.3.0/24", kUplink));
    settle();
    links->calls.clear();
    feed().remove(fabricRoute("10.1.2.0/24", kUplink));
    settle();
    EXPECT_TRUE(links->calls.empty());
    feed().remove(fabricRoute("10.1.3.0/24", kUplink));
    settle();
    EXPECT_EQ(links->calls, (Calls{{"swp1", false}, {"swp2", false}}));
    EXPECT_EQ(stateField(kHeld, "reason"), "isolated: none of the 2 fabric prefixes");
    // SIGTERM: the holds stay as they are.
    daemon->stop();
    settle();
    EXPECT_FALSE(adminUp("swp1"));
    EXPECT_EQ(stateField(kHeld, "state"), "held");
}

// A restarted hostrouted finds the ports the previous run held, and raises only those.
class HostroutedHoldRestartTest : public HostroutedHoldTest {
  protected:
    void seedKernel() override {
        auto down = [](int ifindex, const char* name) {
            auto l = link(ifindex, name, false);
            l.adminUp = false;
            return l;
        };
        kernel->setLink(down(kSwp1, "swp1"));  // held by the previous run
        kernel->setLink(down(kSwp2, "swp2"));  // an operator's
        kernel->setLink(link(kUplink, "uplink", true));
        kernel->addAddress({kSwp1, *IpPrefix::parse("10.0.1.1/24")});
        kernel->addAddress({kSwp2, *IpPrefix::parse("10.0.2.1/24")});
    }
};

TEST_F(HostroutedHoldRestartTest, OnlyThePreviousRunsHoldsAreRaised) {
    seedStateDb[kHeld] = {{"state", "held"}, {"reason", "isolated"}, {"since", ""}};
    seedStateDb["HOST_PORT_HOLD_TABLE|gone0"] = {{"state", "released"}};
    startDaemon(configOf(holdConfig()));
    EXPECT_TRUE(links->calls.empty());  // no routes yet: still held, nothing to lower
    EXPECT_EQ(stateField(kHeld, "state"), "held");
    EXPECT_EQ(stateField("HOST_PORT_HOLD_TABLE|gone0", "state"), std::nullopt);
    feed().set(fabricRoute("10.1.2.0/24", kUplink));
    feed().set(fabricRoute("10.1.3.0/24", kUplink));
    settle();
    EXPECT_EQ(links->calls, (Calls{{"swp1", true}}));
    EXPECT_FALSE(adminUp("swp2"));
    EXPECT_EQ(stateField(kHeld, "state"), "released");
}

// A released port has lost its neighbors and a bonded host does not speak again by
// itself: its bound addresses are asked at once, and the answer routes them.
TEST_F(HostroutedHoldTest, BoundHostsAreAskedWhenTheirPortComesBackAndRoutedOnTheAnswer) {
    json doc = holdConfig();
    doc["HOSTROUTED_BINDING"] = {{"10.0.1.10", {{"ifname", "swp1"}}}};
    startDaemon(configOf(doc));
    EXPECT_EQ(prober->probesTo(ip("10.0.1.10")), 0U);  // held: nothing to ask on
    feed().set(fabricRoute("10.1.2.0/24", kUplink));
    feed().set(fabricRoute("10.1.3.0/24", kUplink));
    settle();
    ASSERT_TRUE(adminUp("swp1"));
    EXPECT_EQ(prober->probesTo(ip("10.0.1.10")), 1U);
    EXPECT_FALSE(prober->sent.back().targetMac.has_value());  // broadcast: MAC unknown
    EXPECT_EQ(routes->routedVia(ip("10.0.1.10")), 0);
    prober->heard(kSwp1, ip("10.0.1.10"), kHostA);
    settle();
    EXPECT_EQ(routes->routedVia(ip("10.0.1.10")), kSwp1);
    // An address not bound there is not routed from what is heard.
    prober->heard(kSwp1, ip("10.0.1.20"), kHostB);
    settle();
    EXPECT_EQ(routes->routedVia(ip("10.0.1.20")), 0);
}

TEST_F(HostroutedHoldTest, OffWithoutFabricPrefixes) {
    startDaemon(configOf(baseConfig()));
    EXPECT_TRUE(links->calls.empty());
    EXPECT_TRUE(feeds.empty());  // no route feed at all
}

}  // namespace
}  // namespace twinrail::hostrouted::fixture
