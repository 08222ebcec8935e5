// Static smart routing: the pure decisions (uplink_pins.h), the config, the plan's pins
// and the netlink messages the pinner sends and reads.
#include "uplink_pins.h"

#include <gtest/gtest.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "config.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/netlink/policy_writer.h"
#include "twinrail/plan/outputs.h"

using namespace twinrail;
using namespace twinrail::hostrouted;
using netlink::KernelRoute;
using netlink::WeightedNexthop;

namespace {

constexpr int kUp1 = 11, kUp2 = 12, kDown = 3;

WeightedNexthop via(int ifindex) {
    return {ifindex, *IpAddr::parse("169.254.0.1"), 50, true};
}

KernelRoute route(const char* prefix, std::vector<WeightedNexthop> nh, uint32_t metric = 20,
                  uint8_t type = RTN_UNICAST) {
    KernelRoute r;
    r.dst = *IpPrefix::parse(prefix);
    r.protocol = 186;
    r.metric = metric;
    r.type = type;
    r.nexthops = std::move(nh);
    return r;
}

}  // namespace

TEST(UplinkPins, MultipathThroughTheUplinkIsRestrictedToIt) {
    auto main = route("10.128.1.0/24", {via(kUp1), via(kUp2)});
    auto e = pinnedEntry({&main}, kUp1, 1000, 201);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->type, RTN_UNICAST);
    EXPECT_EQ(e->table, 1000u);
    EXPECT_EQ(e->protocol, 201);
    EXPECT_EQ(e->metric, 0u);
    ASSERT_EQ(e->nexthops.size(), 1u);
    EXPECT_EQ(e->nexthops[0].ifindex, kUp1);
    EXPECT_TRUE(e->nexthops[0].onlink);  // FRR's 169.254.0.1 next hop needs it
    EXPECT_EQ(e->nexthops[0].weight, 1u);
}

TEST(UplinkPins, EverythingElseThrowsToMain) {
    // The uplink's spine lost the prefix: BGP routes it through the other one only.
    auto other = route("10.128.1.2/32", {via(kUp2)});
    EXPECT_EQ(pinnedEntry({&other}, kUp1, 1000, 201)->type, RTN_THROW);
    // A local host (a /32 on a downlink) stays local, even under a pinned aggregate.
    auto local = route("10.128.0.2/32", {{kDown, IpAddr{}, 1, false}});
    EXPECT_EQ(pinnedEntry({&local}, kUp1, 1000, 201)->type, RTN_THROW);
    // The discard route of the leaf's own subnet is no way out.
    auto discard = route("10.128.0.0/24", {}, 20, RTN_BLACKHOLE);
    EXPECT_EQ(pinnedEntry({&discard}, kUp1, 1000, 201)->type, RTN_THROW);
    EXPECT_FALSE(pinnedEntry({}, kUp1, 1000, 201));
}

TEST(UplinkPins, APathPathqdThinnedIsNotPinned) {
    auto thin = via(kUp1), full = via(kUp2);
    thin.weight = 20;  // pathqd: a quarter of the other path
    full.weight = 80;
    auto main = route("10.128.1.0/24", {thin, full});
    EXPECT_EQ(pinnedEntry({&main}, kUp1, 1000, 201, 0.5)->type, RTN_THROW);
    EXPECT_EQ(pinnedEntry({&main}, kUp2, 1000, 201, 0.5)->type, RTN_UNICAST);
    EXPECT_EQ(pinnedEntry({&main}, kUp1, 1000, 201, 0.0)->type, RTN_UNICAST);  // regardless
    thin.weight = 45;
    full.weight = 55;
    main = route("10.128.1.0/24", {thin, full});
    EXPECT_EQ(pinnedEntry({&main}, kUp1, 1000, 201, 0.5)->type, RTN_UNICAST);
}

