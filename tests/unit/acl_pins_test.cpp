// Static smart routing on SONiC (acl_pins.h, acl_pinner.h): the rules aclorch gets in
// APPL_DB for each pinned downlink, the local exceptions, the fallbacks, and what the
// pinner writes when uplinks and their next hops come and go (a fake sink stands in for
// APPL_DB; the producer protocol itself is producer_table_it's).
#include <gtest/gtest.h>
#include <linux/neighbour.h>

#include <boost/asio/io_context.hpp>

#include "acl_pinner.h"
#include "acl_pins.h"
#include "twinrail_fakes/kernel.h"

namespace hr = twinrail::hostrouted;
using twinrail::IpAddr;
using twinrail::IpPrefix;
using Fields = twinrail::redis::Fields;

namespace {

IpAddr ip(const char* s) {
    return *IpAddr::parse(s);
}
IpPrefix pfx(const char* s) {
    return *IpPrefix::parse(s);
}

std::string field(const Fields& f, const std::string& name) {
    for (const auto& [k, v] : f)
        if (k == name) return v;
    return "";
}

class FakeSink final : public hr::AclRuleSink {
  public:
    void start() override {
        up = true;
        if (ready_) ready_();
    }
    bool ready() const override { return up; }
    void onReady(std::function<void()> fn) override { ready_ = std::move(fn); }
    void set(const std::string& rule, const Fields& fields) override {
        rules[rule] = fields;
        ++sets;
    }
    void del(const std::string& rule) override {
        rules.erase(rule);
        ++dels;
    }
    void readRules(std::function<void(bool, std::vector<std::string>)> done) override {
        std::vector<std::string> names;
        for (const auto& [r, f] : rules) names.push_back(r);
        done(readOk, names);
    }
    void reconnect() { start(); }
    bool up = false;
    bool readOk = true;
    std::map<std::string, Fields> rules;
    int sets = 0, dels = 0;

  private:
    std::function<void()> ready_;
};

twinrail::netlink::LinkState link(int ifindex, const std::string& name, bool up) {
    twinrail::netlink::LinkState l;
    l.ifindex = ifindex;
    l.name = name;
    l.operUp = up;
    l.adminUp = true;
    return l;
}

twinrail::netlink::NeighborEntry neigh(int ifindex, const char* addr, uint16_t state) {
    twinrail::netlink::NeighborEntry n;
    n.ifindex = ifindex;
    n.ip = ip(addr);
    n.state = state;
    return n;
}

// The pinner's view of main: a fake feed, kept where the test can reach it.
twinrail::fakes::FakeRouteFeed* g_feed = nullptr;
twinrail::netlink::RouteFeedFactory feedFactory() {
    return [](std::set<uint32_t> tables, twinrail::netlink::RouteFeed::OnChange f) {
        auto feed =
            std::make_unique<twinrail::fakes::FakeRouteFeed>(std::move(tables), std::move(f));
        g_feed = feed.get();
        return feed;
    };
}

twinrail::netlink::KernelRoute route(const char* prefix,
                                     std::vector<std::pair<int, uint32_t>> nexthops) {
    twinrail::netlink::KernelRoute r;
    r.dst = pfx(prefix);
    r.protocol = 186;  // bgp
    r.metric = 20;
    for (const auto& [ifindex, weight] : nexthops)
        r.nexthops.push_back({ifindex, ip("169.254.0.1"), weight, true});
    return r;
}

// Runs what is queued (the pinner's one write pass per burst); restarts the io_context,
// which stops once it runs out of work.
void drain(boost::asio::io_context& io) {
    io.restart();
    io.poll();
}

}  // namespace

