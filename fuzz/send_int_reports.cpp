// Sends the INT reports the fuzz seeds start from to a collector port:
//   send_int_reports --port P [--to 127.0.0.1] [--shim]
// First what the project sends (buildTelemetryReport, as the pathqd integration test and
// the lab's traffic tools do, and its broken variants), then spec edge cases built byte by
// byte from Telemetry Report v2.0: report length 0xFF (runs to the end of the datagram),
// the bit-15 drop word (queue id, drop reason, padding), several reports in one group,
// Inner Only reports, and empty metadata. --shim sends INT v2.1 data-packet payloads
// (shim + INT-MD stack, INT-MX) instead, for the parseIntShim seeds.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "twinrail/telemetry/int_report.h"

namespace tl = twinrail::telemetry;
using Bytes = std::vector<uint8_t>;

namespace {

void put(Bytes& out, uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

Bytes groupHeader(uint32_t hwId, uint32_t seq, uint32_t node) {
    Bytes b;
    put(b, (uint64_t{2} << 28) | ((hwId & 0x3f) << 22) | (seq & 0x3fffff), 4);
    put(b, node, 4);
    return b;
}

// One individual report: header word, then `body` (main + inner contents).
void report(Bytes& out, int repType, int inType, size_t reportWords, size_t mdWords, uint8_t flags,
            const Bytes& body) {
    out.push_back(static_cast<uint8_t>((repType << 4) | inType));
    out.push_back(static_cast<uint8_t>(reportWords));
    out.push_back(static_cast<uint8_t>(mdWords));
    out.push_back(flags);  // D Q F I, then 4 reserved bits
    out.insert(out.end(), body.begin(), body.end());
}

Bytes intMain(uint16_t mdBits, const Bytes& metadata) {
    Bytes b;
    put(b, mdBits, 2);
    put(b, 0, 6);  // domain-specific id 0 (default), DS bits, DS status
    b.insert(b.end(), metadata.begin(), metadata.end());
    return b;
}

Bytes ethernet(size_t payload) {
    Bytes b = {0x00, 0x77, 0x66, 0x55, 0x44, 0x00, 0x00, 0x11, 0x22, 0x33, 0x44, 0x54, 0x08, 0x00};
    b.resize(14 + payload, 0x45);
    return b;
}

void pad4(Bytes& b) {
    while (b.size() % 4 != 0) b.push_back(0);
}

std::vector<std::pair<std::string, Bytes>> reports() {
    std::vector<std::pair<std::string, Bytes>> out;
    // As tests/integration/pathqd_ops_it.cpp: ports, hop latency, queue (bits 1-3).
    tl::IntHop hop;
    hop.egressPort = 5;
    hop.hopLatency = 30'000'000;
    hop.queueOccupancy = 1000;
    auto valid = tl::buildTelemetryReport(1, 1, 0x4000 | 0x2000 | 0x1000, {hop});
    out.emplace_back("builder-valid", valid);
    out.emplace_back("builder-truncated", Bytes(valid.begin(), valid.begin() + 14));
    auto wrongVersion = valid;
    wrongVersion[0] = static_cast<uint8_t>(0x10 | (wrongVersion[0] & 0x0f));
    out.emplace_back("builder-wrong-version", wrongVersion);
    out.emplace_back("garbage", Bytes{0xde, 0xad, 0xbe, 0xef, 0x00, 0x01});
    tl::IntHop a = hop, b = hop;
    b.egressPort = 6;
    b.hopLatency = 1200;
    b.queueId = 3;
    b.egressTxUtil = 750;
    out.emplace_back("builder-2hops",
                     tl::buildTelemetryReport(9, 4000, 0x4000 | 0x2000 | 0x1000 | 0x0100, {a, b}));
    tl::IntHop all = hop;
    all.ingressPort = 1;
    all.ingressTimestamp = 0x0102030405060708ULL;
    all.egressTimestamp = 0x0102030405060800ULL;
    all.bufferOccupancy = 77;
    out.emplace_back("builder-all-bits", tl::buildTelemetryReport(3, 0x3fffff, 0x7f80, {all}));
    out.emplace_back("builder-no-hops", tl::buildTelemetryReport(3, 2, 0x4000, {}));

    // Drop report: RepMdBits bits 1 (ports), 4 (ingress ts), 15 (queue 0, reason 80, pad).
    Bytes md;
    put(md, (4u << 16) | 511u, 4);
    put(md, 0x00000001000000ffULL, 8);
    put(md, (0u << 24) | (80u << 16), 4);
    Bytes body = intMain(0x4801, md);
    auto inner = ethernet(32);
    body.insert(body.end(), inner.begin(), inner.end());
    pad4(body);
    Bytes drop = groupHeader(4, 7, 10000);
    report(drop, 1, 3, body.size() / 4, md.size() / 4, 0x80, body);  // D=1
    out.emplace_back("spec-drop-bit15", drop);

    // Report length 0xFF: the report runs to the end of the datagram (here past 255 words).
    Bytes longBody = intMain(0x4801, md);
    auto bigInner = ethernet(1100);
    longBody.insert(longBody.end(), bigInner.begin(), bigInner.end());
    pad4(longBody);
    Bytes rl = groupHeader(4, 8, 10000);
    report(rl, 1, 3, 0xff, md.size() / 4, 0x80, longBody);
    out.emplace_back("spec-report-length-0xff", rl);
    // ... and exactly 255 words long.
    Bytes exact = intMain(0x4801, md);
    exact.resize(size_t{255} * 4, 0);
    Bytes rl255 = groupHeader(4, 9, 10000);
    report(rl255, 1, 3, 0xff, md.size() / 4, 0, exact);
    out.emplace_back("spec-report-length-0xff-exact", rl255);

    // Several reports in one group: INT (bits 1-3), Inner Only (Ethernet), INT with the
    // drop word, each found from its report length.
    Bytes multi = groupHeader(1, 100, 42);
    Bytes md1;
    put(md1, (1u << 16) | 5u, 4);
    put(md1, 30'000'000, 4);
    put(md1, (2u << 24) | 1000u, 4);
    Bytes b1 = intMain(0x7000, md1);
    report(multi, 1, 0, b1.size() / 4, md1.size() / 4, 0, b1);
    Bytes b2 = ethernet(50);
    pad4(b2);
    report(multi, 0, 3, b2.size() / 4, 0, 0x20, b2);  // F=1
    Bytes md3;
    put(md3, (7u << 24) | (2u << 16), 4);
    Bytes b3 = intMain(0x0001, md3);
    report(multi, 1, 0, b3.size() / 4, md3.size() / 4, 0x80, b3);
    out.emplace_back("spec-multiple-reports", multi);

    // Inner Only alone; INT with no metadata at all; postcard bits 1,3,4,5 with F=1.
    Bytes innerOnly = groupHeader(0, 1, 1);
    Bytes e = ethernet(18);
    report(innerOnly, 0, 3, e.size() / 4, 0, 0, e);
    out.emplace_back("spec-inner-only", innerOnly);
    Bytes empty = groupHeader(0, 2, 1);
    report(empty, 1, 0, 2, 0, 0, intMain(0, {}));
    out.emplace_back("spec-int-no-metadata", empty);
    Bytes pc;
    put(pc, (1u << 16) | 2u, 4);
    put(pc, (0u << 24) | 64u, 4);
    put(pc, 0x00000002540be400ULL, 8);
    put(pc, 0x00000002540be4c8ULL, 8);
    Bytes pcBody = intMain(0x5c00, pc);
    auto pcInner = ethernet(40);
    pcBody.insert(pcBody.end(), pcInner.begin(), pcInner.end());
    pad4(pcBody);
    Bytes postcard = groupHeader(1, 5, 77);
    report(postcard, 1, 3, pcBody.size() / 4, pc.size() / 4, 0x20, pcBody);
    out.emplace_back("spec-postcard", postcard);
    return out;
}

// INT v2.1 data-packet payloads (what parseIntShim reads): shim, then INT-MD header and
// stack (newest hop first) or INT-MX header.
std::vector<std::pair<std::string, Bytes>> shimPackets() {
    std::vector<std::pair<std::string, Bytes>> out;
    auto shim = [](int type, int npt, size_t words, uint16_t field) {
        Bytes b;
        b.push_back(static_cast<uint8_t>((type << 4) | (npt << 2)));
        b.push_back(static_cast<uint8_t>(words));
        put(b, field, 2);
        return b;
    };
    auto mdHeader = [](bool d, int hopMl, int rhc, uint16_t bits, uint16_t dsInstr) {
        Bytes b;
        put(b, (2u << 28) | (d ? 1u << 27 : 0) | (uint32_t(hopMl & 0x1f) << 8) | uint32_t(rhc), 4);
        put(b, bits, 2);
        put(b, 0, 2);  // domain specific id
        put(b, dsInstr, 2);
        put(b, 0, 2);  // DS flags
        return b;
    };
    // Two hops of node id + L1 ports + hop latency (bits 0-2, 3 words each), NPT 1 (UDP).
    Bytes stack;
    for (uint32_t node : {0xa11u, 0xb22u}) {
        put(stack, node, 4);
        put(stack, (node & 0xff) << 16 | ((node + 1) & 0xff), 4);
        put(stack, 1200 + node, 4);
    }
    Bytes md = shim(1, 1, (12 + stack.size()) / 4, 4790);
    auto h = mdHeader(false, 3, 6, 0xe000, 0);
    md.insert(md.end(), h.begin(), h.end());
    md.insert(md.end(), stack.begin(), stack.end());
    put(md, 0x12345678, 4);  // the original UDP payload follows
    out.emplace_back("shim-md-2hops", md);
    // One hop with every defined bit (0-8 and 15: 4+4+4+4+8+8+8+4+4+4 = 52 bytes).
    Bytes all;
    for (int i = 0; i < 13; ++i) put(all, uint64_t{0x01010101u} * uint32_t(i + 1), 4);
    Bytes mdAll = shim(1, 0, (12 + all.size()) / 4, 0x2e00);
    auto hAll = mdHeader(false, 13, 7, 0xff81, 0);
    mdAll.insert(mdAll.end(), hAll.begin(), hAll.end());
    mdAll.insert(mdAll.end(), all.begin(), all.end());
    out.emplace_back("shim-md-all-bits", mdAll);
    // No hops yet (as the source sends it), with the discard bit, NPT 2 (IP protocol 17).
    Bytes fresh = shim(1, 2, 3, 17);
    auto hFresh = mdHeader(true, 2, 8, 0x3000, 0);
    fresh.insert(fresh.end(), hFresh.begin(), hFresh.end());
    out.emplace_back("shim-md-empty-stack", fresh);
    // INT-MX: header only, and with 8 bytes of source-inserted DS metadata.
    Bytes mx = shim(3, 1, 3, 4790);
    auto hMx = mdHeader(false, 0, 0, 0xc000, 0);
    mx.insert(mx.end(), hMx.begin(), hMx.end());
    out.emplace_back("shim-mx", mx);
    Bytes mxDs = shim(3, 1, 5, 4790);
    auto hMxDs = mdHeader(false, 0, 0, 0xc000, 0x8000);
    mxDs.insert(mxDs.end(), hMxDs.begin(), hMxDs.end());
    put(mxDs, 0xdeadbeefcafef00dULL, 8);
    out.emplace_back("shim-mx-ds-metadata", mxDs);
    // Hop ML larger than the bitmap needs (domain specific metadata per hop).
    Bytes ds = shim(1, 1, 3 + 4, 4790);
    auto hDs = mdHeader(false, 4, 5, 0x8000, 0);
    ds.insert(ds.end(), hDs.begin(), hDs.end());
    for (int i = 0; i < 4; ++i) put(ds, 0x0c0c0c0cu, 4);
    out.emplace_back("shim-md-ds-per-hop", ds);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    int port = 0;
    std::string to = "127.0.0.1";
    bool shim = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--shim") == 0) shim = true;
        if (i + 1 >= argc) continue;
        if (std::strcmp(argv[i], "--port") == 0) port = std::atoi(argv[i + 1]);
        if (std::strcmp(argv[i], "--to") == 0) to = argv[i + 1];
    }
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(port));
    if (port <= 0 || port > 65535 || inet_pton(AF_INET, to.c_str(), &sa.sin_addr) != 1) {
        std::fprintf(stderr, "usage: send_int_reports --port P [--to IPV4] [--shim]\n");
        return 64;
    }
    int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    for (const auto& [name, bytes] : shim ? shimPackets() : reports()) {
        auto n = ::sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&sa),
                          sizeof sa);
        std::printf("%-32s %4zu bytes %s\n", name.c_str(), bytes.size(), n < 0 ? "FAILED" : "sent");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::close(fd);
    return 0;
}
