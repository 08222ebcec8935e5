#include "twinrail/sim/fairness.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace twinrail::sim {
namespace {

constexpr double kEps = 1e-9;

// Compressed lists: for each link, what crosses it.
struct Index {
    std::vector<size_t> start;
    std::vector<int> items;
    static Index build(size_t keys, const std::vector<std::pair<int, int>>& pairs) {
        Index ix;
        ix.start.assign(keys + 1, 0);
        for (const auto& [k, v] : pairs) ++ix.start[static_cast<size_t>(k) + 1];
        for (size_t k = 0; k < keys; ++k) ix.start[k + 1] += ix.start[k];
        ix.items.resize(pairs.size());
        std::vector<size_t> next(ix.start.begin(), ix.start.end() - 1);
        for (const auto& [k, v] : pairs) ix.items[next[static_cast<size_t>(k)]++] = v;
        return ix;
    }
};

}  // namespace

std::vector<double> maxMinRates(const std::vector<Link>& links, const RoutedTraffic& traffic,
                                const std::vector<char>* active) {
    const auto& flows = traffic.flows;
    std::vector<double> weight(links.size(), 0), frozenLoad(links.size(), 0);
    std::vector<double> rate(flows.size(), -1);
    std::vector<std::pair<int, int>> linkFlow, linkBundle, bundleFlow;
    std::vector<double> bundleCount(traffic.bundles.size(), 0);
    for (size_t i = 0; i < flows.size(); ++i) {
        if (active != nullptr && !(*active)[i]) {
            rate[i] = 0;
            continue;
        }
        for (int l : flows[i].links) {
            if (l < 0) continue;
            weight[static_cast<size_t>(l)] += 1;
            linkFlow.emplace_back(l, static_cast<int>(i));
        }
        if (flows[i].bundle >= 0) {
            bundleCount[static_cast<size_t>(flows[i].bundle)] += 1;
            bundleFlow.emplace_back(flows[i].bundle, static_cast<int>(i));
        }
    }
    for (size_t b = 0; b < traffic.bundles.size(); ++b) {
        for (const Hop& h : traffic.bundles[b]) {
            weight[static_cast<size_t>(h.link)] += bundleCount[b] * h.fraction;
            linkBundle.emplace_back(h.link, static_cast<int>(b));
        }
    }
    Index byLink = Index::build(links.size(), linkFlow);
    Index bundlesByLink = Index::build(links.size(), linkBundle);
    Index flowsByBundle = Index::build(traffic.bundles.size(), bundleFlow);

    auto freeze = [&](int flow, double level) {
        auto& r = rate[static_cast<size_t>(flow)];
        if (r >= 0) return;
        r = level;
        const Flow& f = flows[static_cast<size_t>(flow)];
        for (int l : f.links) {
            if (l < 0) continue;
            weight[static_cast<size_t>(l)] -= 1;
            frozenLoad[static_cast<size_t>(l)] += level;
        }
        if (f.bundle < 0) return;
        for (const Hop& h : traffic.bundles[static_cast<size_t>(f.bundle)]) {
            weight[static_cast<size_t>(h.link)] -= h.fraction;
            frozenLoad[static_cast<size_t>(h.link)] += level * h.fraction;
        }
    };

    auto levelOf = [&](size_t l) {
        const Link& link = links[l];
        double room = std::max(0.0, (link.up ? link.capacityGbps : 0) - frozenLoad[l]);
        return room / weight[l];
    };
    // A lazy min-heap of link levels. Freezing flows at the lowest level only raises the
    // other links' levels (each loses a flow that took less than its fair share), so an
    // entry older than its link's last change is stale and skipped.
    using Entry = std::pair<double, int>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
    std::vector<double> current(links.size(), -1);
    auto refresh = [&](size_t l) {
        if (weight[l] <= kEps) {
            current[l] = -1;
            return;
        }
        current[l] = levelOf(l);
        heap.emplace(current[l], static_cast<int>(l));
    };
    for (size_t l = 0; l < links.size(); ++l) refresh(l);
    std::vector<char> bundleFrozen(traffic.bundles.size(), 0), touched(links.size(), 0);
    std::vector<size_t> touchedList;
    auto touch = [&](int l) {
        if (touched[static_cast<size_t>(l)]) return;
        touched[static_cast<size_t>(l)] = 1;
        touchedList.push_back(static_cast<size_t>(l));
    };
    auto isCurrent = [&](const Entry& e) {
        return current[static_cast<size_t>(e.second)] == e.first;
    };
    while (!heap.empty()) {
        if (!isCurrent(heap.top())) {
            heap.pop();
            continue;
        }
        double lowest = heap.top().first;
        double cutoff = lowest * (1 + kEps) + kEps;
        std::vector<size_t> full;
        while (!heap.empty() && heap.top().first <= cutoff) {
            if (isCurrent(heap.top())) {
                full.push_back(static_cast<size_t>(heap.top().second));
                current[full.back()] = -1;
            }
            heap.pop();
        }
        auto freezeTouching = [&](int flow) {
            if (rate[static_cast<size_t>(flow)] >= 0) return;
            freeze(flow, lowest);
            const Flow& f = flows[static_cast<size_t>(flow)];
            for (int l : f.links)
                if (l >= 0) touch(l);
            if (f.bundle >= 0)
                for (const Hop& h : traffic.bundles[static_cast<size_t>(f.bundle)]) touch(h.link);
        };
        for (size_t l : full) {
            for (size_t k = byLink.start[l]; k < byLink.start[l + 1]; ++k)
                freezeTouching(byLink.items[k]);
            for (size_t k = bundlesByLink.start[l]; k < bundlesByLink.start[l + 1]; ++k) {
                auto b = static_cast<size_t>(bundlesByLink.items[k]);
                if (bundleFrozen[b]) continue;
                bundleFrozen[b] = 1;
                for (size_t j = flowsByBundle.start[b]; j < flowsByBundle.start[b + 1]; ++j)
                    freezeTouching(flowsByBundle.items[j]);
            }
        }
        for (size_t l : touchedList) {
            touched[l] = 0;
            refresh(l);
        }
        touchedList.clear();
    }
    for (auto& r : rate) r = std::max(r, 0.0);
    return rate;
}

}  // namespace twinrail::sim
