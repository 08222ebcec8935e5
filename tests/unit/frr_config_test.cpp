#include <gtest/gtest.h>

#include "frr_requirements.h"
#include "twinrail/frr/running_config.h"

using namespace twinrail::frr;

namespace {
const char* kRunning = R"(Building configuration...

Current configuration:
!
frr version 8.4.4
frr defaults datacenter
hostname l1
ip import-table 10
ipv6 prefix-list TWINRAIL-HOSTROUTES-V6 seq 5 permit ::/0 ge 128
!
router bgp 65101
 bgp router-id 10.0.0.11
 neighbor FABRIC peer-group
 !
 address-family ipv4 unicast
  redistribute connected
  redistribute table 10
 exit-address-family
 !
 address-family ipv6 unicast
  redistribute connected
 exit-address-family
exit
!
router bgp 65101 vrf blue
 address-family ipv6 unicast
  redistribute kernel route-map TWINRAIL-HOSTROUTES-V6
 exit-address-family
exit
!
route-map TWINRAIL-HOSTROUTES-V6 permit 10
 match ipv6 address prefix-list TWINRAIL-HOSTROUTES-V6
exit
!
end
)";
}  // namespace

TEST(FrrRunningConfig, FindsLinesInTheirContext) {
    auto rc = RunningConfig::parse(kRunning);
    EXPECT_EQ(rc.bgpRouterHeader().value_or(""), "router bgp 65101");
    EXPECT_TRUE(rc.has({{}, "ip import-table 10"}));
    EXPECT_FALSE(rc.has({{}, "ip import-table 11"}));
    EXPECT_TRUE(rc.has({{"router bgp", "address-family ipv4 unicast"}, "redistribute table 10"}));
    // Present only in the VRF instance: the default instance still lacks it.
    EXPECT_FALSE(rc.has({{"router bgp", "address-family ipv6 unicast"},
                         "redistribute kernel route-map TWINRAIL-HOSTROUTES-V6"}));
    // A line in the wrong block does not count.
    EXPECT_FALSE(rc.has({{"router bgp"}, "redistribute table 10"}));
}

TEST(FrrRunningConfig, MissingLinesAndHowToAddThem) {
    twinrail::hostrouted::Config cfg;
    auto rc = RunningConfig::parse(kRunning);
    auto missing = missingLines(rc, twinrail::hostrouted::requiredFrrLines(cfg));
    ASSERT_EQ(missing.size(), 1u);
    EXPECT_EQ(missing[0].describe(),
              "router bgp / address-family ipv6 unicast / redistribute kernel route-map "
              "TWINRAIL-HOSTROUTES-V6");
    auto args = vtyshAddArgs(rc, missing[0]);
    std::vector<std::string> expected{"-c", "configure terminal", "-c", "router bgp 65101",
                                      "-c", "address-family ipv6 unicast", "-c",
                                      "redistribute kernel route-map TWINRAIL-HOSTROUTES-V6"};
    EXPECT_EQ(args, expected);
}

TEST(FrrRunningConfig, NoBgpInstanceMeansNoWayToAdd) {
    auto rc = RunningConfig::parse("frr version 8.4.4\nhostname x\n");
    ConfigLine line{{"router bgp", "address-family ipv4 unicast"}, "redistribute table 10"};
    EXPECT_FALSE(rc.has(line));
    EXPECT_TRUE(vtyshAddArgs(rc, line).empty());
}
