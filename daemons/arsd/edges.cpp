#include "edges.h"

#include <net/if.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>

#include "twinrail/ars/bpf_datapath.h"
#include "twinrail/netlink/link_stats.h"

namespace twinrail::arsd {

namespace {

// Link speeds from ethtool, read once per port: an ioctl each, and a port's speed does not
// change under a running daemon often enough to pay that every millisecond.
class LinuxSampler {
  public:
    std::vector<PortReading> read(const std::vector<int>& ifindexes) {
        std::map<int, netlink::QdiscStats> roots;
        for (auto& q : netlink::dumpQdiscs())
            if (q.root) roots[q.ifindex] = q;
        std::vector<PortReading> out;
        for (const auto& link : netlink::dumpLinkCounters()) {
            if (std::find(ifindexes.begin(), ifindexes.end(), link.ifindex) == ifindexes.end())
                continue;
            PortReading r;
            r.ifindex = link.ifindex;
            r.txBytes = link.txBytes;
            auto speed = speeds_.find(link.ifindex);
            if (speed == speeds_.end()) {
                auto bps = netlink::linkSpeedBps(link.name).value_or(0);
                speed = speeds_.emplace(link.ifindex, bps).first;
            }
            r.capacityBps = speed->second;
            if (auto q = roots.find(link.ifindex); q != roots.end()) {
                r.queuedBytes = q->second.backlogBytes;
                if (q->second.rateBps && (r.capacityBps == 0 || *q->second.rateBps < r.capacityBps))
                    r.capacityBps = *q->second.rateBps;
            }
            out.push_back(r);
        }
        return out;
    }

  private:
    std::map<int, uint64_t> speeds_;
};

}  // namespace

Edges realEdges(boost::asio::io_context& io) {
    Edges e;
    e.datapath = [](uint32_t maxFlows) -> std::unique_ptr<ars::Datapath> {
        return std::make_unique<ars::BpfDatapath>(maxFlows);
    };
    e.detachLeftover = [](int ifindex) { return ars::BpfDatapath::detachLeftover(ifindex); };
    e.routeFeed = [&io](std::set<uint32_t> tables, netlink::RouteFeed::OnChange onChange) {
        return std::make_unique<netlink::RouteWatch>(io, std::move(tables), std::move(onChange));
    };
    auto sampler = std::make_shared<LinuxSampler>();
    e.sample = [sampler](const std::vector<int>& ifindexes) { return sampler->read(ifindexes); };
    e.nowNs = [] {
        return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::steady_clock::now().time_since_epoch())
                                         .count());
    };
    e.ifIndex = [](const std::string& name) {
        return static_cast<int>(if_nametoindex(name.c_str()));
    };
    return e;
}

}  // namespace twinrail::arsd