TEST(UplinkPins, TheLowestMetricDecides) {
    auto best = route("10.128.1.0/24", {via(kUp2)}, 20);
    auto worse = route("10.128.1.0/24", {via(kUp1)}, 200);
    EXPECT_EQ(pinnedEntry({&best, &worse}, kUp1, 1000, 201)->type, RTN_THROW);
}

TEST(UplinkPins, LinkLocalAndMulticastAreNotMirrored) {
    auto ll = route("fe80::/64", {{kUp1, IpAddr{}, 1, false}});
    auto mc = route("ff00::/8", {{kUp1, IpAddr{}, 1, false}});
    EXPECT_FALSE(pinnedEntry({&ll}, kUp1, 1000, 201));
    EXPECT_FALSE(pinnedEntry({&mc}, kUp1, 1000, 201));
    auto global = route("2001:db8::/64", {{kUp1, *IpAddr::parse("fe80::1"), 1, false}});
    EXPECT_EQ(pinnedEntry({&global}, kUp1, 1000, 201)->type, RTN_UNICAST);
}

TEST(UplinkPins, SameEntryIgnoresTheReportedWeight) {
    auto main = route("10.128.1.0/24", {via(kUp1), via(kUp2)});
    auto wanted = *pinnedEntry({&main}, kUp1, 1000, 201);
    auto present = wanted;
    present.nexthops[0].weight = 1;
    EXPECT_TRUE(sameEntry(present, wanted));
    present.nexthops[0].ifindex = kUp2;
    EXPECT_FALSE(sameEntry(present, wanted));
    auto throwing = wanted;
    throwing.type = RTN_THROW;
    EXPECT_FALSE(sameEntry(throwing, wanted));
}

TEST(UplinkPins, TablesFollowTheUplinksInNameOrder) {
    PinSettings s;
    s.pins = {{"swp1", "swp4"}, {"swp2", "swp3"}, {"swp5", "swp3"}};
    auto t = pinTables(s);
    EXPECT_EQ(t, (std::map<std::string, uint32_t>{{"swp3", 1000}, {"swp4", 1001}}));
}

TEST(UplinkPins, PinnedOnlyWhileTheUplinkIsUpWithRoutes) {
    PinSettings s;
    s.ipv6 = false;
    auto d = decidePin(s, "swp1", "swp3", 1000, {true, true, 5, 0});
    EXPECT_EQ(d.state, PinState::Pinned);
    ASSERT_EQ(d.rules.size(), 1u);
    EXPECT_EQ(d.rules[0], (netlink::PolicyRule{AF_INET, 1000, "swp1", 1000, 201}));
    d = decidePin(s, "swp1", "swp3", 1000, {true, false, 5, 0});
    EXPECT_EQ(d.state, PinState::Fallback);
    EXPECT_EQ(d.reason, "uplink swp3 down");
    EXPECT_TRUE(d.rules.empty());
    EXPECT_EQ(decidePin(s, "swp1", "swp3", 1000, {false, false, 0, 0}).reason,
              "uplink swp3 absent");
    EXPECT_EQ(decidePin(s, "swp1", "swp3", 1000, {true, true, 0, 3}).reason,
              "no routes through swp3");  // IPv6 routes only, and IPv6 is off
    s.ipv6 = true;
    EXPECT_EQ(decidePin(s, "swp1", "swp3", 1000, {true, true, 0, 3}).rules.size(), 1u);
}

