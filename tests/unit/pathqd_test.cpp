#include <gtest/gtest.h>

#include "config.h"
#include "frr_policy.h"
#include "link_probe.h"
#include "state_rows.h"

namespace twinrail::pathqd {
namespace {

nlohmann::json ports() {
    return nlohmann::json::parse(
        R"({"PATHQD_PORT": {"swp1": {"role": "downlink", "capacity_mbps": "400000"},
                                                      "swp2": {"role": "uplink", "int_port_id": "2"}}})");
}

std::string errorOf(const nlohmann::json& doc) {
    auto r = parseConfig(doc);
    const auto* e = std::get_if<ConfigError>(&r);
    return e != nullptr ? e->str() : "";
}

TEST(PathqdConfig, ParsesPortsAndDefaults) {
    auto r = parseConfig(ports());
    ASSERT_TRUE(std::holds_alternative<Config>(r)) << errorOf(ports());
    const auto& c = std::get<Config>(r);
    EXPECT_EQ(c.sampleInterval, std::chrono::milliseconds(100));
    EXPECT_EQ(c.ports.at("swp1").role, Role::Downlink);
    EXPECT_DOUBLE_EQ(*c.ports.at("swp1").capacityBps, 400e9);
    EXPECT_EQ(c.ports.at("swp2").intPortId, 2);
}

TEST(PathqdConfig, ErrorsNameTheField) {
    auto doc = ports();
    doc["PATHQD_PORT"]["swp1"]["role"] = "sideways";
    EXPECT_EQ(errorOf(doc), "PATHQD_PORT|swp1 field role: \"sideways\" is not uplink or downlink");
    doc = ports();
    doc["PATHQD"]["global"]["sample_interval_ms"] = "5";
    EXPECT_NE(errorOf(doc).find("PATHQD|global field sample_interval_ms"), std::string::npos);
    doc = ports();
    doc["PATHQD"]["global"]["levle"] = "8";
    EXPECT_NE(errorOf(doc).find("field levle: unknown field"), std::string::npos);
    doc = ports();
    doc["PATHQD_PORT"]["swp1"]["int_port_id"] = "2";
    EXPECT_NE(errorOf(doc).find("is used by another port"), std::string::npos);
    doc = ports();
    doc["PATHQD_PORT"]["swp3"] = nlohmann::json::object();
    EXPECT_EQ(errorOf(doc), "PATHQD_PORT|swp3 field role: missing (uplink or downlink)");
}

TEST(PathqdConfig, EcnAndPauseInputsAreTunableAndCanBeTurnedOff) {
    auto doc = ports();
    auto defaults = std::get<Config>(parseConfig(doc)).model;
    EXPECT_DOUBLE_EQ(defaults.ecnRefRatio, 0.1);
    EXPECT_DOUBLE_EQ(defaults.pauseRefPps, 1000);
    doc["PATHQD"]["global"]["ecn_ref"] = "0";
    doc["PATHQD"]["global"]["pfc_ref_pps"] = "250";
    auto r = parseConfig(doc);
    ASSERT_TRUE(std::holds_alternative<Config>(r)) << errorOf(doc);
    EXPECT_DOUBLE_EQ(std::get<Config>(r).model.ecnRefRatio, 0);
    EXPECT_DOUBLE_EQ(std::get<Config>(r).model.pauseRefPps, 250);
    doc["PATHQD"]["global"]["ecn_ref"] = "1.5";
    EXPECT_NE(errorOf(doc).find("PATHQD|global field ecn_ref"), std::string::npos);
    doc["PATHQD"]["global"]["ecn_ref"] = "0.2";
    doc["PATHQD"]["global"]["pfc_ref_pps"] = "-1";
    EXPECT_NE(errorOf(doc).find("PATHQD|global field pfc_ref_pps"), std::string::npos);
}

PolicyInput input(int level, int peer) {
    PolicyInput in;
    in.asn = 65000;
    in.levels = 4;
    in.ipv6 = false;
    in.downlinks["swp2"] = DownlinkState{level, peer, MetricSnapshot{500, 12, 30, 100}, "", true};
    return in;
}

std::string render(const std::vector<PolicyLine>& lines) {
    std::string out;
    for (const auto& l : lines) out += l.line.describe() + "\n";
    return out;
}

