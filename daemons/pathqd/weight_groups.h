// PATH_WEIGHT_TABLE, kept up to date route by route: BGP multipath routes grouped by
// their next hops and weights (one row per distinct set, keyed "swp1=25,swp2=75"). A
// change costs what changed, not the table: at 100k routes a rebuild per change was
// most of pathqd's CPU while FRR re-advertised. Pure: interface names come from the
// caller.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "twinrail/netlink/route_watch.h"
#include "twinrail/redis/client.h"

namespace twinrail::pathqd {

class WeightGroups {
  public:
    using IfName = std::function<std::string(int ifindex)>;
    explicit WeightGroups(IfName ifname) : ifname_(std::move(ifname)) {}

    // The route at `key` is now `route` (nullptr: gone, or not a BGP multipath route).
    void update(const netlink::RouteKey& key, const netlink::KernelRoute* route);
    void clear();
    // Group keys whose rows changed since the last call.
    std::set<std::string> takeChanged();
    std::optional<redis::Fields> row(const std::string& key) const;
    std::vector<std::string> keys() const;
    size_t routes() const { return groupOf_.size(); }

  private:
    struct Group {
        std::vector<netlink::WeightedNexthop> nexthops;
        std::set<IpPrefix> prefixes;
    };
    void leave(const netlink::RouteKey& key);

    IfName ifname_;
    std::map<netlink::RouteKey, std::string> groupOf_;
    std::map<std::string, Group> groups_;
    std::set<std::string> changed_;
};

// The same grouping in one go (tests, tools).
std::map<std::string, redis::Fields> weightRows(const std::vector<netlink::RouteWeights>& routes,
                                                const WeightGroups::IfName& ifname);

}  // namespace twinrail::pathqd
