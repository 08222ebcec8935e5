#include "twinrail/sim/traffic.h"

#include <algorithm>
#include <map>

namespace twinrail::sim {
namespace {

int leafOf(const Fabric& f, const NicNode& nic) {
    return nic.ports.empty() ? -1 : f.nicPorts[static_cast<size_t>(nic.ports.front())].leaf;
}

std::variant<std::vector<Transfer>, std::string> permutation(const Fabric& f, double bytes) {
    // NICs grouped by their (first plane's) leaf; shifting by the largest group sends each
    // NIC behind another leaf and lets every NIC receive once.
    std::vector<int> order(f.nics.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return leafOf(f, f.nics[static_cast<size_t>(a)]) <
               leafOf(f, f.nics[static_cast<size_t>(b)]);
    });
    std::map<int, size_t> perLeaf;
    for (const auto& nic : f.nics) ++perLeaf[leafOf(f, nic)];
    size_t shift = 0;
    for (const auto& [leaf, n] : perLeaf) shift = std::max(shift, n);
    std::vector<Transfer> out;
    for (size_t i = 0; i < order.size(); ++i) {
        int src = order[i], dst = order[(i + shift) % order.size()];
        if (leafOf(f, f.nics[static_cast<size_t>(src)]) ==
            leafOf(f, f.nics[static_cast<size_t>(dst)])) {
            return std::string(
                "a permutation across leaves needs at least two leaves of equal size per plane");
        }
        out.push_back({src, dst, bytes});
    }
    return out;
}

void ringAllReduce(const Fabric& f, double bytes, std::vector<Transfer>& out) {
    std::map<int, std::vector<int>> byRail;  // NICs in server order already
    for (size_t i = 0; i < f.nics.size(); ++i)
        byRail[f.nics[i].rail].push_back(static_cast<int>(i));
    for (const auto& [rail, ring] : byRail) {
        if (ring.size() < 2) continue;
        for (size_t i = 0; i < ring.size(); ++i)
            out.push_back({ring[i], ring[(i + 1) % ring.size()], bytes});
    }
}

void expertAllToAll(const Fabric& f, double bytes, std::vector<Transfer>& out) {
    std::vector<std::vector<int>> nicsOf(static_cast<size_t>(f.servers));
    for (size_t i = 0; i < f.nics.size(); ++i)
        nicsOf[static_cast<size_t>(f.nics[i].server)].push_back(static_cast<int>(i));
    int servers = f.servers, size = kExpertGroupServers;
    // Spread each group over the fabric (servers g, g + S/4, ...) so that it crosses leaf
    // groups as expert parallelism placed across the cluster does; contiguous otherwise.
    std::vector<std::vector<int>> groups;
    if (servers >= size && servers % size == 0) {
        int stride = servers / size;
        for (int g = 0; g < stride; ++g) {
            groups.emplace_back();
            for (int k = 0; k < size; ++k) groups.back().push_back(g + k * stride);
        }
    } else {
        for (int s = 0; s < servers; s += size) {
            groups.emplace_back();
            for (int k = s; k < std::min(servers, s + size); ++k) groups.back().push_back(k);
        }
    }
    for (const auto& group : groups) {
        for (int a : group) {
            size_t peers = 0;
            for (int b : group)
                if (b != a) peers += nicsOf[static_cast<size_t>(b)].size();
            if (peers == 0) continue;
            for (int src : nicsOf[static_cast<size_t>(a)]) {
                for (int b : group) {
                    if (b == a) continue;
                    for (int dst : nicsOf[static_cast<size_t>(b)])
                        out.push_back({src, dst, bytes / static_cast<double>(peers)});
                }
            }
        }
    }
}

}  // namespace

const char* patternName(Pattern p) {
    switch (p) {
        case Pattern::Permutation:
            return "permutation";
        case Pattern::AllReduce:
            return "allreduce";
        case Pattern::AllToAll:
            return "alltoall";
        case Pattern::Mix:
            return "mix";
    }
    return "?";
}

std::optional<Pattern> parsePattern(const std::string& name) {
    for (Pattern p : {Pattern::Permutation, Pattern::AllReduce, Pattern::AllToAll, Pattern::Mix})
        if (name == patternName(p)) return p;
    return std::nullopt;
}

std::variant<std::vector<Transfer>, std::string> makeTraffic(const Fabric& fabric, Pattern pattern,
                                                             double bytesPerNic) {
    std::vector<Transfer> out;
    switch (pattern) {
        case Pattern::Permutation:
            return permutation(fabric, bytesPerNic);
        case Pattern::AllReduce:
            ringAllReduce(fabric, bytesPerNic, out);
            break;
        case Pattern::AllToAll:
            expertAllToAll(fabric, bytesPerNic, out);
            break;
        case Pattern::Mix:
            ringAllReduce(fabric, bytesPerNic / 2, out);
            expertAllToAll(fabric, bytesPerNic / 2, out);
            break;
    }
    if (out.empty()) return std::string("the plan has too few servers for ") + patternName(pattern);
    return out;
}

}  // namespace twinrail::sim
