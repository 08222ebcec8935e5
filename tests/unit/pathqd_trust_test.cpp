// What pathqd trusts (issue 18 items 6 and 7): INT reports only from the configured
// sources (and interface), decided before parsing; names from the config only when they
// fit the shared grammar; and no vtysh line with a control character, whatever reaches
// the policy code.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <stdexcept>

#include "config.h"
#include "frr_policy.h"
#include "int_collector.h"
#include "link_probe.h"
#include "twinrail/telemetry/int_report.h"

namespace twinrail::pathqd {
namespace {

using nlohmann::json;

IpAddr ip(const char* text) {
    auto a = IpAddr::parse(text);
    if (!a) throw std::invalid_argument(text);
    return *a;
}

std::vector<IpPrefix> prefixes(std::initializer_list<const char*> texts) {
    std::vector<IpPrefix> out;
    for (const char* t : texts) out.push_back(*IpPrefix::parse(t));
    return out;
}

std::string errorOf(const json& doc) {
    auto r = parseConfig(doc);
    const auto* e = std::get_if<ConfigError>(&r);
    return e != nullptr ? e->str() : "";
}

json withGlobal(const char* field, const std::string& value) {
    json doc;
    doc["PATHQD"]["global"] = {{"int_port", "6790"}, {field, value}};
    return doc;
}

json withPort(const std::string& name) {
    json doc;
    doc["PATHQD_PORT"][name] = {{"role", "downlink"}};
    return doc;
}

TEST(PathqdTrust, SourceFilterAllowsOnlyListedSources) {
    auto list = prefixes({"10.0.0.0/24", "192.0.2.7", "2001:db8:1::/48", "2001:db8::9"});
    EXPECT_TRUE(intSourceAllowed(list, ip("10.0.0.1")));
    EXPECT_TRUE(intSourceAllowed(list, ip("10.0.0.255")));
    EXPECT_FALSE(intSourceAllowed(list, ip("10.0.1.1")));
    EXPECT_TRUE(intSourceAllowed(list, ip("192.0.2.7")));
    EXPECT_FALSE(intSourceAllowed(list, ip("192.0.2.8")));
    EXPECT_TRUE(intSourceAllowed(list, ip("2001:db8:1:ffff::1")));
    EXPECT_FALSE(intSourceAllowed(list, ip("2001:db8:2::1")));
    EXPECT_TRUE(intSourceAllowed(list, ip("2001:db8::9")));
    EXPECT_FALSE(intSourceAllowed(list, ip("2001:db8::8")));
    EXPECT_FALSE(intSourceAllowed(list, ip("fe80::1")));  // link-local is not trusted as such
    EXPECT_FALSE(intSourceAllowed(list, IpAddr{}));       // no address: refused
    EXPECT_FALSE(intSourceAllowed({}, ip("10.0.0.1")));   // empty list: nobody
}

TEST(PathqdTrust, V4MappedSourcesAreMatchedAsV4AndCannotBypass) {
    auto v4 = prefixes({"10.0.0.0/24"});
    EXPECT_TRUE(intSourceAllowed(v4, ip("::ffff:10.0.0.5")));
    EXPECT_FALSE(intSourceAllowed(v4, ip("::ffff:10.0.1.5")));
    // An IPv6 entry covering ::ffff:0:0/96 does not let IPv4 senders in.
    auto v6 = prefixes({"::/8", "::ffff:0:0/96"});
    EXPECT_FALSE(intSourceAllowed(v6, ip("::ffff:10.0.0.5")));
    EXPECT_FALSE(intSourceAllowed(v6, ip("10.0.0.5")));
    EXPECT_EQ(unmapV4(ip("::ffff:192.0.2.1")), ip("192.0.2.1"));
    EXPECT_EQ(unmapV4(ip("2001:db8::1")), ip("2001:db8::1"));
    // The default: this host only, however the address is written.
    auto local = defaultIntSources();
    EXPECT_TRUE(intSourceAllowed(local, ip("127.0.0.1")));
    EXPECT_TRUE(intSourceAllowed(local, ip("::ffff:127.0.0.1")));
    EXPECT_TRUE(intSourceAllowed(local, ip("::1")));
    EXPECT_FALSE(intSourceAllowed(local, ip("10.0.0.1")));
    EXPECT_FALSE(intSourceAllowed(local, ip("::ffff:10.0.0.1")));
    EXPECT_FALSE(intSourceAllowed(local, ip("fe80::1")));
}

TEST(PathqdTrust, ConfigReadsIntSourcesAndInterface) {
    auto r = parseConfig(json::object());
    ASSERT_TRUE(std::holds_alternative<Config>(r));
    EXPECT_EQ(std::get<Config>(r).intSources, defaultIntSources());
    EXPECT_EQ(std::get<Config>(r).intInterface, "");
    auto doc = withGlobal("int_sources", " 10.0.0.0/24, 2001:db8::7 ");
    doc["PATHQD"]["global"]["int_interface"] = "eth0";
    r = parseConfig(doc);
    ASSERT_TRUE(std::holds_alternative<Config>(r)) << errorOf(doc);
    EXPECT_EQ(std::get<Config>(r).intSources, prefixes({"10.0.0.0/24", "2001:db8::7/128"}));
    EXPECT_EQ(std::get<Config>(r).intInterface, "eth0");
    r = parseConfig(withGlobal("int_sources", ""));  // empty: the default
    ASSERT_TRUE(std::holds_alternative<Config>(r));
    EXPECT_EQ(std::get<Config>(r).intSources, defaultIntSources());
}

TEST(PathqdTrust, ConfigRefusesBadIntSources) {
    const std::string field = "PATHQD|global field int_sources: ";
    EXPECT_EQ(errorOf(withGlobal("int_sources", "10.0.0.0/33")),
              field + "\"10.0.0.0/33\" is not an address or prefix");
    EXPECT_EQ(errorOf(withGlobal("int_sources", "collector1")),
              field + "\"collector1\" is not an address or prefix");
    EXPECT_EQ(errorOf(withGlobal("int_sources", "10.0.0.1,,10.0.0.2")),
              field + "has an empty entry");
    EXPECT_EQ(errorOf(withGlobal("int_sources", "10.0.0.1,")), field + "has an empty entry");
    EXPECT_EQ(errorOf(withGlobal("int_sources", "::ffff:10.0.0.1")),
              field + "\"::ffff:10.0.0.1\" is IPv4-mapped: write it as IPv4");
    EXPECT_EQ(errorOf(withGlobal("int_sources", "0.0.0.0/0")),
              field + "\"0.0.0.0/0\" accepts every source: list the INT senders");
    EXPECT_NE(errorOf(withGlobal("int_sources", "10.0.0.1, ::/0")).find("accepts every source"),
              std::string::npos);
    EXPECT_EQ(errorOf(withGlobal("int_sources", "10.0.0.1\n::1")),
              field + "\"10.0.0.1\\x0a::1\" is not an address or prefix");
}

// Port keys become vtysh neighbor and route-map names: each of these would have put a
// command of its own into a live downlink's route-maps, or a path out of place.
TEST(PathqdTrust, ConfigRefusesBadPortNamesNamingTheKey) {
    struct Case {
        std::string name, shown, why;
    };
    const std::vector<Case> cases = {
        {"swp1\nroute-map", "swp1\\x0aroute-map", "contains a control character at offset 4"},
        {"swp\t1", "swp\\x091", "contains a control character at offset 3"},
        {"swp1!", "swp1!", "contains '!' at offset 4"},
        {"swp..1", "swp..1", "contains \"..\""},
        {"swp/1", "swp/1", "contains '/' at offset 3"},
        {"Ethernet12345678", "Ethernet12345678", "is longer than 15 characters"},
        {"swp 1", "swp 1", "contains a space at offset 3"},
        {"-swp1", "-swp1", "must start with a letter or digit"},
        {"", "", "is empty"},
    };
    for (const auto& c : cases) {
        EXPECT_EQ(errorOf(withPort(c.name)), "PATHQD_PORT|" + c.shown + ": port name \"" + c.shown +
                                                 "\" is not a valid interface name: " + c.why)
            << c.shown;
    }
    // The 15-character limit is IFNAMSIZ - 1: 15 is still a name.
    EXPECT_EQ(errorOf(withPort("Ethernet1234567")), "");
}

TEST(PathqdTrust, ConfigRefusesBadInterfaceAndNeighborFields) {
    EXPECT_EQ(errorOf(withGlobal("int_interface", "eth0\n!")),
              "PATHQD|global field int_interface: \"eth0\\x0a!\" is not a valid interface name: "
              "contains a control character at offset 4");
    EXPECT_NE(errorOf(withGlobal("int_interface", "../eth0")).find("field int_interface"),
              std::string::npos);
    auto doc = withPort("swp1");
    doc["PATHQD_PORT"]["swp1"]["neighbor"] = "leaf1\tx";
    EXPECT_EQ(errorOf(doc),
              "PATHQD_PORT|swp1 field neighbor: \"leaf1\\x09x\" is not a valid name: contains a "
              "control character at offset 5");
    doc["PATHQD_PORT"]["swp1"]["neighbor"] = "p1-leaf1";
    EXPECT_EQ(errorOf(doc), "");
}

// Whatever reaches the policy code (the config reader is the first check), a line with a
// control character is never part of what vtysh runs; the other ports' lines still go.
TEST(PathqdTrust, PolicyNeverSendsALineWithAControlCharacter) {
    PolicyInput in;
    in.asn = 65000;
    in.levels = 2;
    in.ipv6 = false;
    in.downlinks["swp1"] = DownlinkState{};
    in.downlinks["x\nroute-map TWINRAIL-PQ-IN-swp1 deny 1"] = DownlinkState{};
    auto running = frr::RunningConfig::parse("router bgp 65000\n address-family ipv4 unicast\n");
    PolicyDiff diff = diffPolicy(running, in);
    auto dropped = dropUnsafeLines(diff);
    EXPECT_FALSE(dropped.empty());
    auto args = policyVtyshArgs(running, diff, in);
    EXPECT_EQ(unsafeVtyshArg(args), nullptr);
    bool swp1 = false;
    for (const auto& a : args) {
        EXPECT_EQ(a.find("deny"), std::string::npos) << a;
        swp1 |= a == "neighbor swp1 route-map TWINRAIL-PQ-IN-swp1 in";
    }
    EXPECT_TRUE(swp1);
    EXPECT_TRUE(hasControlChar("a\tb"));
    EXPECT_TRUE(hasControlChar(std::string("a\x7f", 2)));
    EXPECT_FALSE(hasControlChar("route-map TWINRAIL-PQ-IN-swp1 permit 10"));
    std::vector<std::string> bad = {"-c", "configure terminal", "-c", "end\nwrite"};
    ASSERT_NE(unsafeVtyshArg(bad), nullptr);
    EXPECT_EQ(*unsafeVtyshArg(bad), "end\nwrite");
}

IntMapping mapping() {
    IntMapping m;
    m.ports[5] = "swp1";
    return m;
}

std::vector<uint8_t> report() {
    telemetry::IntHop hop;
    hop.egressPort = 5;
    hop.hopLatency = 30'000'000;
    hop.queueOccupancy = 1000;
    return telemetry::buildTelemetryReport(1, 1, 0x4000 | 0x2000 | 0x1000, {hop});
}

// The collector's latest() is the only way INT reaches the quality model (and so a
// published level): a refused report must leave nothing there.
TEST(PathqdTrust, SpoofedIntFromAnUnlistedSourceNeverReachesTheModel) {
    boost::asio::io_context io;
    IntCollector c(io, 0, mapping(), IntTrust{prefixes({"10.0.0.9", "2001:db8::9"}), ""});
    auto bytes = report();
    for (const char* forged : {"10.0.0.8", "::ffff:10.0.0.8", "fe80::1", "127.0.0.1", "::"})
        c.handleFrom(ip(forged), 3, bytes);
    EXPECT_EQ(c.latest("swp1"), nullptr);
    EXPECT_EQ(c.stats().refused, 5u);
    EXPECT_EQ(c.stats().packets, 0u);  // refused before parsing
    EXPECT_EQ(c.stats().hops, 0u);
    c.handleFrom(ip("::ffff:10.0.0.9"), 3, bytes);
    ASSERT_NE(c.latest("swp1"), nullptr);
    EXPECT_DOUBLE_EQ(*c.latest("swp1")->latencySeconds, 0.03);
    EXPECT_EQ(c.stats().packets, 1u);
    // A reload that takes the sender off the list takes effect at once.
    c.setTrust(IntTrust{prefixes({"2001:db8::9"}), ""});
    EXPECT_EQ(c.admit(ip("10.0.0.9"), 3), IntVerdict::RefusedSource);
    EXPECT_EQ(c.admit(ip("2001:db8::9"), 3), IntVerdict::Accept);
}

TEST(PathqdTrust, IntInterfaceRefusesOtherArrivalPorts) {
    int lo = static_cast<int>(if_nametoindex("lo"));
    if (lo == 0) GTEST_SKIP() << "no loopback interface";
    boost::asio::io_context io;
    IntCollector c(io, 0, mapping(), IntTrust{defaultIntSources(), "lo"});
    EXPECT_EQ(c.admit(ip("127.0.0.1"), lo), IntVerdict::Accept);
    EXPECT_EQ(c.admit(ip("127.0.0.1"), 0), IntVerdict::RefusedInterface);  // no pktinfo
    EXPECT_EQ(c.admit(ip("127.0.0.1"), lo + 1000), IntVerdict::RefusedInterface);
    EXPECT_EQ(c.admit(ip("10.0.0.1"), lo), IntVerdict::RefusedSource);
    EXPECT_EQ(c.stats().refused, 3u);
    EXPECT_EQ(c.stats().refusedInterface, 2u);
    c.setTrust(IntTrust{defaultIntSources(), "nosuchif0"});
    EXPECT_EQ(c.admit(ip("127.0.0.1"), lo), IntVerdict::RefusedInterface);
}

// Sends `bytes` to 127.0.0.1:port and runs the loop until `done` (at most 2 s).
bool sendAndWait(boost::asio::io_context& io, uint16_t port, const std::vector<uint8_t>& bytes,
                 const std::function<bool()>& done) {
    int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    auto n =
        ::sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
    ::close(fd);
    if (n < 0) return false;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!done() && std::chrono::steady_clock::now() < until)
        io.run_for(std::chrono::milliseconds(5));
    return done();
}

// The socket path end to end on loopback (no root): the source the kernel reports is the
// one checked, IPv4 senders on the dual-stack socket included.
TEST(PathqdTrust, UdpReportsFromAnUnlistedSourceAreDroppedUnread) {
    boost::asio::io_context io;
    std::unique_ptr<IntCollector> c;
    try {
        c = std::make_unique<IntCollector>(io, 0, mapping(), IntTrust{prefixes({"192.0.2.1"}), ""});
        c->start();
    } catch (const std::exception& e) {
        GTEST_SKIP() << "no dual-stack UDP socket here: " << e.what();
    }
    uint16_t port = c->boundPort();
    ASSERT_NE(port, 0);
    auto bytes = report();
    ASSERT_TRUE(sendAndWait(io, port, bytes, [&] { return c->stats().refused == 1; }));
    EXPECT_EQ(c->latest("swp1"), nullptr);
    EXPECT_EQ(c->stats().packets, 0u);
    c->setTrust(IntTrust{defaultIntSources(), "lo"});
    ASSERT_TRUE(sendAndWait(io, port, bytes, [&] { return c->stats().packets == 1; }))
        << "refused " << c->stats().refused << ", wrong interface " << c->stats().refusedInterface;
    ASSERT_NE(c->latest("swp1"), nullptr);
    EXPECT_EQ(c->stats().refused, 1u);
}

// Link probes carry latency and the peer's level: a forged one from a routable source (here
// ::1), or on a port pathqd does not probe, is refused before it sets either.
TEST(PathqdTrust, ForgedLinkProbeFromARoutableSourceIsRefused) {
    in6_addr linkLocal{}, global{};
    ASSERT_EQ(inet_pton(AF_INET6, "fe80::1", &linkLocal), 1);
    ASSERT_EQ(inet_pton(AF_INET6, "2001:db8::1", &global), 1);
    EXPECT_TRUE(trustedProbe(linkLocal, true));
    EXPECT_FALSE(trustedProbe(linkLocal, false));
    EXPECT_FALSE(trustedProbe(global, true));

    boost::asio::io_context io;
    const auto port = static_cast<uint16_t>(40000 + getpid() % 20000);
    LinkProber prober(io, port);
    try {
        prober.start();
    } catch (const std::exception& e) {
        GTEST_SKIP() << e.what();
    }
    const int lo = static_cast<int>(if_nametoindex("lo"));
    prober.probe(lo, 3);  // lo is a probed port now (the multicast send itself may fail)
    auto bytes = encodeProbe(ProbeMessage{2, 1, 7, 1, 2});  // a "reply": level 1, ~0 latency
    int fd = ::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in6 to{};
    to.sin6_family = AF_INET6;
    to.sin6_port = htons(port);
    to.sin6_addr = in6addr_loopback;
    auto n =
        ::sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
    ::close(fd);
    ASSERT_EQ(n, static_cast<ssize_t>(bytes.size()));
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (prober.stats().refused == 0 && std::chrono::steady_clock::now() < until)
        io.run_for(std::chrono::milliseconds(5));
    EXPECT_EQ(prober.stats().refused, 1u);
    EXPECT_EQ(prober.stats().replies, 0u);
    const auto* v = prober.view(lo);
    EXPECT_TRUE(v == nullptr || (!v->rttSeconds && v->peerLevel == 0));
}

}  // namespace
}  // namespace twinrail::pathqd
