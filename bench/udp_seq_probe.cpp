// A UDP sequence probe for the load-balancing benchmarks, run inside a lab NIC's namespace:
//
//   udp_seq_probe send DST PORT FLOWS PPS SECONDS [PAYLOAD_BYTES]
//       FLOWS connected sockets (each its own ephemeral source port, so each its own
//       multipath hash), each sending PPS numbered datagrams a second until SECONDS pass or
//       SIGTERM arrives; then end markers. Prints {"flows","sent","seconds"}.
//   udp_seq_probe recv PORT SECONDS [SENDERS]
//       Counts, per flow (source address and port), datagrams received, lost, and late:
//       arriving after a datagram with a higher sequence number of the same flow, the
//       reordering a receiver sees. Ends at SECONDS, on SIGTERM, or when SENDERS senders'
//       end markers arrived. Prints {"flows","received","lost","late","late_share"}.
//
// Output is one JSON line on stdout. SIGTERM is polled (sigpending) rather than handled,
// so the probe keeps no global state and always prints what it counted.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;
constexpr uint32_t kMagic = 0x74725351;  // "trSQ"
constexpr uint64_t kEndSeq = ~uint64_t{0};

struct Header {
    uint32_t magic;
    uint32_t flow;
    uint64_t seq;
};

// Blocks SIGTERM and SIGINT so that they stay pending for stopRequested().
void blockStopSignals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, nullptr);
}

bool stopRequested() {
    sigset_t set;
    sigpending(&set);
    return sigismember(&set, SIGTERM) == 1 || sigismember(&set, SIGINT) == 1;
}

// Per flow: the reordering a receiver sees, from sequence numbers alone (no clocks).
struct FlowCount {
    uint64_t received = 0, late = 0, highest = 0;
    bool any = false;
    void add(uint64_t seq) {
        ++received;
        if (any && seq < highest) ++late;
        highest = any ? std::max(highest, seq) : seq;
        any = true;
    }
    uint64_t lost() const { return any && highest + 1 > received ? highest + 1 - received : 0; }
};

int send(const std::string& dst, uint16_t port, int flows, int pps, double seconds,
         size_t payload) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    if (inet_pton(AF_INET, dst.c_str(), &to.sin_addr) != 1) {
        std::cout << json{{"error", "bad address " + dst}}.dump() << "\n";
        return 65;
    }
    std::vector<int> socks;
    for (int f = 0; f < flows; ++f) {
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
            std::cout << json{{"error", std::string("socket: ") + std::strerror(errno)}}.dump()
                      << "\n";
            for (int s : socks) close(s);
            if (fd >= 0) close(fd);
            return 71;
        }
        socks.push_back(fd);
    }
    std::vector<char> buf(std::max(payload, sizeof(Header)), 0);
    auto put = [&buf](uint32_t flow, uint64_t seq) {
        Header h{kMagic, flow, seq};
        std::memcpy(buf.data(), &h, sizeof h);
    };
    const auto interval = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(1.0 / std::max(pps, 1)));
    const auto start = Clock::now();
    const auto end =
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    uint64_t sent = 0, seq = 0;
    for (auto next = start; next < end && !stopRequested(); next += interval, ++seq) {
        std::this_thread::sleep_until(next);
        for (int f = 0; f < flows; ++f) {
            put(static_cast<uint32_t>(f), seq);
            sent += ::send(socks[static_cast<size_t>(f)], buf.data(), buf.size(), MSG_DONTWAIT) ==
                    static_cast<ssize_t>(buf.size());
        }
    }
    for (int i = 0; i < 3; ++i) {  // end markers, a few times: one may be lost
        for (int f = 0; f < flows; ++f) {
            put(static_cast<uint32_t>(f), kEndSeq);
            ::send(socks[static_cast<size_t>(f)], buf.data(), buf.size(), MSG_DONTWAIT);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (int s : socks) close(s);
    std::cout << json{{"flows", flows},
                      {"sent", sent},
                      {"seconds", std::chrono::duration<double>(Clock::now() - start).count()}}
                     .dump()
              << "\n";
    return 0;
}

int receive(uint16_t port, double seconds, size_t senders) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(port);
    int big = 8 << 20;
    if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0) {
        std::cout << json{{"error", std::string("bind: ") + std::strerror(errno)}}.dump() << "\n";
        if (fd >= 0) close(fd);
        return 71;
    }
    std::map<std::pair<uint32_t, uint16_t>, FlowCount> flows;
    std::set<uint32_t> ended;  // senders (addresses) whose end marker arrived
    const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(seconds));
    std::vector<char> buf(65536);
    while (Clock::now() < end && !stopRequested() && (senders == 0 || ended.size() < senders)) {
        pollfd pfd{fd, POLLIN, 0};
        if (poll(&pfd, 1, 50) <= 0) continue;
        sockaddr_in from{};
        socklen_t len = sizeof from;
        for (ssize_t n; (n = recvfrom(fd, buf.data(), buf.size(), MSG_DONTWAIT,
                                      reinterpret_cast<sockaddr*>(&from), &len)) >=
                        static_cast<ssize_t>(sizeof(Header));
             len = sizeof from) {
            Header h{};
            std::memcpy(&h, buf.data(), sizeof h);
            if (h.magic != kMagic) continue;
            if (h.seq == kEndSeq) {
                ended.insert(from.sin_addr.s_addr);
                continue;
            }
            flows[{from.sin_addr.s_addr, from.sin_port}].add(h.seq);
        }
    }
    close(fd);
    uint64_t received = 0, late = 0, lost = 0;
    for (const auto& [key, f] : flows) {
        received += f.received;
        late += f.late;
        lost += f.lost();
    }
    std::cout << json{{"flows", flows.size()},
                      {"received", received},
                      {"late", late},
                      {"lost", lost},
                      {"late_share", received > 0
                                         ? static_cast<double>(late) / static_cast<double>(received)
                                         : 0.0}}
                     .dump()
              << "\n";
    return 0;
}

int usage() {
    std::cerr << "usage: udp_seq_probe send DST PORT FLOWS PPS SECONDS [PAYLOAD_BYTES]\n"
                 "       udp_seq_probe recv PORT SECONDS [SENDERS]\n";
    return 64;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> a(argv + 1, argv + argc);
    blockStopSignals();
    try {
        if (a.size() >= 6 && a[0] == "send") {
            return send(a[1], static_cast<uint16_t>(std::stoi(a[2])), std::stoi(a[3]),
                        std::stoi(a[4]), std::stod(a[5]),
                        a.size() > 6 ? static_cast<size_t>(std::stoul(a[6])) : 64);
        }
        if (a.size() >= 3 && a[0] == "recv") {
            return receive(static_cast<uint16_t>(std::stoi(a[1])), std::stod(a[2]),
                           a.size() > 3 ? static_cast<size_t>(std::stoul(a[3])) : 0);
        }
    } catch (const std::exception& e) {  // stoi/stod on a bad number
        std::cerr << "udp_seq_probe: bad argument: " << e.what() << "\n";
        return 64;
    }
    return usage();
}
