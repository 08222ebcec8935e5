#include "twinrail/sim/routing.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

namespace twinrail::sim {
namespace {

uint64_t mix64(uint64_t x) {  // splitmix64's finaliser: a well-spread 64-bit hash
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

int level(double capacity, double nominal) {
    if (nominal <= 0) return 1;
    auto v = static_cast<int>(std::lround(kPathqdLevels * capacity / nominal));
    return std::clamp(v, 1, kPathqdLevels);
}

// The members a leaf may send to toward one destination leaf, as BGP leaves them.
struct Candidates {
    std::vector<int> uplinks;  // indexes into the leaf's uplinks
    std::vector<int> members;  // the same uplinks as link ids
    std::vector<int> weights;  // pathqd's level of each path
    std::vector<int> ones;     // ECMP's weights
    int bundle = -1;           // spray's split, built on first use
};

struct Router {
    const Fabric& f;
    const RoutingOptions& o;
    RoutedTraffic out;
    std::vector<uint64_t> switchSeed;
    std::vector<double> placed;  // ARS: demand placed per link
    std::unordered_map<uint64_t, Candidates> cache;
    std::unordered_map<uint64_t, std::vector<int>> downCache;  // (spine, leaf) -> live links
    std::unordered_map<uint64_t, std::vector<int>> downWeights;

    Router(const Fabric& fabric, const RoutingOptions& options) : f(fabric), o(options) {
        for (size_t s = 0; s < f.switches.size(); ++s) {
            bool shared = o.layout == HashLayout::Modulo;
            switchSeed.push_back(mix64(o.seed * 0x100000001b3ULL + (shared ? 0 : s + 1)));
        }
        placed.assign(f.links.size(), 0);
    }

    const Link& link(int id) const { return f.links[static_cast<size_t>(id)]; }

    const std::vector<int>& liveDown(int spine, int leaf) {
        uint64_t key =
            static_cast<uint64_t>(spine) * f.switches.size() + static_cast<uint64_t>(leaf);
        auto it = downCache.find(key);
        if (it != downCache.end()) return it->second;
        std::vector<int> live, weights;
        for (int l : f.switches[static_cast<size_t>(spine)].downTo[static_cast<size_t>(leaf)]) {
            if (!link(l).up) continue;
            live.push_back(l);
            weights.push_back(
                o.mode == Mode::Wcmp ? level(link(l).capacityGbps, link(l).nominalGbps) : 1);
        }
        downWeights[key] = std::move(weights);
        return downCache.emplace(key, std::move(live)).first->second;
    }

    Candidates& candidates(int a, int b) {
        uint64_t key = static_cast<uint64_t>(a) * f.switches.size() + static_cast<uint64_t>(b);
        auto it = cache.find(key);
        if (it != cache.end()) return it->second;
        Candidates c;
        const auto& leaf = f.switches[static_cast<size_t>(a)];
        for (size_t i = 0; i < leaf.uplinks.size(); ++i) {
            int spine = leaf.spineOf[i];
            if (!link(leaf.uplinks[i]).up || !f.switches[static_cast<size_t>(spine)].up) continue;
            double cap = 0, nominal = 0;
            for (int l : f.switches[static_cast<size_t>(spine)].downTo[static_cast<size_t>(b)]) {
                nominal += link(l).nominalGbps;
                if (link(l).up) cap += link(l).capacityGbps;
            }
            if (cap <= 0) continue;
            const Link& up = link(leaf.uplinks[i]);
            c.uplinks.push_back(static_cast<int>(i));
            c.members.push_back(leaf.uplinks[i]);
            c.ones.push_back(1);
            c.weights.push_back(
                std::min(level(up.capacityGbps, up.nominalGbps), level(cap, nominal)));
        }
        return cache.emplace(key, std::move(c)).first->second;
    }

    // Hash-threshold or modulo over weighted members: the member whose cumulative weight
    // range holds the hash.
    size_t pick(uint64_t flowKey, int sw, const std::vector<int>& weights) const {
        auto h = static_cast<uint32_t>(mix64(flowKey ^ switchSeed[static_cast<size_t>(sw)]) >> 33);
        uint64_t total = 0;
        for (int w : weights) total += static_cast<uint64_t>(w);
        uint64_t target =
            o.layout == HashLayout::Threshold ? (uint64_t{h} * total) >> 31 : h % total;
        uint64_t cumulative = 0;
        for (size_t i = 0; i < weights.size(); ++i) {
            cumulative += static_cast<uint64_t>(weights[i]);
            if (target < cumulative) return i;
        }
        return weights.size() - 1;
    }

    size_t leastLoaded(const std::vector<int>& members, double demand, uint64_t flowKey) const {
        size_t best = 0;
        double bestLoad = 0;
        for (size_t i = 0; i < members.size(); ++i) {
            const Link& l = link(members[i]);
            double load = (placed[static_cast<size_t>(members[i])] + demand) / l.capacityGbps;
            // ties go to a hashed member, not always the first port
            double tie = static_cast<double>(mix64(flowKey + i) >> 44) * 1e-15;
            if (i == 0 || load + tie < bestLoad) {
                best = i;
                bestLoad = load + tie;
            }
        }
        return best;
    }

    int sprayBundle(int a, int b, Candidates& c) {
        if (c.bundle >= 0) return c.bundle;
        std::vector<Hop> hops;
        const auto& leaf = f.switches[static_cast<size_t>(a)];
        double share = 1.0 / static_cast<double>(c.uplinks.size());
        for (int i : c.uplinks) {
            hops.push_back({leaf.uplinks[static_cast<size_t>(i)], share});
            const auto& down = liveDown(leaf.spineOf[static_cast<size_t>(i)], b);
            for (int l : down) hops.push_back({l, share / static_cast<double>(down.size())});
        }
        out.bundles.push_back(std::move(hops));
        c.bundle = static_cast<int>(out.bundles.size()) - 1;
        return c.bundle;
    }

    bool reaches(const NicPortNode& s, const NicPortNode& d) {
        if (!s.up || !d.up || s.plane != d.plane) return false;
        if (!f.switches[static_cast<size_t>(s.leaf)].up ||
            !f.switches[static_cast<size_t>(d.leaf)].up)
            return false;
        return s.leaf == d.leaf || !candidates(s.leaf, d.leaf).uplinks.empty();
    }

    struct Pending {
        int src = -1, dst = -1;  // NIC ports
        uint64_t key = 0;
    };

    void choosePath(Flow& flow, const Pending& p) {
        const auto& s = f.nicPorts[static_cast<size_t>(p.src)];
        const auto& d = f.nicPorts[static_cast<size_t>(p.dst)];
        flow.links = {s.toLeaf, d.fromLeaf, -1, -1};
        if (s.leaf == d.leaf) return;
        Candidates& c = candidates(s.leaf, d.leaf);
        const auto& leaf = f.switches[static_cast<size_t>(s.leaf)];
        if (o.mode == Mode::Spray) {
            flow.bundle = sprayBundle(s.leaf, d.leaf, c);
            return;
        }
        const std::vector<int>& members = c.members;
        size_t choice = 0;
        auto pinned = std::find(members.begin(), members.end(), s.pinnedUplink);
        if (o.mode == Mode::Static && pinned != members.end()) {
            choice = static_cast<size_t>(pinned - members.begin());
        } else if (o.mode == Mode::Ars) {
            choice = leastLoaded(members, flow.demandGbps, p.key);
        } else if (o.mode == Mode::Wcmp) {
            choice = pick(p.key, s.leaf, c.weights);
        } else {
            choice = pick(p.key, s.leaf, c.ones);
        }
        int spine = leaf.spineOf[static_cast<size_t>(c.uplinks[choice])];
        const std::vector<int>& down = liveDown(spine, d.leaf);
        size_t second = 0;
        if (o.mode == Mode::Ars) {
            second = leastLoaded(down, flow.demandGbps, p.key);
        } else {
            uint64_t key =
                static_cast<uint64_t>(spine) * f.switches.size() + static_cast<uint64_t>(d.leaf);
            second = pick(p.key, spine, downWeights.at(key));
        }
        flow.links = {s.toLeaf, members[choice], down[second], d.fromLeaf};
    }

    void place(const Flow& flow, double sign) {
        for (int i = 1; i <= 2; ++i) {
            if (flow.links[static_cast<size_t>(i)] >= 0) {
                placed[static_cast<size_t>(flow.links[static_cast<size_t>(i)])] +=
                    sign * flow.demandGbps;
            }
        }
    }

    void run(const std::vector<Transfer>& transfers) {
        std::vector<Pending> pending;
        std::vector<int> flowsOnPort(f.nicPorts.size(), 0);
        out.flowsPerTransfer.assign(transfers.size(), 0);
        for (size_t t = 0; t < transfers.size(); ++t) {
            const auto& src = f.nics[static_cast<size_t>(transfers[t].srcNic)];
            const auto& dst = f.nics[static_cast<size_t>(transfers[t].dstNic)];
            std::vector<std::pair<int, int>> pairs;  // one per plane both reach
            for (int sp : src.ports) {
                for (int dp : dst.ports) {
                    if (reaches(f.nicPorts[static_cast<size_t>(sp)],
                                f.nicPorts[static_cast<size_t>(dp)]))
                        pairs.emplace_back(sp, dp);
                }
            }
            if (pairs.empty()) {
                ++out.unreachableTransfers;
                continue;
            }
            for (int q = 0; q < o.qps; ++q) {
                auto [sp, dp] = pairs[static_cast<size_t>(q) % pairs.size()];
                // A QP's UDP source port: what makes its 5-tuple, and its hash, its own.
                uint64_t sport = mix64(o.seed ^ (t << 8 | static_cast<uint64_t>(q))) & 0xffff;
                uint64_t key = mix64((static_cast<uint64_t>(transfers[t].srcNic) << 40) ^
                                     (static_cast<uint64_t>(transfers[t].dstNic) << 16) ^ sport);
                pending.push_back({sp, dp, key});
                Flow flow;
                flow.transfer = static_cast<int>(t);
                out.flows.push_back(flow);
                ++flowsOnPort[static_cast<size_t>(sp)];
                ++out.flowsPerTransfer[t];
            }
        }
        for (size_t i = 0; i < pending.size(); ++i) {
            const auto& port = f.nicPorts[static_cast<size_t>(pending[i].src)];
            out.flows[i].demandGbps = port.gbps / flowsOnPort[static_cast<size_t>(pending[i].src)];
        }
        std::vector<size_t> order(pending.size());
        std::iota(order.begin(), order.end(), size_t{0});
        if (o.mode == Mode::Ars) {  // flows start in an order of their own
            std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
                return mix64(pending[a].key ^ o.seed) < mix64(pending[b].key ^ o.seed);
            });
        }
        for (size_t i : order) {
            choosePath(out.flows[i], pending[i]);
            if (o.mode == Mode::Ars) place(out.flows[i], 1);
        }
        if (o.mode != Mode::Ars) return;
        for (size_t i : order) {  // the next flowlet of each flow sees where the others went
            place(out.flows[i], -1);
            choosePath(out.flows[i], pending[i]);
            place(out.flows[i], 1);
        }
    }
};

}  // namespace

const char* modeName(Mode m) {
    switch (m) {
        case Mode::Ecmp:
            return "ecmp";
        case Mode::Wcmp:
            return "wcmp";
        case Mode::Static:
            return "static";
        case Mode::Ars:
            return "ars";
        case Mode::Spray:
            return "spray";
    }
    return "?";
}

std::optional<Mode> parseMode(const std::string& name) {
    for (Mode m : {Mode::Ecmp, Mode::Wcmp, Mode::Static, Mode::Ars, Mode::Spray})
        if (name == modeName(m)) return m;
    return std::nullopt;
}

RoutedTraffic route(const Fabric& fabric, const std::vector<Transfer>& transfers,
                    const RoutingOptions& options) {
    Router r(fabric, options);
    r.run(transfers);
    return std::move(r.out);
}

}  // namespace twinrail::sim
