#include "state_rows.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace twinrail::pathqd {

std::string formatDouble(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::map<std::string, redis::Fields> weightRows(const std::vector<netlink::RouteWeights>& routes,
                                                const std::function<std::string(int)>& ifname) {
    struct Group {
        std::vector<netlink::WeightedNexthop> nexthops;
        std::vector<std::string> prefixes;
    };
    std::map<std::string, Group> groups;
    for (const auto& r : routes) {
        if (r.nexthops.size() < 2) continue;  // only multipath routes have weights to show
        std::string key = r.nhid != 0 ? "nhg" + std::to_string(r.nhid) : "route " + r.dst.str();
        auto& g = groups[key];
        g.nexthops = r.nexthops;
        g.prefixes.push_back(r.dst.str());
    }
    std::map<std::string, redis::Fields> rows;
    for (auto& [key, g] : groups) {
        std::sort(g.prefixes.begin(), g.prefixes.end());
        std::string summary, sample;
        redis::Fields fields;
        for (const auto& nh : g.nexthops) {
            std::string name = ifname(nh.ifindex);
            summary += (summary.empty() ? "" : " ") + name + "=" + std::to_string(nh.weight);
            fields.emplace_back("weight_" + name, std::to_string(nh.weight));
        }
        for (size_t i = 0; i < g.prefixes.size() && i < 4; ++i)
            sample += (i ? "," : "") + g.prefixes[i];
        fields.emplace_back("nexthops", summary);
        fields.emplace_back("prefixes", std::to_string(g.prefixes.size()));
        fields.emplace_back("sample", sample);
        rows[key] = std::move(fields);
    }
    return rows;
}

}  // namespace twinrail::pathqd