TEST(PathqdPolicy, OutboundTakesTheMinimumOfBothSegments) {
    auto text = render(desiredPolicy(input(3, 2)));
    EXPECT_NE(text.find("route-map TWINRAIL-PQ-IN-swp2 permit 10 / set extcommunity bandwidth 3"),
              std::string::npos);
    EXPECT_NE(
        text.find(
            "set large-community 65000:1:3 65000:2:500 65000:3:12 65000:4:30 65000:5:100 additive"),
        std::string::npos);
    EXPECT_NE(text.find("route-map TWINRAIL-PQ-OUT-swp2 permit 1 / set extcommunity bandwidth 1"),
              std::string::npos);
    EXPECT_NE(text.find("route-map TWINRAIL-PQ-OUT-swp2 permit 4 / set extcommunity bandwidth 2"),
              std::string::npos);
    EXPECT_NE(
        text.find("route-map TWINRAIL-PQ-OUT-swp2 permit 1000 / set extcommunity bandwidth 2"),
        std::string::npos);
    EXPECT_NE(
        text.find("bgp large-community-list expanded TWINRAIL-PQ-L4 seq 5 permit _[0-9]+:1:4_"),
        std::string::npos);
    // Unknown peer level: no local penalty.
    auto unknown = render(desiredPolicy(input(3, 0)));
    EXPECT_NE(unknown.find("TWINRAIL-PQ-OUT-swp2 permit 4 / set extcommunity bandwidth 4"),
              std::string::npos);
    // Attachments come after the route-maps they name.
    EXPECT_GT(text.find("neighbor swp2 route-map TWINRAIL-PQ-IN-swp2 in"),
              text.find("permit 1000"));
}

// What the leaf M on the far side of `ports` gets from this spine for a route tagged `tag`
// (the sum over its sessions, the way FRR adds up paths to one next-hop switch).
int towardSpine(const std::string& text, const std::vector<std::string>& ports, int tag) {
    int total = 0;
    for (const auto& port : ports) {
        std::string key = "route-map TWINRAIL-PQ-OUT-" + port + " permit " + std::to_string(tag) +
                          " / set extcommunity bandwidth ";
        auto at = text.find(key);
        EXPECT_NE(at, std::string::npos) << key;
        if (at != std::string::npos) total += std::stoi(text.substr(at + key.size()));
    }
    return total;
}

TEST(PathqdPolicy, ParallelLinksFollowFaresMinimumPerSwitch) {
    PolicyInput in;
    in.asn = 65000;
    in.levels = 4;
    in.ipv6 = false;
    // Two links to leaf A (swp1, swp2), two to leaf B (swp3, swp4), all at level 4.
    for (const char* p : {"swp1", "swp2"}) in.downlinks[p] = DownlinkState{4, 4, {}, "leafA", true};
    for (const char* p : {"swp3", "swp4"}) in.downlinks[p] = DownlinkState{4, 4, {}, "leafB", true};
    auto text = render(desiredPolicy(in));
    // Routes from A carry this spine's whole reach toward A: 8 (two links of 4), as 4
    // levels per 2 links: still one route-map entry per level.
    EXPECT_NE(text.find("TWINRAIL-PQ-IN-swp1 permit 10 / set large-community 65000:1:4 "),
              std::string::npos);
    EXPECT_EQ(text.find("TWINRAIL-PQ-L5 "), std::string::npos);
    // Toward B: min(8, B's 4 + 4) = 8 over two sessions, 4 each.
    EXPECT_EQ(towardSpine(text, {"swp3", "swp4"}, 4), 8);
    // One link to A fails: A's routes now carry 4 (tag 2), and B gets 4 in all (2 + 2),
    // not 8: per session, each of B's links would have said min(4, 4) = 4, twice.
    in.downlinks["swp2"].up = false;
    text = render(desiredPolicy(in));
    EXPECT_NE(text.find("TWINRAIL-PQ-IN-swp1 permit 10 / set large-community 65000:1:2 "),
              std::string::npos);
    EXPECT_EQ(towardSpine(text, {"swp3", "swp4"}, 2), 4);
    // B's own uplinks in unequal shape: the split follows them, the total stays FARE's.
    in.downlinks["swp3"].peerLevel = 1;
    text = render(desiredPolicy(in));
    EXPECT_EQ(towardSpine(text, {"swp3", "swp4"}, 4), 5);  // min(8, 1 + 4)
    EXPECT_EQ(towardSpine(text, {"swp4"}, 4), 4);
    // A single link (no neighbor given) is min(tag, its level), as before.
    auto single = render(desiredPolicy(input(3, 2)));
    EXPECT_EQ(towardSpine(single, {"swp2"}, 4), 2);
    EXPECT_EQ(towardSpine(single, {"swp2"}, 1), 1);
}

std::string asRunning(const PolicyInput& in) {
    std::string text = "router bgp 65000\n address-family ipv4 unicast\n";
    std::string top;
    for (const auto& p : desiredPolicy(in)) {
        if (p.line.context.size() == 2)
            text += "  " + p.line.line + "\n";
        else if (p.line.context.empty())
            top += p.line.line + "\n";
    }
    text += " exit-address-family\nexit\n" + top;
    std::string last;
    for (const auto& p : desiredPolicy(in)) {
        if (p.line.context.size() != 1) continue;
        if (p.line.context[0] != last) text += "exit\n" + p.line.context[0] + "\n";
        last = p.line.context[0];
        text += " " + p.line.line + "\n";
    }
    return text;
}