TEST(UplinkPinsConfig, ParsesAndNamesWhatIsWrong) {
    auto cfg = parseConfig(nlohmann::json::parse(R"({
        "HOSTROUTED": {"global": {"pin_table_base": "2000", "pin_rule_priority": "500"}},
        "UPLINK_PIN": {"Ethernet0": {"uplink": "Ethernet64"}, "Ethernet4": {"uplink": "Ethernet64"}}
    })"));
    ASSERT_TRUE(std::holds_alternative<Config>(cfg));
    const auto& c = std::get<Config>(cfg);
    EXPECT_EQ(c.uplinkPins.at("Ethernet4"), "Ethernet64");
    EXPECT_EQ(c.pinTableBase, 2000u);
    EXPECT_EQ(c.pinRulePriority, 500u);
    auto error = [](const char* text) {
        auto r = parseConfig(nlohmann::json::parse(text));
        return std::holds_alternative<ConfigError>(r) ? std::get<ConfigError>(r).str() : "";
    };
    EXPECT_NE(error(R"({"UPLINK_PIN": {"swp1": {}}})").find("UPLINK_PIN|swp1 field uplink"),
              std::string::npos);
    EXPECT_NE(error(R"({"UPLINK_PIN": {"swp1": {"uplink": "swp1"}}})").find("itself"),
              std::string::npos);
    EXPECT_NE(error(R"({"UPLINK_PIN": {"swp*": {"uplink": "swp3"}}})").find("UPLINK_PIN|swp*"),
              std::string::npos);
    EXPECT_NE(error(R"({"UPLINK_PIN": {"swp1": {"uplink": "swp3", "table": "5"}}})"), "");
    EXPECT_NE(error(R"({"UPLINK_PIN": {"swp1": {"uplink": "swp2"}, "swp2": {"uplink": "swp3"}}})")
                  .find("is pinned itself"),
              std::string::npos);
    EXPECT_NE(
        error(R"({"HOSTROUTED": {"global": {"pin_table_base": "254"}}})").find("pin_table_base"),
        std::string::npos);
    EXPECT_NE(error(R"({"HOSTROUTED": {"global": {"pin_rule_priority": "32766"}}})"), "");
}

TEST(UplinkPinsPlan, DownlinksShareUplinksInProportion) {
    auto built = plan::buildPlan(lab::defaultLabRequest());
    ASSERT_TRUE(std::holds_alternative<plan::Plan>(built));
    const auto& p = std::get<plan::Plan>(built);
    std::map<std::string, std::string> pins;
    for (const auto& port : p.findSwitch("p1-leaf1")->ports)
        if (port.role == plan::PortRole::Host) pins[port.name] = port.pinnedUplink;
    EXPECT_EQ(pins, (std::map<std::string, std::string>{{"swp1", "swp3"}, {"swp2", "swp4"}}));

    // The seed's 2x200G NIC ports on 400G uplinks: two downlinks per uplink.
    plan::Request r;
    r.gpus = 512;
    r.leafModel = *plan::findModel("CX864E-N");
    auto big = plan::buildPlan(r);
    ASSERT_TRUE(std::holds_alternative<plan::Plan>(big));
    const auto& leaf = std::get<plan::Plan>(big).switches.front();
    std::map<std::string, int> perUplink;
    int downlinks = 0;
    for (const auto& port : leaf.ports) {
        if (port.role != plan::PortRole::Host) continue;
        ++downlinks;
        ++perUplink[port.pinnedUplink];
    }
    ASSERT_GT(downlinks, 0);
    int uplinks = 0;
    for (const auto& port : leaf.ports) uplinks += port.role == plan::PortRole::Uplink;
    EXPECT_EQ(static_cast<int>(perUplink.size()), std::min(uplinks, downlinks));
    for (const auto& [up, n] : perUplink) EXPECT_EQ(n, downlinks / uplinks) << up;
}

