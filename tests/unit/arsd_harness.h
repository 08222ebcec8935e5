// arsd's Daemon on fakes: a recording Datapath, a route feed the test edits, port counters
// and a clock the test sets, and a fixed name -> ifindex table.
#pragma once

#include <boost/asio/io_context.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "daemon.h"
#include "edges.h"
#include "twinrail_fakes/fake_ars_datapath.h"
#include "twinrail_fakes/kernel.h"

namespace twinrail::arsd::test {

struct Harness {
    boost::asio::io_context io;
    fakes::FakeArsState dp;
    fakes::FakeRouteFeed* feed = nullptr;
    std::map<int, PortReading> counters;  // what the sampler reads now
    uint64_t now = 1'000'000'000;
    int datapathsMade = 0;
    std::map<std::string, int> ifindexes{
        {"up1", 11}, {"up2", 12}, {"up3", 13}, {"host1", 21}, {"host2", 22}};

    Edges edges() {
        Edges e;
        e.datapath = [this](uint32_t maxFlows) -> std::unique_ptr<ars::Datapath> {
            ++datapathsMade;
            return std::make_unique<fakes::FakeArsDatapath>(dp, maxFlows);
        };
        e.detachLeftover = [this](int ifindex) {
            dp.calls.push_back("leftover " + std::to_string(ifindex));
            return false;
        };
        e.routeFeed = [this](std::set<uint32_t> tables, netlink::RouteFeed::OnChange onChange) {
            auto f = std::make_unique<fakes::FakeRouteFeed>(std::move(tables), std::move(onChange));
            feed = f.get();
            return f;
        };
        e.sample = [this](const std::vector<int>& which) {
            std::vector<PortReading> out;
            for (int i : which)
                if (auto it = counters.find(i); it != counters.end()) out.push_back(it->second);
            return out;
        };
        e.nowNs = [this] { return now; };
        e.ifIndex = [this](const std::string& name) {
            auto it = ifindexes.find(name);
            return it == ifindexes.end() ? 0 : it->second;
        };
        return e;
    }

    // A leaf: two hosts (host1 pinned), three uplinks, flowlet quality on up1 and up2.
    static Config leafConfig() {
        Config c;
        c.ars.enabled = true;
        c.ars.maxFlows = 1024;
        c.ars.interfaces = {{"up1", 0}, {"up2", 0}};
        c.ports = {"up1", "up2", "up3", "host1", "host2"};
        c.pinned = {"host1"};
        c.fabric = {"up1", "up2", "up3"};
        return c;
    }
};

inline IpAddr ip(const char* text) {
    return *IpAddr::parse(text);
}
inline IpPrefix prefix(const char* text) {
    return *IpPrefix::parse(text);
}

// A unicast route of the main table (or `table`) through `nexthops` (ifindex, gateway, weight).
inline netlink::KernelRoute route(const char* dst,
                                  std::vector<std::tuple<int, const char*, uint32_t>> nexthops,
                                  uint32_t table = 254, uint32_t metric = 20) {
    netlink::KernelRoute r;
    r.dst = prefix(dst);
    r.table = table;
    r.metric = metric;
    r.protocol = 186;
    for (const auto& [ifindex, gw, weight] : nexthops) {
        netlink::WeightedNexthop nh;
        nh.ifindex = ifindex;
        if (gw != nullptr) nh.gateway = ip(gw);
        nh.weight = weight;
        r.nexthops.push_back(nh);
    }
    return r;
}

}  // namespace twinrail::arsd::test
