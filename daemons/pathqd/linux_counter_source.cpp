// Linux counters are live: every read is what the kernel has now, so the instant the
// counters were taken is the read itself.
#include <algorithm>

#include "counter_source.h"
#include "twinrail/netlink/link_stats.h"

namespace twinrail::pathqd {
namespace {
constexpr auto kSpeedRefresh = std::chrono::seconds(5);
}  // namespace

void LinuxCounterSource::poll(const std::vector<std::string>& ports,
                              std::function<void(CounterMap, std::string)> done) {
    CounterMap out;
    try {
        std::map<int, netlink::QdiscStats> qdiscs;
        for (auto& q : netlink::dumpRootQdiscs()) qdiscs[q.ifindex] = q;
        auto now = std::chrono::steady_clock::now();
        for (const auto& link : netlink::dumpLinkCounters()) {
            if (std::find(ports.begin(), ports.end(), link.name) == ports.end()) continue;
            PortCounters& p = out[link.name];
            p.ifindex = link.ifindex;
            p.up = link.operUp;
            p.counters = {link.txBytes, link.txPackets, link.txDropped};
            p.sampledAt = now;
            auto& speed = speeds_[link.name];
            if (speed.second + kSpeedRefresh < now ||
                speed.second.time_since_epoch().count() == 0) {
                auto bps = netlink::linkSpeedBps(link.name);
                speed = {bps ? std::optional<double>(static_cast<double>(*bps)) : std::nullopt,
                         now};
            }
            p.capacityBps = speed.first;
            if (auto q = qdiscs.find(link.ifindex); q != qdiscs.end()) {
                p.queueBytes = static_cast<double>(q->second.backlogBytes);
                p.queueSource = "qdisc";
                p.counters.drops += q->second.drops;
                if (q->second.rateBps) {
                    double shaped = static_cast<double>(*q->second.rateBps);
                    p.capacityBps = p.capacityBps ? std::min(*p.capacityBps, shaped) : shaped;
                }
            }
        }
    } catch (const std::exception& e) {
        return done({}, e.what());
    }
    done(std::move(out), "");
}

}  // namespace twinrail::pathqd