TEST(UplinkPinsPlan, ConfigOnlyWithStaticAndPinsSurviveTheFile) {
    auto built = plan::buildPlan(lab::defaultLabRequest());
    auto p = std::get<plan::Plan>(built);
    const auto& leaf = *p.findSwitch("p1-leaf1");
    EXPECT_FALSE(plan::configDb(p, leaf).contains("UPLINK_PIN"));
    p.request.lb = plan::Request::Lb::Static;
    auto db = plan::configDb(p, leaf);
    EXPECT_EQ(db["UPLINK_PIN"]["swp1"]["uplink"], "swp3");
    auto back = plan::planFromJson(plan::toJson(p));
    ASSERT_TRUE(std::holds_alternative<plan::Plan>(back))
        << std::get<plan::SizingError>(back).message;
    EXPECT_EQ(std::get<plan::Plan>(back), p);

    // An older file gets the pins computed; a pin that is not an uplink is refused.
    auto j = plan::toJson(p);
    j["version"] = 2;
    for (auto& sw : j["switches"])
        for (auto& port : sw["ports"]) port.erase("pinned_uplink");
    auto old = plan::planFromJson(j);
    ASSERT_TRUE(std::holds_alternative<plan::Plan>(old));
    EXPECT_EQ(std::get<plan::Plan>(old).findSwitch("p1-leaf1")->ports, leaf.ports);
    j = plan::toJson(p);
    j["switches"][0]["ports"][0]["pinned_uplink"] = "swp1";
    auto bad = plan::planFromJson(j);
    ASSERT_TRUE(std::holds_alternative<plan::SizingError>(bad));
    EXPECT_NE(std::get<plan::SizingError>(bad).message.find("pinned_uplink"), std::string::npos);
}

TEST(PolicyMessages, ARouteWrittenReadsBackAsTheSameRoute) {
    KernelRoute r = route("10.128.1.0/24", {via(kUp1)}, 0);
    r.table = 1000;
    r.protocol = 201;
    r.nexthops[0].weight = 1;
    auto bytes = netlink::encodePolicyOp({netlink::PolicyOp::ReplaceRoute, r, {}, {}}, 7);
    auto ev = netlink::decodeRouteEvent(reinterpret_cast<const nlmsghdr*>(bytes.data()));
    ASSERT_TRUE(ev);
    EXPECT_FALSE(ev->removed);
    EXPECT_EQ(ev->route, r);

    // IPv4 through an IPv6 link-local (RFC 5549, RTA_VIA), multipath with weights.
    KernelRoute mp = route(
        "10.128.2.0/24",
        {{kUp1, *IpAddr::parse("fe80::1"), 3, false}, {kUp2, *IpAddr::parse("fe80::2"), 7, false}},
        20);
    mp.table = 254;
    bytes = netlink::encodePolicyOp({netlink::PolicyOp::ReplaceRoute, mp, {}, {}}, 8);
    ev = netlink::decodeRouteEvent(reinterpret_cast<const nlmsghdr*>(bytes.data()));
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->route, mp);

    KernelRoute t = route("10.0.0.0/8", {}, 0, RTN_THROW);
    t.table = 70000;  // past 255: RTA_TABLE only
    bytes = netlink::encodePolicyOp({netlink::PolicyOp::ReplaceRoute, t, {}, {}}, 9);
    ev = netlink::decodeRouteEvent(reinterpret_cast<const nlmsghdr*>(bytes.data()));
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->route, t);
}

TEST(PolicyMessages, ARuleWrittenReadsBackAsTheSameRule) {
    netlink::PolicyRule r{AF_INET6, 1000, "Ethernet0", 1003, 201};
    auto bytes = netlink::encodePolicyOp({netlink::PolicyOp::AddRule, {}, r, {}}, 1);
    auto back = netlink::decodeRule(reinterpret_cast<const nlmsghdr*>(bytes.data()));
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, r);
}

TEST(PolicyMessages, DecodersRefuseWhatIsNotTheirs) {
    std::vector<uint8_t> shortMsg(sizeof(nlmsghdr), 0);
    auto* h = reinterpret_cast<nlmsghdr*>(shortMsg.data());
    h->nlmsg_len = sizeof(nlmsghdr);
    h->nlmsg_type = RTM_NEWROUTE;
    EXPECT_FALSE(netlink::decodeRouteEvent(h));
    h->nlmsg_type = RTM_NEWRULE;
    EXPECT_FALSE(netlink::decodeRule(h));
    h->nlmsg_type = RTM_NEWLINK;
    EXPECT_FALSE(netlink::decodeRouteEvent(h));
}
