// A Datapath (libs/ars datapath.h) that records what arsd asked of it: the routes it
// holds, the ports attached, pinned and their bands, the settings, and every call in
// order (so a test can see that a leftover filter is detached before the attach).
#pragma once

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "twinrail/ars/datapath.h"

namespace twinrail::fakes {

struct FakeArsState {
    uint32_t maxFlows = 0;
    ars::DatapathSettings settings;
    int configures = 0;
    std::map<IpPrefix, std::vector<ars::PathNexthop>> routes;
    std::set<int> attached;
    std::set<int> pinned;
    std::map<int, uint8_t> bands;
    std::map<int, uint64_t> rates;                          // bytes per second
    std::map<int, std::pair<uint64_t, uint64_t>> backlogs;  // bytes, at (ns)
    std::vector<std::string> calls;  // "attach 3", "detach 3", "setRoute 10.0.0.0/24", ...
    std::set<int> failAttach;        // attach throws for these
};

class FakeArsDatapath final : public ars::Datapath {
  public:
    FakeArsDatapath(FakeArsState& state, uint32_t maxFlows) : s_(state) { s_.maxFlows = maxFlows; }
    void configure(const ars::DatapathSettings& settings) override {
        s_.settings = settings;
        ++s_.configures;
    }
    void setRoute(const IpPrefix& dst, const std::vector<ars::PathNexthop>& nexthops) override {
        s_.routes[dst] = nexthops;
        s_.calls.push_back("setRoute " + dst.str());
    }
    void removeRoute(const IpPrefix& dst) override {
        s_.routes.erase(dst);
        s_.calls.push_back("removeRoute " + dst.str());
    }
    void setPortBand(int ifindex, uint8_t band) override { s_.bands[ifindex] = band; }
    void setPortRate(int ifindex, uint64_t bytesPerSecond) override {
        s_.rates[ifindex] = bytesPerSecond;
    }
    void setPortBacklog(int ifindex, uint64_t bytes, uint64_t atNs) override {
        s_.backlogs[ifindex] = {bytes, atNs};
    }
    void setPinned(int ifindex, bool pinned) override {
        if (pinned)
            s_.pinned.insert(ifindex);
        else
            s_.pinned.erase(ifindex);
    }
    void attach(int ifindex) override {
        if (s_.failAttach.count(ifindex) != 0) throw std::runtime_error("attach refused");
        s_.attached.insert(ifindex);
        s_.calls.push_back("attach " + std::to_string(ifindex));
    }
    void detach(int ifindex) override {
        s_.attached.erase(ifindex);
        s_.calls.push_back("detach " + std::to_string(ifindex));
    }
    ars::DatapathCounters counters() const override { return {}; }

  private:
    FakeArsState& s_;
};

}  // namespace twinrail::fakes
