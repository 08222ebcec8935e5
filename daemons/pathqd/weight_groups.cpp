#include "weight_groups.h"

namespace twinrail::pathqd {

void WeightGroups::leave(const netlink::RouteKey& key) {
    auto it = groupOf_.find(key);
    if (it == groupOf_.end()) return;
    auto g = groups_.find(it->second);
    if (g != groups_.end()) {
        g->second.prefixes.erase(key.dst);
        if (g->second.prefixes.empty()) groups_.erase(g);
        changed_.insert(it->second);
    }
    groupOf_.erase(it);
}

void WeightGroups::update(const netlink::RouteKey& key, const netlink::KernelRoute* route) {
    if (route == nullptr || route->nexthops.size() < 2) {  // only multipath has weights
        leave(key);
        return;
    }
    std::string group;
    for (const auto& nh : route->nexthops)
        group += (group.empty() ? "" : ",") + ifname_(nh.ifindex) + "=" + std::to_string(nh.weight);
    auto it = groupOf_.find(key);
    if (it != groupOf_.end() && it->second == group) return;
    leave(key);
    Group& g = groups_[group];
    g.nexthops = route->nexthops;
    g.prefixes.insert(key.dst);
    groupOf_[key] = group;
    changed_.insert(group);
}

void WeightGroups::clear() {
    for (const auto& [key, g] : groups_) changed_.insert(key);
    groups_.clear();
    groupOf_.clear();
}

std::set<std::string> WeightGroups::takeChanged() {
    return std::exchange(changed_, {});
}

std::optional<redis::Fields> WeightGroups::row(const std::string& key) const {
    auto it = groups_.find(key);
    if (it == groups_.end()) return std::nullopt;
    const Group& g = it->second;
    std::string summary, sample;
    redis::Fields fields;
    for (const auto& nh : g.nexthops) {
        std::string name = ifname_(nh.ifindex);
        summary += (summary.empty() ? "" : " ") + name + "=" + std::to_string(nh.weight);
        fields.emplace_back("weight_" + name, std::to_string(nh.weight));
    }
    size_t n = 0;
    for (auto p = g.prefixes.begin(); p != g.prefixes.end() && n < 4; ++p, ++n)
        sample += (n ? "," : "") + p->str();
    fields.emplace_back("nexthops", summary);
    fields.emplace_back("prefixes", std::to_string(g.prefixes.size()));
    fields.emplace_back("sample", sample);
    return fields;
}

std::vector<std::string> WeightGroups::keys() const {
    std::vector<std::string> out;
    out.reserve(groups_.size());
    for (const auto& [key, g] : groups_) out.push_back(key);
    return out;
}

std::map<std::string, redis::Fields> weightRows(const std::vector<netlink::RouteWeights>& routes,
                                                const WeightGroups::IfName& ifname) {
    WeightGroups groups(ifname);
    for (const auto& r : routes) {
        netlink::KernelRoute k;
        k.dst = r.dst;
        k.nhid = r.nhid;
        k.nexthops = r.nexthops;
        groups.update(netlink::keyOf(k), &k);
    }
    std::map<std::string, redis::Fields> rows;
    for (const auto& key : groups.keys()) rows[key] = *groups.row(key);
    return rows;
}

}  // namespace twinrail::pathqd