TEST(AclPins, EachPinnedDownlinkRedirectsToItsUplinksNextHopAndLocalTrafficStays) {
    const std::map<std::string, std::string> pins{
        {"Ethernet0", "Ethernet256"}, {"Ethernet2", "Ethernet256"}, {"Ethernet4", "Ethernet260"}};
    std::map<std::string, hr::AclUplink> uplinks{{"Ethernet256", {true, ip("fe80::1")}},
                                                 {"Ethernet260", {true, ip("fe80::2")}}};
    auto plan = hr::aclPinPlan(pins, uplinks, {pfx("10.128.0.1/24"), pfx("10.254.0.1/32")}, {});
    const Fields& pin = plan.rules.at("PIN_Ethernet0");
    EXPECT_EQ(field(pin, "IN_PORTS"), "Ethernet0");
    EXPECT_EQ(field(pin, "REDIRECT_ACTION"), "fe80::1@Ethernet256");
    EXPECT_EQ(field(pin, "IP_TYPE"), "IP");
    EXPECT_EQ(field(pin, "PRIORITY"), "1000");
    EXPECT_EQ(field(pin, "PACKET_ACTION"), "");  // one action per rule (aclorch)
    EXPECT_EQ(field(plan.rules.at("PIN_Ethernet4"), "REDIRECT_ACTION"), "fe80::2@Ethernet260");
    // The rail subnet (host bits masked), the loopback, link-local and multicast: forwarded,
    // and above every pin.
    std::set<std::string> local;
    for (const auto& [name, f] : plan.rules) {
        for (char c : name) EXPECT_NE(c, ':') << name;  // aclorch splits keys on ':'
        if (name.rfind("LOCAL_", 0) != 0) continue;
        local.insert(field(f, "DST_IP") + field(f, "DST_IPV6"));
        EXPECT_EQ(field(f, "PACKET_ACTION"), "FORWARD");
        EXPECT_GT(std::stoi(field(f, "PRIORITY")), 1000);
    }
    EXPECT_EQ(local, (std::set<std::string>{"10.128.0.0/24", "10.254.0.1/32", "fe80::/10",
                                            "ff00::/8", "224.0.0.0/4", "169.254.0.0/16"}));
    // An uplink down, or with no next hop yet, or absent: no rule, the reason said.
    uplinks["Ethernet256"].operUp = false;
    uplinks["Ethernet260"].nextHop.reset();
    plan = hr::aclPinPlan(pins, uplinks, {}, {});
    EXPECT_EQ(plan.rules.count("PIN_Ethernet0"), 0U);
    EXPECT_EQ(plan.rules.count("PIN_Ethernet4"), 0U);
    EXPECT_EQ(plan.pins.at("Ethernet0").reason, "uplink Ethernet256 down");
    EXPECT_EQ(plan.pins.at("Ethernet4").reason, "no next hop known on uplink Ethernet260 yet");
    plan = hr::aclPinPlan({{"Ethernet0", "Ethernet999"}}, uplinks, {}, {});
    EXPECT_EQ(plan.pins.at("Ethernet0").reason, "uplink Ethernet999 not present");
}

TEST(AclPins, TheNextHopIsTheUplinksUsableLinkLocalPeer) {
    using N = hr::UplinkNeighbor;
    EXPECT_EQ(hr::aclNextHop({}), std::nullopt);
    EXPECT_EQ(hr::aclNextHop({{ip("169.254.0.1"), NUD_PERMANENT}}), std::nullopt);
    EXPECT_EQ(hr::aclNextHop({{ip("2001:db8::1"), NUD_REACHABLE}}), std::nullopt);
    EXPECT_EQ(hr::aclNextHop({{ip("fe80::9"), NUD_FAILED}}), std::nullopt);
    EXPECT_EQ(hr::aclNextHop({N{ip("fe80::9"), NUD_STALE}, N{ip("fe80::3"), NUD_REACHABLE},
                              N{ip("fe80::1"), NUD_INCOMPLETE}}),
              ip("fe80::3"));
    EXPECT_EQ(hr::networkOf(pfx("10.128.7.9/22")).str(), "10.128.4.0/22");
    EXPECT_EQ(hr::networkOf(pfx("2001:db8::77/64")).str(), "2001:db8::/64");
}

