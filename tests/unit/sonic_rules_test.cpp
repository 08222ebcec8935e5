// The SONiC reading rules (sonic_rules.h): values as SONiC writes them, portstat's speed
// rule, queue-to-port mapping and the queue source order.
#include <gtest/gtest.h>

#include "sonic_rules.h"

namespace twinrail::pathqd::sonic {
namespace {

redis::Value str(const std::string& s) {
    redis::Value v;
    v.type = redis::Value::Type::String;
    v.str = s;
    return v;
}

TEST(SonicRules, NumbersAsSonicWritesThem) {
    EXPECT_EQ(parseNumber("100000"), 100000.0);
    EXPECT_EQ(parseNumber("400000.0"), 400000.0);
    EXPECT_EQ(parseNumber("2.e9"), 2e9);  // sonic-utilities mock RATES
    EXPECT_EQ(parseNumber(" 25000 "), 25000.0);
    EXPECT_EQ(parseNumber("5.625475208001306e-22"), 5.625475208001306e-22);
    for (const char* bad : {"", "N/A", "-1", "nan", "inf", "100G", "1e999"})
        EXPECT_FALSE(parseNumber(bad)) << bad;
}

TEST(SonicRules, CountersAreIntegersOrFloatStringsOfThem) {
    EXPECT_EQ(parseCounter(str("18446744073709551615")), 18446744073709551615ULL);
    EXPECT_EQ(parseCounter(str("4427798")), 4427798u);
    EXPECT_EQ(parseCounter(str("1.5e3")), 1500u);
    EXPECT_FALSE(parseCounter(str("18446744073709551616")));
    EXPECT_FALSE(parseCounter(str("")));
    EXPECT_FALSE(parseCounter(redis::Value{}));  // nil: the field is not there
    redis::Value n;
    n.type = redis::Value::Type::Integer;
    n.integer = 42;
    EXPECT_EQ(parseCounter(n), 42u);
}

TEST(SonicRules, SpeedTheWayPortstatTakesIt) {
    // utilities-mock Ethernet0: STATE 100000, APPL 25000, oper down -> APPL (64.00%).
    auto s = portSpeed("down", "25000", "100000");
    EXPECT_EQ(s.mbps, 25000.0);
    EXPECT_EQ(s.from, "appl_db");
    // gnmi: STATE 200000 / APPL 100000, oper up -> STATE.
    s = portSpeed("up", "100000", "200000");
    EXPECT_EQ(s.mbps, 200000.0);
    EXPECT_EQ(s.from, "state_db");
    EXPECT_EQ(portSpeed("up", "100000", std::nullopt).mbps, 100000.0);  // 2020 STATE rows
    EXPECT_EQ(portSpeed("up", "100000", "N/A").mbps, 100000.0);
    EXPECT_EQ(portSpeed(std::nullopt, "40000", "100000").mbps, 40000.0);
    EXPECT_FALSE(portSpeed("up", std::nullopt, std::nullopt).mbps);  // portstat: N/A
    EXPECT_FALSE(portSpeed("down", std::nullopt, "100000").mbps);
    EXPECT_FALSE(portSpeed("up", "0", std::nullopt).mbps);
}

TEST(SonicRules, PseudoPorts) {
    for (const char* p : {"CPU", "PortConfigDone", "PortInitDone"}) EXPECT_TRUE(isPseudoPort(p));
    for (const char* p : {"Ethernet0", "Ethernet-BP0", "Ethernet-IB0"})
        EXPECT_FALSE(isPseudoPort(p));
}

TEST(SonicRules, UnicastQueues) {
    EXPECT_TRUE(isUnicastQueue("SAI_QUEUE_TYPE_UNICAST"));
    EXPECT_TRUE(isUnicastQueue("SAI_QUEUE_TYPE_ALL"));
    EXPECT_TRUE(isUnicastQueue(std::nullopt));  // no type map
    EXPECT_FALSE(isUnicastQueue("SAI_QUEUE_TYPE_MULTICAST"));
    EXPECT_FALSE(isUnicastQueue("SAI_QUEUE_TYPE_UNICAST_VOQ"));
}

TEST(SonicRules, QueuesMapToPortsLikeQueuestat) {
    Hash ports{{"Ethernet0", "oid:0x1000000000012"},
               {"Ethernet4", "oid:0x1000000000013"},
               {"CPU", "oid:0x1000000000001"}};
    Hash names{{"Ethernet0:0", "oid:0x15a"}, {"Ethernet0:10", "oid:0x15b"},
               {"Ethernet0:3", "oid:0x15c"}, {"Ethernet4:1", "oid:0x15d"},
               {"Ethernet9:0", "oid:0x15e"},  // a port not in the name map
               {"Ethernet4:2", "oid:0x15f"}, {"garbage", "oid:0x160"}};
    Hash types{{"oid:0x15a", "SAI_QUEUE_TYPE_UNICAST"},
               {"oid:0x15b", "SAI_QUEUE_TYPE_MULTICAST"},
               {"oid:0x15c", "SAI_QUEUE_TYPE_ALL"},
               {"oid:0x15d", "SAI_QUEUE_TYPE_UNICAST"}};
    // The port map wins over the name: 0x15f is Ethernet0's although named Ethernet4:2.
    Hash portOfQueue{{"oid:0x15f", "oid:0x1000000000012"}};
    auto m = buildMaps(ports, names, types, portOfQueue);
    EXPECT_EQ(m.portOid.at("Ethernet0"), "oid:0x1000000000012");
    ASSERT_EQ(m.queues["Ethernet0"].size(), 3u);  // 0 (UC), 2 (no type: counts), 3 (ALL)
    EXPECT_EQ(m.queues["Ethernet0"][0].oid, "oid:0x15a");
    EXPECT_EQ(m.queues["Ethernet0"][1].index, 2);
    EXPECT_EQ(m.queues["Ethernet0"][2].oid, "oid:0x15c");
    ASSERT_EQ(m.queues["Ethernet4"].size(), 1u);
    EXPECT_EQ(m.queues.count("Ethernet9"), 0u);
    // No maps at all: ports without queues, nothing else.
    auto bare = buildMaps(ports, {}, {}, {});
    EXPECT_EQ(bare.portOid.size(), 3u);
    EXPECT_TRUE(bare.queues.empty());
}

TEST(SonicRules, QueueSourceBestFirst) {
    std::vector<QueueReading> q(4);
    EXPECT_EQ(chooseQueueSource(q).source, QueueSource::None);
    q[0].periodicWatermark = 192;
    q[1].periodicWatermark = 8;
    auto c = chooseQueueSource(q);
    EXPECT_EQ(c.source, QueueSource::PeriodicWatermark);
    EXPECT_EQ(c.bytes, 200);
    q[0].watermark = 64;
    c = chooseQueueSource(q);
    EXPECT_EQ(c.source, QueueSource::Watermark);
    EXPECT_EQ(c.bytes, 64);
    EXPECT_EQ(c.queues, 1);
    // Lossless queues under the PFC watchdog: current occupancy, even when 0.
    q[2].currOccupancy = 0;
    q[3].currOccupancy = 1500;
    c = chooseQueueSource(q);
    EXPECT_EQ(c.source, QueueSource::CurrOccupancy);
    EXPECT_EQ(c.bytes, 1500);
    EXPECT_EQ(c.queues, 2);
    EXPECT_STREQ(queueSourceName(c.source), "curr_occupancy");
}

TEST(SonicRules, EcnMarksAreSummedOverTheQueuesThatCountThem) {
    std::vector<QueueReading> q(3);
    EXPECT_FALSE(queueMarks(q));  // no queue has WRED ECN counters
    q[0].packets = 1000;          // packets without a mark counter: not a share of anything
    EXPECT_FALSE(queueMarks(q));
    q[1].packets = 400;
    q[1].ecnMarked = 40;
    q[2].packets = 600;
    q[2].ecnMarked = 6;
    auto m = queueMarks(q);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->marked, 46u);
    EXPECT_EQ(m->packets, 1000u);
    q[2].packets.reset();  // a mark counter without packets: left out
    EXPECT_EQ(queueMarks(q)->packets, 400u);
}

TEST(SonicRules, HgetallReplies) {
    redis::Value v;
    v.type = redis::Value::Type::Array;
    v.elements = {str("Ethernet0"), str("oid:0x1"), str("Ethernet4"), str("oid:0x2")};
    auto h = toHash(v);
    EXPECT_EQ(h.size(), 2u);
    EXPECT_EQ(h["Ethernet4"], "oid:0x2");
    v.elements.pop_back();
    EXPECT_TRUE(toHash(v).empty());  // odd: not a hash reply
    EXPECT_TRUE(toHash(redis::Value::error("WRONGTYPE")).empty());
}

}  // namespace
}  // namespace twinrail::pathqd::sonic
