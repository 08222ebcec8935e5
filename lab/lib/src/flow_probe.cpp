#include "twinrail/lab/flow_probe.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <thread>
#include <vector>

namespace twinrail::lab {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kMagic = 0x74724650;  // "trFP"
constexpr uint64_t kEndSeq = ~uint64_t{0};
constexpr double kInterruptedMs = 50;

struct Probe {
    uint32_t magic;
    uint32_t flow;
    uint64_t seq;
};

struct FlowSeen {
    uint64_t received = 0;
    uint64_t maxSeq = 0;
    bool ended = false;
    Clock::time_point last;
    double maxGapMs = 0;
};

double ms(Clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace

nlohmann::json runFlowSender(const std::string& dst, uint16_t port, int flows,
                             std::chrono::microseconds interval,
                             std::chrono::milliseconds duration) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    if (inet_pton(AF_INET, dst.c_str(), &to.sin_addr) != 1)
        return {{"error", "bad address " + dst}};
    std::vector<int> socks;
    for (int f = 0; f < flows; ++f) {
        int fd = socket(AF_INET, SOCK_DGRAM, 0);  // its own ephemeral source port: its own hash
        if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
            for (int s : socks) close(s);
            if (fd >= 0) close(fd);
            return {{"error", std::string("socket: ") + std::strerror(errno)}};
        }
        socks.push_back(fd);
    }
    uint64_t sent = 0, seq = 0;
    const auto end = Clock::now() + duration;
    for (auto next = Clock::now(); next < end; next += interval, ++seq) {
        std::this_thread::sleep_until(next);
        for (int f = 0; f < flows; ++f) {
            Probe p{kMagic, static_cast<uint32_t>(f), seq};
            // A send can fail while a route is gone (ENETUNREACH): that is the outage.
            sent += send(socks[static_cast<size_t>(f)], &p, sizeof p, MSG_DONTWAIT) == sizeof p;
        }
    }
    // The end marker, a few times: the receiver stops at the first, and a flow whose
    // marker never arrives is one that did not come back.
    for (int i = 0; i < 3; ++i) {
        for (int f = 0; f < flows; ++f) {
            Probe p{kMagic, static_cast<uint32_t>(f), kEndSeq};
            send(socks[static_cast<size_t>(f)], &p, sizeof p, MSG_DONTWAIT);
        }
        std::this_thread::sleep_for(interval);
    }
    for (int s : socks) close(s);
    return {{"flows", flows}, {"sent", sent}, {"rounds", seq}};
}

nlohmann::json runFlowReceiver(uint16_t port, std::chrono::microseconds interval,
                               std::chrono::milliseconds duration) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(port);
    int big = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0) {
        if (fd >= 0) close(fd);
        return {{"error", std::string("bind: ") + std::strerror(errno)}};
    }
    std::map<uint32_t, FlowSeen> flows;
    const auto end = Clock::now() + duration;
    std::optional<Clock::time_point> endSeen;
    // Until the sender's end marker (plus a moment for the other plane's last packets).
    while (Clock::now() < end && (!endSeen || Clock::now() < *endSeen + interval * 3)) {
        pollfd pfd{fd, POLLIN, 0};
        if (poll(&pfd, 1, 50) <= 0) continue;
        Probe p{};
        while (recv(fd, &p, sizeof p, MSG_DONTWAIT) == sizeof p) {
            if (p.magic != kMagic) continue;
            auto now = Clock::now();
            FlowSeen& f = flows[p.flow];
            if (p.seq == kEndSeq) {
                f.ended = true;
                if (!endSeen) endSeen = now;
                continue;
            }
            if (f.received > 0) f.maxGapMs = std::max(f.maxGapMs, ms(now - f.last));
            f.last = now;
            f.maxSeq = std::max(f.maxSeq, p.seq);
            ++f.received;
        }
    }
    close(fd);
    const double intervalMs = std::chrono::duration<double, std::milli>(interval).count();
    uint64_t received = 0, lost = 0;
    int interrupted = 0, notRecovered = 0;
    double maxGap = 0;
    nlohmann::json gaps = nlohmann::json::array();
    const auto stop = endSeen.value_or(Clock::now());
    for (const auto& [id, f] : flows) {
        received += f.received;
        lost += f.received > 0 ? f.maxSeq + 1 - f.received : 0;
        double gap = f.maxGapMs;
        if (f.received == 0) {  // only its end marker arrived, or nothing at all
            ++notRecovered;
            gaps.push_back(ms(duration));
            continue;
        }
        // No end marker, silent at the end: the flow never came back.
        if (!f.ended && ms(stop - f.last) > 3 * intervalMs) {
            ++notRecovered;
            gap = std::max(gap, ms(stop - f.last));
        }
        // Shorter silences are this shared machine's scheduling, not the network.
        interrupted += gap > std::max(kInterruptedMs, 3 * intervalMs);
        maxGap = std::max(maxGap, gap);
        gaps.push_back(gap);
    }
    return {{"flows", flows.size()},
            {"received", received},
            {"lost", lost},
            {"max_gap_ms", maxGap},
            {"flows_interrupted", interrupted},
            {"flows_not_recovered", notRecovered},
            {"gaps_ms", gaps}};
}

}  // namespace twinrail::lab
