#include <gtest/gtest.h>

#include "prober.h"

using namespace twinrail;
using namespace twinrail::hostrouted;

TEST(ProberPackets, ArpRequestRoundTrips) {
    MacAddr mac{2, 0, 0, 0, 0, 1};
    auto pkt = buildArpRequest(mac, *IpAddr::parse("10.1.1.1"), *IpAddr::parse("10.1.1.10"));
    EXPECT_EQ(pkt[7], 1);  // request
    auto sender = arpSender(pkt.data(), pkt.size());
    ASSERT_TRUE(sender);
    EXPECT_EQ(sender->str(), "10.1.1.1");
    EXPECT_FALSE(arpSender(pkt.data(), 20));  // truncated
    pkt[14] = pkt[15] = pkt[16] = pkt[17] = 0;  // DAD probe: sender 0.0.0.0
    EXPECT_FALSE(arpSender(pkt.data(), pkt.size()));
}

TEST(ProberPackets, NeighborSolicitationChecksumAndParse) {
    MacAddr mac{2, 0, 0, 0, 0, 1};
    auto src = *IpAddr::parse("fe80::1");
    auto target = *IpAddr::parse("2001:db8:1::10");
    auto pkt = buildNeighborSolicitation(mac, src, target, target);
    // Verify the ICMPv6 checksum the way a receiver does: the sum over pseudo-header and
    // message, checksum included, folds to 0xffff.
    uint32_t sum = 0;
    auto add = [&sum](const uint8_t* p, size_t n) {
        for (size_t i = 0; i < n; i += 2) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
    };
    add(&pkt[8], 32);
    sum += 32 + 58;
    add(&pkt[40], 32);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    EXPECT_EQ(sum, 0xffffu);
    auto seen = ndSender(pkt.data(), pkt.size());
    ASSERT_TRUE(seen);
    EXPECT_EQ(seen->str(), "fe80::1");  // an NS proves its source is alive
    pkt[40] = 136;                      // as an NA it names the target
    EXPECT_EQ(ndSender(pkt.data(), pkt.size())->str(), "2001:db8:1::10");
    pkt[7] = 64;  // hop limit other than 255: not ND
    EXPECT_FALSE(ndSender(pkt.data(), pkt.size()));
}

TEST(ProberPackets, SolicitedNodeMulticast) {
    EXPECT_EQ(solicitedNodeMulticast(*IpAddr::parse("2001:db8::12:3456")).str(),
              "ff02::1:ff12:3456");
}