// Where main does not send a prefix through an uplink, its downlinks route it; a more
// specific prefix inside that main sends through the uplink again is pinned again; the
// priorities make the ACL's answer main's longest match. A healthy fabric needs none.
TEST(AclPins, PrefixesTheUplinksSpineLostAreRoutedAndTheRestStayPinned) {
    const std::map<std::string, std::string> pins{
        {"Ethernet0", "Ethernet256"}, {"Ethernet2", "Ethernet256"}, {"Ethernet4", "Ethernet260"}};
    const std::map<std::string, hr::AclUplink> uplinks{{"Ethernet256", {true, ip("fe80::1")}},
                                                       {"Ethernet260", {true, ip("fe80::2")}}};
    const std::set<std::string> both{"Ethernet256", "Ethernet260"};
    hr::AclRoutes routes{{pfx("0.0.0.0/0"), both},
                         {pfx("10.1.0.0/16"), {"Ethernet260"}},
                         {pfx("10.1.2.0/24"), both},
                         {pfx("10.1.2.7/32"), both},
                         {pfx("10.2.0.0/16"), both},
                         {pfx("10.128.0.0/24"), {}},  // the leaf's own rail: LOCAL's
                         {pfx("2001:db8:1::/64"), {"Ethernet260"}}};
    auto plan = hr::aclPinPlan(pins, uplinks, {pfx("10.128.0.1/24")}, routes);
    std::map<std::string, Fields> prefixRules;
    for (const auto& [name, f] : plan.rules)
        if (name.rfind("P_", 0) == 0) prefixRules[name] = f;
    ASSERT_EQ(prefixRules.size(), 3U) << "only where the answer changes";
    const Fields& lost = prefixRules.at("P_Ethernet256_10.1.0.0_16");
    EXPECT_EQ(field(lost, "IN_PORTS"), "Ethernet0,Ethernet2");
    EXPECT_EQ(field(lost, "DST_IP"), "10.1.0.0/16");
    EXPECT_EQ(field(lost, "PACKET_ACTION"), "FORWARD");
    EXPECT_EQ(field(lost, "PRIORITY"), "1017");
    const Fields& again = prefixRules.at("P_Ethernet256_10.1.2.0_24");
    EXPECT_EQ(field(again, "REDIRECT_ACTION"), "fe80::1@Ethernet256");
    EXPECT_EQ(field(again, "PACKET_ACTION"), "");
    EXPECT_EQ(field(again, "PRIORITY"), "1025");
    const Fields& v6 = prefixRules.at("P_Ethernet256_2001-db8-1--_64");
    EXPECT_EQ(field(v6, "DST_IPV6"), "2001:db8:1::/64");
    EXPECT_EQ(field(v6, "PRIORITY"), "1065");
    EXPECT_LT(std::stoi(field(v6, "PRIORITY")), hr::kLocalRulePriority - 10);
    EXPECT_EQ(plan.pins.at("Ethernet0").state, hr::PinState::Pinned);
    // Everything through every uplink again: the pins alone.
    for (auto& [prefix, through] : routes) through = both;
    plan = hr::aclPinPlan(pins, uplinks, {pfx("10.128.0.1/24")}, routes);
    for (const auto& [name, f] : plan.rules) EXPECT_NE(name.rfind("P_", 0), 0U) << name;
}

// More prefix rules than the ACL has room for: that uplink's downlinks take the multipath,
// saying why; the other uplink stays pinned.
TEST(AclPins, AnUplinkNeedingMoreRulesThanTheAclHoldsFallsBack) {
    const std::map<std::string, std::string> pins{{"Ethernet0", "Ethernet256"},
                                                  {"Ethernet4", "Ethernet260"}};
    const std::map<std::string, hr::AclUplink> uplinks{{"Ethernet256", {true, ip("fe80::1")}},
                                                       {"Ethernet260", {true, ip("fe80::2")}}};
    hr::AclRoutes routes;
    for (size_t i = 0; i <= hr::kMaxPrefixRulesPerUplink; ++i) {
        const std::string host = "10.9." + std::to_string(i / 256) + "." + std::to_string(i % 256);
        routes[pfx((host + "/32").c_str())] = {"Ethernet260"};
    }
    auto plan = hr::aclPinPlan(pins, uplinks, {}, routes);
    EXPECT_EQ(plan.pins.at("Ethernet0").state, hr::PinState::Fallback);
    EXPECT_NE(plan.pins.at("Ethernet0").reason.find("more than 1024"), std::string::npos)
        << plan.pins.at("Ethernet0").reason;
    EXPECT_EQ(plan.rules.count("PIN_Ethernet0"), 0U);
    EXPECT_EQ(plan.pins.at("Ethernet4").state, hr::PinState::Pinned);
    for (const auto& [name, f] : plan.rules) EXPECT_NE(name.rfind("P_Ethernet256", 0), 0U);
}

