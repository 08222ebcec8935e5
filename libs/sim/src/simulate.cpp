#include "twinrail/sim/simulate.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "twinrail/sim/fairness.h"

namespace twinrail::sim {
namespace {

constexpr double kBitsPerByte = 8, kBitsPerGbit = 1e9;

double seconds(double bytes, double gbps) {
    return gbps > 0 ? bytes * kBitsPerByte / (gbps * kBitsPerGbit)
                    : std::numeric_limits<double>::infinity();
}

double idealSeconds(const Fabric& f, const std::vector<Transfer>& transfers) {
    std::vector<double> sent(f.nics.size(), 0), received(f.nics.size(), 0);
    for (const auto& t : transfers) {
        sent[static_cast<size_t>(t.srcNic)] += t.bytes;
        received[static_cast<size_t>(t.dstNic)] += t.bytes;
    }
    double worst = 0;
    for (size_t n = 0; n < f.nics.size(); ++n) {
        double line = f.nics[n].lineGbps;
        worst = std::max({worst, seconds(sent[n], line), seconds(received[n], line)});
    }
    return worst;
}

struct UplinkUse {
    double demand = 0, bytes = 0;
    int flows = 0;
};

// The job's time: the units (a QP's share of its transfer, or a NIC's bytes when pooled)
// progress at max-min rates; when the first units end, the links are shared again among
// the rest, up to `rounds` allocations (the last one's rates carry the rest to the end).
// Units ending within kBatch of the first end with it, which bounds the rounds.
struct Progress {
    double jobSeconds = 0;
    std::vector<double> carried;  // bytes per flow
};

Progress runJob(const Fabric& fabric, const std::vector<Transfer>& transfers,
                const RoutedTraffic& routed, ByteSplit split, int rounds) {
    constexpr double kBatch = 0.02;
    const auto& flows = routed.flows;
    bool pooled = split == ByteSplit::Pooled;
    size_t units = pooled ? fabric.nics.size() : flows.size();
    auto unitOf = [&](size_t flow) {
        auto t = static_cast<size_t>(flows[flow].transfer);
        return pooled ? static_cast<size_t>(transfers[t].srcNic) : flow;
    };
    std::vector<double> remaining(units, 0);
    for (size_t i = 0; i < flows.size(); ++i) {
        auto t = static_cast<size_t>(flows[i].transfer);
        remaining[unitOf(i)] += transfers[t].bytes / routed.flowsPerTransfer[t];
    }
    Progress out;
    out.carried.assign(flows.size(), 0);
    std::vector<char> active(flows.size(), 1);
    std::vector<double> unitRate(units);
    for (int round = 1;; ++round) {
        std::vector<double> rates = maxMinRates(fabric.links, routed, &active);
        std::fill(unitRate.begin(), unitRate.end(), 0);
        bool any = false;
        for (size_t i = 0; i < flows.size(); ++i) {
            if (!active[i]) continue;
            unitRate[unitOf(i)] += rates[i];
            any = true;
        }
        if (!any) break;
        double first = std::numeric_limits<double>::infinity(), last = 0;
        for (size_t u = 0; u < units; ++u) {
            if (remaining[u] <= 0) continue;
            double left = seconds(remaining[u], unitRate[u]);
            first = std::min(first, left);
            last = std::max(last, left);
        }
        bool final = round >= rounds || !std::isfinite(first);
        double step = final ? last : first;
        double cutoff = final ? std::numeric_limits<double>::infinity() : first * (1 + kBatch);
        out.jobSeconds += step;
        for (size_t i = 0; i < flows.size(); ++i) {
            if (!active[i]) continue;
            size_t u = unitOf(i);
            bool ends = seconds(remaining[u], unitRate[u]) <= cutoff;
            // an ending unit's flows carry what it had left, in proportion to their rates
            double share = unitRate[u] > 0 ? rates[i] / unitRate[u] : 0;
            out.carried[i] +=
                ends ? remaining[u] * share : rates[i] * step * kBitsPerGbit / kBitsPerByte;
            if (ends) active[i] = 0;
        }
        for (size_t u = 0; u < units; ++u) {
            if (remaining[u] <= 0) continue;
            if (seconds(remaining[u], unitRate[u]) <= cutoff) {
                remaining[u] = 0;
            } else {
                remaining[u] -= unitRate[u] * step * kBitsPerGbit / kBitsPerByte;
            }
        }
        if (final) break;
    }
    return out;
}

}  // namespace

SeedResult simulateSeed(const Fabric& fabric, const std::vector<Transfer>& transfers,
                        const RoutingOptions& options, ByteSplit split, int rounds) {
    RoutedTraffic routed = route(fabric, transfers, options);
    SeedResult r;
    r.unreachableTransfers = routed.unreachableTransfers;
    r.idealSeconds = idealSeconds(fabric, transfers);
    for (size_t t = 0; t < transfers.size(); ++t)
        if (routed.flowsPerTransfer[t] > 0) r.totalBytes += transfers[t].bytes;
    Progress job = runJob(fabric, transfers, routed, split, std::max(rounds, 1));
    r.jobSeconds = job.jobSeconds;
    r.completionOverIdeal = r.idealSeconds > 0 ? r.jobSeconds / r.idealSeconds : 0;

    std::vector<UplinkUse> use(fabric.links.size());
    auto account = [&](int link, double fraction, size_t flow) {
        const Link& l = fabric.links[static_cast<size_t>(link)];
        if (!l.leafUplink) return;
        double bytes = job.carried[flow];
        auto& u = use[static_cast<size_t>(link)];
        u.demand += routed.flows[flow].demandGbps * fraction;
        u.bytes += bytes * fraction;
        ++u.flows;
    };
    for (size_t i = 0; i < routed.flows.size(); ++i) {
        for (int l : routed.flows[i].links)
            if (l >= 0) account(l, 1, i);
        if (routed.flows[i].bundle >= 0) {
            for (const Hop& h : routed.bundles[static_cast<size_t>(routed.flows[i].bundle)])
                account(h.link, h.fraction, i);
        }
    }
    int live = 0, over = 0;
    double most = 0, sum = 0;
    int counted = 0;
    for (const auto& sw : fabric.switches) {
        if (sw.spine || !sw.up) continue;
        double leafBytes = 0;
        for (int l : sw.uplinks) leafBytes += use[static_cast<size_t>(l)].bytes;
        for (int l : sw.uplinks) {
            const Link& link = fabric.links[static_cast<size_t>(l)];
            if (!link.up) continue;
            const UplinkUse& u = use[static_cast<size_t>(l)];
            ++live;
            if (u.demand > link.capacityGbps * (1 + 1e-9)) ++over;
            r.worstUplinkFlows = std::max(r.worstUplinkFlows, static_cast<double>(u.flows));
            if (leafBytes <= 0) continue;  // a leaf that sends nothing up says nothing of balance
            most = std::max(most, u.bytes);
            sum += u.bytes;
            ++counted;
        }
    }
    r.oversubscribedUplinkShare = live > 0 ? static_cast<double>(over) / live : 0;
    r.maxOverMeanLinkLoad = sum > 0 ? most / (sum / counted) : 0;
    return r;
}

Stat statOf(std::vector<double> v) {
    Stat s;
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    s.median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    auto rank = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(n)));
    s.p95 = v[std::max<size_t>(rank, 1) - 1];
    return s;
}

Summary simulateSeeds(const Fabric& fabric, const std::vector<Transfer>& transfers,
                      RoutingOptions options, ByteSplit split, int seeds, int rounds) {
    std::vector<double> completion, over, worst, balance;
    Summary s;
    s.seeds = seeds;
    for (int seed = 1; seed <= seeds; ++seed) {
        options.seed = static_cast<uint64_t>(seed);
        SeedResult r = simulateSeed(fabric, transfers, options, split, rounds);
        completion.push_back(r.completionOverIdeal);
        over.push_back(r.oversubscribedUplinkShare);
        worst.push_back(r.worstUplinkFlows);
        balance.push_back(r.maxOverMeanLinkLoad);
        s.unreachableTransfers = std::max(s.unreachableTransfers, r.unreachableTransfers);
    }
    s.completionOverIdeal = statOf(completion);
    s.oversubscribedUplinkShare = statOf(over);
    s.worstUplinkFlows = statOf(worst);
    s.maxOverMeanLinkLoad = statOf(balance);
    return s;
}

}  // namespace twinrail::sim
