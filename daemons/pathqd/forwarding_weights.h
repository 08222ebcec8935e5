// The weight audit's input edge: the multipath weights in force, from wherever the switch
// forwards. On Linux that is the kernel (KernelWeights); on SONiC the ASIC, read from
// APPL_DB and ASIC_DB (SonicWeightReader). Each source also says what FRR computes from
// BGP's bandwidths and how its weights turn into the ones it reports (sonic_weight_rules.h),
// so the auditor compares like with like whatever the source.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sonic_weight_rules.h"
#include "twinrail/common/ip.h"
#include "twinrail/netlink/link_stats.h"
#include "weight_audit.h"

namespace twinrail::pathqd {

struct ForwardedRoute {
    IpPrefix dst;
    PortWeights weights;  // by port name; only routes with two paths or more
    WeightRule rule = WeightRule::Exact;
    std::string from = "kernel";  // for the log line: kernel, APPL_DB, ASIC_DB
};

struct ForwardedRead {
    std::vector<ForwardedRoute> routes;
    std::vector<std::string> badRows;  // rows that could not be used, each named with its key
};

class ForwardingWeights {
  public:
    using Done = std::function<void(ForwardedRead read, std::string error)>;
    virtual ~ForwardingWeights() = default;
    // `done` gets the routes, or an error when nothing could be read; it may run before
    // read() returns (the kernel's routes are in memory).
    virtual void read(Done done) = 0;
    // FRR's weights for BGP's multipaths, as the FRR on this switch computes them.
    virtual PortWeights frrWeightsOf(const std::vector<BgpPath>& paths) const = 0;
    // Whether a diverged route can be repaired by deleting it from the kernel.
    virtual bool kernelRepairable() const = 0;
    virtual const char* name() const = 0;  // "kernel", "sonic"
};

// The kernel's BGP multipath routes that the daemon already follows.
class KernelWeights final : public ForwardingWeights {
  public:
    using Routes = std::function<const std::vector<netlink::RouteWeights>&()>;
    using IfName = std::function<std::string(int ifindex)>;
    KernelWeights(Routes routes, IfName ifname)
        : routes_(std::move(routes)), ifname_(std::move(ifname)) {}
    void read(Done done) override {
        ForwardedRead out;
        for (const auto& r : routes_()) {
            if (r.nexthops.size() < 2) continue;  // one path: nothing to weigh
            ForwardedRoute f{r.dst, {}, WeightRule::Exact, "kernel"};
            for (const auto& nh : r.nexthops) f.weights[ifname_(nh.ifindex)] += nh.weight;
            out.routes.push_back(std::move(f));
        }
        done(std::move(out), "");
    }
    PortWeights frrWeightsOf(const std::vector<BgpPath>& paths) const override {
        return impliedWeights(paths);  // FRR 8.4's rule (weight_audit.h)
    }
    bool kernelRepairable() const override { return true; }
    const char* name() const override { return "kernel"; }

  private:
    Routes routes_;
    IfName ifname_;
};

}  // namespace twinrail::pathqd
