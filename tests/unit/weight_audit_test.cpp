// The weight audit's pure half: bgpd's JSON (shape from FRR 8.4 in the lab), FRR 8.4's
// weight rule, and the comparison with the kernel.
#include <gtest/gtest.h>

#include "weight_audit.h"

namespace twinrail::pathqd {
namespace {

const char* kTwoPaths = R"json({"prefix":"10.128.0.2/32","paths":[
  {"valid":true,"multipath":true,"extendedCommunity":{"string":"LB:23456:1000000 (8.000 Mbps)"},
   "peer":{"peerId":"fe80::1","interface":"swp4","type":"external"}},
  {"valid":true,"multipath":true,"bestpath":{"overall":true},
   "extendedCommunity":{"string":"RT:1:1 LB:23456:3000000 (24.000 Mbps)"},
   "peer":{"peerId":"fe80::2","interface":"swp3","type":"external"}},
  {"valid":false,"extendedCommunity":{"string":"LB:23456:9"},"peer":{"interface":"swp9"}}]})json";

TEST(WeightAudit, ReadsMultipathsAndTheirBandwidth) {
    std::string err;
    auto paths = parseBgpMultipaths(kTwoPaths, err);
    ASSERT_TRUE(paths) << err;
    ASSERT_EQ(paths->size(), 2u);
    EXPECT_EQ((*paths)[0].interface, "swp4");
    EXPECT_DOUBLE_EQ(*(*paths)[0].bytesPerSecond, 1e6);
    EXPECT_DOUBLE_EQ(*(*paths)[1].bytesPerSecond, 3e6);
    auto none = parseBgpMultipaths("{}", err);
    ASSERT_TRUE(none);
    EXPECT_TRUE(none->empty());
    EXPECT_FALSE(parseBgpMultipaths("% Network not in table", err));
}

TEST(WeightAudit, ImpliesWhatFrr84Computes) {
    std::string err;
    auto w = impliedWeights(*parseBgpMultipaths(kTwoPaths, err));
    EXPECT_EQ(w, (PortWeights{{"swp3", 75}, {"swp4", 25}}));
    // A path without the community turns the whole group back into plain ECMP.
    EXPECT_EQ(impliedWeights({{"swp1", 5e6}, {"swp2", std::nullopt}}),
              (PortWeights{{"swp1", 1}, {"swp2", 1}}));
    // 1:25600 floors to 0 and FRR uses 1.
    EXPECT_EQ(impliedWeights({{"swp1", 1}, {"swp2", 25600}}),
              (PortWeights{{"swp1", 1}, {"swp2", 99}}));
}

TEST(WeightAudit, ComparesSharesNotRawNumbers) {
    EXPECT_TRUE(weightsAgree({{"swp3", 75}, {"swp4", 25}}, {{"swp3", 75}, {"swp4", 25}}));
    EXPECT_TRUE(weightsAgree({{"swp1", 1}, {"swp2", 1}}, {{"swp1", 50}, {"swp2", 50}}));
    EXPECT_TRUE(weightsAgree({{"swp1", 33}, {"swp2", 66}}, {{"swp1", 33}, {"swp2", 67}}));
    EXPECT_FALSE(weightsAgree({{"swp3", 75}, {"swp4", 25}}, {{"swp3", 50}, {"swp4", 50}}));
    EXPECT_FALSE(weightsAgree({{"swp1", 1}, {"swp2", 1}}, {{"swp1", 1}}));
    EXPECT_FALSE(weightsAgree({{"swp1", 1}, {"swp2", 1}}, {{"swp1", 1}, {"swp3", 1}}));
    EXPECT_EQ(describeWeights({{"swp1", 25}, {"swp2", 75}}), "swp1=25 swp2=75");
}

}  // namespace
}  // namespace twinrail::pathqd