TEST(AclPinner, WritesOnlyWhatChangesAndKeepsItsRulesAcrossARestart) {
    boost::asio::io_context io;
    auto owned = std::make_unique<FakeSink>();
    FakeSink& sink = *owned;
    sink.rules["PIN_Ethernet8"] = {{"PRIORITY", "1000"}};  // a stale rule of an older plan
    hr::PinSettings settings;
    settings.pins = {{"Ethernet0", "Ethernet256"}};
    hr::AclPinner pinner(io, settings, std::move(owned), feedFactory());
    pinner.onLink(link(10, "Ethernet0", true), false);
    pinner.onLink(link(20, "Ethernet256", true), false);
    pinner.start();
    drain(io);
    EXPECT_EQ(sink.rules.count("PIN_Ethernet8"), 0U) << "a rule of ours no plan wants";
    EXPECT_EQ(sink.rules.count("PIN_Ethernet0"), 0U) << "no next hop yet";
    EXPECT_EQ(pinner.plan().pins.at("Ethernet0").state, hr::PinState::Fallback);
    // The spine's link-local neighbor appears (BGP unnumbered's session).
    pinner.onNeighbor(neigh(20, "fe80::5", NUD_REACHABLE), false);
    pinner.onNeighbor(neigh(10, "10.128.0.2", NUD_REACHABLE), false);  // a host: ignored
    drain(io);
    ASSERT_EQ(sink.rules.count("PIN_Ethernet0"), 1U);
    EXPECT_EQ(field(sink.rules["PIN_Ethernet0"], "REDIRECT_ACTION"), "fe80::5@Ethernet256");
    const int writes = sink.sets;
    pinner.onNeighbor(neigh(20, "fe80::5", NUD_STALE), false);  // same next hop
    drain(io);
    EXPECT_EQ(sink.sets, writes) << "nothing changed, nothing written";
    // The uplink goes down: the rule goes, the downlink falls back to the multipath.
    pinner.onLink(link(20, "Ethernet256", false), false);
    drain(io);
    EXPECT_EQ(sink.rules.count("PIN_Ethernet0"), 0U);
    pinner.onLink(link(20, "Ethernet256", true), false);
    drain(io);
    EXPECT_EQ(sink.rules.count("PIN_Ethernet0"), 1U);
    // APPL_DB reconnects (Redis restarted empty): every rule is written again.
    sink.rules.clear();
    sink.reconnect();
    drain(io);
    EXPECT_EQ(sink.rules.count("PIN_Ethernet0"), 1U);
    EXPECT_GE(sink.rules.size(), 5U);  // the pin and the local rules
    // A new plan without pins: every rule of ours goes.
    pinner.setSettings({});
    drain(io);
    EXPECT_EQ(sink.rules.count("PIN_Ethernet0"), 0U);
}

// The pinner follows main: a prefix the pinned uplink's spine loses gets its FORWARD rule
// with the next pass, a path pathqd weighs under pin_min_weight_ratio too, and nothing
// is written before main's first snapshot.
TEST(AclPinner, FollowsMainPrefixByPrefix) {
    boost::asio::io_context io;
    auto owned = std::make_unique<FakeSink>();
    FakeSink& sink = *owned;
    hr::PinSettings settings;
    settings.pins = {{"Ethernet0", "Ethernet256"}};
    hr::AclPinner pinner(io, settings, std::move(owned), feedFactory());
    pinner.onLink(link(10, "Ethernet0", true), false);
    pinner.onLink(link(20, "Ethernet256", true), false);
    pinner.onLink(link(30, "Ethernet260", true), false);
    pinner.onNeighbor(neigh(20, "fe80::5", NUD_REACHABLE), false);
    drain(io);
    EXPECT_TRUE(sink.rules.empty()) << "nothing before start and main's snapshot";
    g_feed->set(route("10.2.0.0/16", {{20, 1}, {30, 1}}));
    pinner.start();
    drain(io);
    ASSERT_EQ(sink.rules.count("PIN_Ethernet0"), 1U);
    EXPECT_EQ(sink.rules.count("P_Ethernet256_10.2.0.0_16"), 0U);
    // The spine behind Ethernet256 loses 10.2.0.0/16: BGP's route keeps Ethernet260 only.
    g_feed->set(route("10.2.0.0/16", {{30, 1}}));
    drain(io);
    ASSERT_EQ(sink.rules.count("P_Ethernet256_10.2.0.0_16"), 1U);
    EXPECT_EQ(field(sink.rules["P_Ethernet256_10.2.0.0_16"], "PACKET_ACTION"), "FORWARD");
    EXPECT_EQ(sink.rules.count("PIN_Ethernet0"), 1U) << "the rest stays pinned";
    // Back through both: the exception goes. Then pathqd weighs Ethernet256's path at a
    // quarter of the other's (under the 0.5 ratio): routed again.
    g_feed->set(route("10.2.0.0/16", {{20, 1}, {30, 1}}));
    drain(io);
    EXPECT_EQ(sink.rules.count("P_Ethernet256_10.2.0.0_16"), 0U);
    g_feed->set(route("10.2.0.0/16", {{20, 1}, {30, 4}}));
    drain(io);
    EXPECT_EQ(sink.rules.count("P_Ethernet256_10.2.0.0_16"), 1U);
    g_feed->remove(route("10.2.0.0/16", {{20, 1}, {30, 4}}));
    drain(io);
    EXPECT_EQ(sink.rules.count("P_Ethernet256_10.2.0.0_16"), 0U) << "no route, no rule";
    pinner.stop();
    EXPECT_TRUE(g_feed->stopped);
}
