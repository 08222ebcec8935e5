// The fixture of the ARS tc program's unit tests (ars_bpf_test.cpp, ars_bpf_choice_test.cpp):
// crafted frames, next hops, and a loaded BpfDatapath driven through BPF_PROG_TEST_RUN with
// synthetic time. Root (or CAP_BPF); skipped only when the kernel refuses bpf() with EPERM.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "twinrail/ars/bpf_datapath.h"

namespace twinrail::ars::test {

using Frame = std::vector<uint8_t>;

inline constexpr int kHostPort = 10;  // where test packets arrive
inline constexpr int kUp1 = 101, kUp2 = 102, kUp3 = 103, kUp4 = 104;
inline constexpr uint64_t kMs = 1'000'000;
inline constexpr uint64_t kUs = 1'000;
inline constexpr uint64_t k100Mbit = 12'500'000;  // bytes per second: 100 Mbit/s

inline uint16_t ipChecksum(const uint8_t* p, size_t n) {
    uint32_t acc = 0;
    for (size_t i = 0; i + 1 < n; i += 2) acc += (uint32_t{p[i]} << 8) | p[i + 1];
    while (acc >> 16) acc = (acc & 0xffff) + (acc >> 16);
    return static_cast<uint16_t>(~acc);
}

inline void put16(Frame& f, uint16_t v) {
    f.push_back(static_cast<uint8_t>(v >> 8));
    f.push_back(static_cast<uint8_t>(v & 0xff));
}

// Destination MAC 00:..:00: the loopback device's, so the test run's skb is PACKET_HOST.
inline Frame ethernet(uint16_t type, bool toUs = true) {
    Frame f(6, 0);
    if (!toUs) f[0] = 0x02, f[5] = 0x99;
    Frame src = {0x02, 0, 0, 0, 0, 1};
    f.insert(f.end(), src.begin(), src.end());
    put16(f, type);
    return f;
}

inline void udp(Frame& f, uint16_t sport, uint16_t dport) {
    put16(f, sport);
    put16(f, dport);
    put16(f, 12);
    put16(f, 0);  // no UDP checksum: the program never reads it
    f.insert(f.end(), {'a', 'r', 's', '!'});
}

inline Frame ipv4Udp(const char* src, const char* dst, uint16_t sport, uint16_t dport = 4791,
                     uint8_t ttl = 64, uint16_t fragment = 0, bool toUs = true) {
    Frame f = ethernet(0x0800, toUs);
    size_t ip = f.size();
    f.insert(f.end(), {0x45, 0});
    put16(f, 20 + 12);
    put16(f, 0x1234);
    put16(f, fragment);
    f.insert(f.end(), {ttl, 17, 0, 0});
    auto s = *IpAddr::parse(src), d = *IpAddr::parse(dst);
    f.insert(f.end(), s.data(), s.data() + 4);
    f.insert(f.end(), d.data(), d.data() + 4);
    uint16_t sum = ipChecksum(f.data() + ip, 20);
    f[ip + 10] = static_cast<uint8_t>(sum >> 8);
    f[ip + 11] = static_cast<uint8_t>(sum & 0xff);
    udp(f, sport, dport);
    return f;
}

inline Frame ipv6Udp(const char* src, const char* dst, uint16_t sport, uint8_t hopLimit = 64) {
    Frame f = ethernet(0x86dd);
    f.insert(f.end(), {0x60, 0, 0, 0});
    put16(f, 12);
    f.insert(f.end(), {17, hopLimit});
    auto s = *IpAddr::parse(src), d = *IpAddr::parse(dst);
    f.insert(f.end(), s.data(), s.data() + 16);
    f.insert(f.end(), d.data(), d.data() + 16);
    udp(f, sport, 4791);
    return f;
}

inline PathNexthop hop(int ifindex, const char* gateway, uint32_t weight = 1) {
    PathNexthop h;
    h.ifindex = ifindex;
    h.gateway = *IpAddr::parse(gateway);
    h.weight = weight;
    return h;
}

inline IpPrefix prefix(const char* text) {
    return *IpPrefix::parse(text);
}

class ArsBpf : public ::testing::Test {
  protected:
    void SetUp() override {
        try {
            dp_ = std::make_unique<BpfDatapath>(64);
        } catch (const std::runtime_error& e) {
            if (std::string(e.what()).find(std::strerror(EPERM)) != std::string::npos)
                GTEST_SKIP() << "bpf() refused: " << e.what();
            FAIL() << e.what();
        }
    }
    void mode(AssignMode m, bool global = false, uint32_t idleUs = 256) {
        dp_->configure({m, idleUs, global});
    }
    // Both uplinks at 100 Mbit/s, the rate their queue estimate drains at.
    void bothAt100Mbit() {
        dp_->setPortRate(kUp1, k100Mbit);
        dp_->setPortRate(kUp2, k100Mbit);
    }
    // Two uplinks, 10.2.0.0/16 over both (FRR's onlink next hops).
    void twoUplinks(uint32_t w1 = 1, uint32_t w2 = 1) {
        dp_->setRoute(prefix("10.2.0.0/16"),
                      {hop(kUp1, "169.254.0.1", w1), hop(kUp2, "169.254.0.1", w2)});
    }
    int send(const Frame& f, uint64_t now, int in = kHostPort, uint32_t gsoSegs = 0) {
        dp_->setClockOverride(now);
        return dp_->testRun(f, in, gsoSegs, gsoSegs > 1 ? 1448 : 0).action;
    }
    // The egress of the one flow the test sent; 0 when the table is empty.
    int egress() {
        auto flows = dp_->flows();
        EXPECT_LE(flows.size(), 1U);
        return flows.empty() ? 0 : flows.front().ifindex;
    }
    std::unique_ptr<BpfDatapath> dp_;
    const Frame flow_ = ipv4Udp("10.1.0.5", "10.2.0.7", 40000);
};

}  // namespace twinrail::ars::test