TEST(PathqdPolicy, DiffSendsOnlyWhatChangedAndTheMatchingRefresh) {
    auto running = frr::RunningConfig::parse(asRunning(input(3, 2)));
    auto same = diffPolicy(running, input(3, 2));
    EXPECT_TRUE(same.add.empty());
    EXPECT_TRUE(same.remove.empty());
    auto metricsOnly = input(3, 2);
    metricsOnly.downlinks["swp2"].metrics.queueKiB = 99;  // same level: keep the old snapshot
    EXPECT_TRUE(diffPolicy(running, metricsOnly).add.empty());
    auto peer = diffPolicy(running, input(3, 1));  // only the leaf's uplink changed
    for (const auto& l : peer.add)
        EXPECT_NE(l.context[0].find("OUT"), std::string::npos) << l.describe();
    EXPECT_EQ(peer.refresh, (std::set<std::pair<std::string, Refresh>>{{"swp2", Refresh::Out}}));
    auto own = diffPolicy(running, input(2, 2));
    EXPECT_EQ(own.add.size(), 2u);  // bandwidth and large communities of the inbound entry
    EXPECT_EQ(own.refresh, (std::set<std::pair<std::string, Refresh>>{{"swp2", Refresh::In}}));
    auto args = policyVtyshArgs(running, own, input(2, 2));
    EXPECT_EQ(args.back(), "clear bgp ipv4 unicast swp2 soft in");
}

TEST(PathqdPolicy, LeavesForeignRouteMapsAloneAndRemovesItsOwnStaleOnes) {
    std::string text = asRunning(input(3, 2));
    text.replace(text.find("  neighbor swp2 route-map TWINRAIL-PQ-OUT-swp2 out"), 0,
                 "  neighbor swp9 route-map TWINRAIL-PQ-IN-swp9 in\n");
    text += "route-map TWINRAIL-PQ-IN-swp9 permit 10\n set extcommunity bandwidth 1\nexit\n";
    auto in = input(3, 2);
    in.downlinks["swp5"] = DownlinkState{2, 0, {}, "", true};
    text.replace(text.find(" exit-address-family"), 0, "  neighbor swp5 route-map OPERATOR in\n");
    auto diff = diffPolicy(frr::RunningConfig::parse(text), in);
    EXPECT_EQ(diff.conflicts.at("swp5"), "neighbor swp5 route-map OPERATOR in");
    for (const auto& l : diff.add)
        EXPECT_EQ(l.describe().find("swp5"), std::string::npos) << l.describe();
    std::string removed;
    for (const auto& l : diff.remove) removed += l.describe() + "\n";
    EXPECT_NE(removed.find("no neighbor swp9 route-map TWINRAIL-PQ-IN-swp9 in"), std::string::npos)
        << removed;
    EXPECT_NE(removed.find("no route-map TWINRAIL-PQ-IN-swp9"), std::string::npos) << removed;
    EXPECT_EQ(removed.find("OPERATOR"), std::string::npos);
}

TEST(PathqdProbe, EncodesAndRejectsForeignPackets) {
    ProbeMessage m{2, 7, 99, 123456789012345ULL, 42};
    auto bytes = encodeProbe(m);
    auto back = decodeProbe(bytes);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->type, 2);
    EXPECT_EQ(back->level, 7);
    EXPECT_EQ(back->sequence, 99u);
    EXPECT_EQ(back->timestampNs, 123456789012345ULL);
    EXPECT_EQ(back->peerReceiveNs, 42u);
    auto wrong = bytes;
    wrong[0] = 'X';
    EXPECT_FALSE(decodeProbe(wrong));
    wrong = bytes;
    wrong[5] = 9;
    EXPECT_FALSE(decodeProbe(wrong));
    EXPECT_FALSE(decodeProbe(std::span<const uint8_t>(bytes.data(), 20)));
}

TEST(PathqdRows, GroupsRoutesByNexthopsAndWeightsAndSkipsSinglePaths) {
    auto prefix = [](const char* p) { return *IpPrefix::parse(p); };
    netlink::WeightedNexthop a{3, IpAddr{}, 25}, b{4, IpAddr{}, 75}, even{4, IpAddr{}, 25};
    // The same next hops and weights, whether through a nexthop object or inline: one row.
    std::vector<netlink::RouteWeights> routes{{prefix("10.2.2.0/24"), 30, {a, b}},
                                              {prefix("10.0.0.12/32"), 0, {a, b}},
                                              {prefix("10.0.0.13/32"), 0, {a, even}},
                                              {prefix("10.0.0.1/32"), 12, {a}}};
    auto rows = weightRows(routes, [](int i) { return "swp" + std::to_string(i - 2); });
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows.count("swp1=25,swp2=25"), 1u);
    const auto& f = rows.at("swp1=25,swp2=75");
    auto field = [&f](const std::string& k) {
        for (const auto& [n, v] : f)
            if (n == k) return v;
        return std::string("-");
    };
    EXPECT_EQ(field("nexthops"), "swp1=25 swp2=75");
    EXPECT_EQ(field("weight_swp2"), "75");
    EXPECT_EQ(field("prefixes"), "2");
    EXPECT_EQ(field("sample"), "10.0.0.12/32,10.2.2.0/24");
}

}  // namespace
}  // namespace twinrail::pathqd
