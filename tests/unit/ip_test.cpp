#include <gtest/gtest.h>

#include "twinrail/common/ip.h"

using namespace twinrail;

TEST(Ip, ParseFormatClassify) {
    EXPECT_FALSE(IpAddr::parse("10.1.1"));
    EXPECT_FALSE(IpAddr::parse(""));
    EXPECT_EQ(IpAddr::parse("2001:DB8::1")->str(), "2001:db8::1");
    EXPECT_TRUE(IpAddr::parse("169.254.0.1")->isLinkLocal());
    EXPECT_TRUE(IpAddr::parse("fe80::1")->isLinkLocal());
    EXPECT_TRUE(IpAddr::parse("ff02::1")->isMulticast());
    EXPECT_TRUE(IpAddr::parse("::1")->isLoopback());
    EXPECT_FALSE(IpPrefix::parse("10.0.0.0/33"));
    EXPECT_FALSE(IpPrefix::parse("10.0.0.0/x"));
}

TEST(Ip, PrefixContainsAndBroadcast) {
    auto p = *IpPrefix::parse("10.1.1.1/24");
    EXPECT_TRUE(p.contains(*IpAddr::parse("10.1.1.200")));
    EXPECT_FALSE(p.contains(*IpAddr::parse("10.1.2.1")));
    EXPECT_FALSE(p.contains(*IpAddr::parse("::1")));
    EXPECT_TRUE(p.isBroadcastOf(*IpAddr::parse("10.1.1.255")));
    EXPECT_FALSE(p.isBroadcastOf(*IpAddr::parse("10.1.1.254")));
    auto p6 = *IpPrefix::parse("2001:db8:1::1/64");
    EXPECT_TRUE(p6.contains(*IpAddr::parse("2001:db8:1::ffff")));
    EXPECT_FALSE(p6.isBroadcastOf(*IpAddr::parse("2001:db8:1::ffff")));
    auto odd = *IpPrefix::parse("10.1.1.1/27");
    EXPECT_TRUE(odd.contains(*IpAddr::parse("10.1.1.31")));
    EXPECT_FALSE(odd.contains(*IpAddr::parse("10.1.1.32")));
}
