#include "sonic_weights.h"

#include <charconv>
#include <set>
#include <string_view>

#include "twinrail/common/names.h"

namespace twinrail::pathqd::sonic_weights {
namespace {

constexpr std::string_view kRouteTable = "ROUTE_TABLE:";
constexpr std::string_view kNhgTable = "NEXTHOP_GROUP_TABLE:";
constexpr std::string_view kAsicRoute = "ASIC_STATE:SAI_OBJECT_TYPE_ROUTE_ENTRY:";
constexpr const char* kMemberGroup = "SAI_NEXT_HOP_GROUP_MEMBER_ATTR_NEXT_HOP_GROUP_ID";
constexpr const char* kMemberNexthop = "SAI_NEXT_HOP_GROUP_MEMBER_ATTR_NEXT_HOP_ID";
constexpr const char* kMemberWeight = "SAI_NEXT_HOP_GROUP_MEMBER_ATTR_WEIGHT";
constexpr const char* kNexthopRif = "SAI_NEXT_HOP_ATTR_ROUTER_INTERFACE_ID";
constexpr const char* kRifPort = "SAI_ROUTER_INTERFACE_ATTR_PORT_ID";
constexpr const char* kRouteNexthop = "SAI_ROUTE_ENTRY_ATTR_NEXT_HOP_ID";

std::vector<std::string> splitCommas(const std::string& s) {
    std::vector<std::string> out;
    size_t start = 0;
    while (true) {
        auto comma = s.find(',', start);
        out.push_back(s.substr(start, comma - start));
        if (comma == std::string::npos) return out;
        start = comma + 1;
    }
}

// A weight as fpmsyncd and orchagent write it: decimal, 1 or more.
std::optional<unsigned> parseWeight(std::string_view text) {
    unsigned v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v == 0) return std::nullopt;
    return v;
}

const std::string* field(const Row& row, std::string_view name) {
    auto it = row.find(name);
    return it == row.end() ? nullptr : &it->second;
}

// Interface names already checked in this read: a table holds a few dozen ports for 100k
// routes, and names::check builds a message per character it looks at.
using NameCache = std::map<std::string, std::optional<std::string>, std::less<>>;

const std::optional<std::string>& checkedName(const std::string& name, NameCache& cache) {
    auto it = cache.find(name);
    if (it == cache.end())
        it = cache.emplace(name, names::check(name, names::Kind::Interface)).first;
    return it->second;
}

// The three lists of a ROUTE_TABLE or NEXTHOP_GROUP_TABLE row as weights by ifname.
std::optional<PortWeights> listsToWeights(const Row& row, bool weightRequired, NameCache& cache,
                                          std::string& error) {
    const auto* nexthop = field(row, "nexthop");
    const auto* ifname = field(row, "ifname");
    const auto* weight = field(row, "weight");
    if (nexthop == nullptr) return error = "missing field nexthop", std::nullopt;
    if (ifname == nullptr) return error = "missing field ifname", std::nullopt;
    auto hops = splitCommas(*nexthop);
    auto names = splitCommas(*ifname);
    if (names.size() != hops.size()) {
        error = "nexthop has " + std::to_string(hops.size()) + " entries but ifname has " +
                std::to_string(names.size());
        return std::nullopt;
    }
    std::vector<std::string> weights;
    if (weight != nullptr && !weight->empty()) {
        weights = splitCommas(*weight);
        if (weights.size() != hops.size()) {
            error = "nexthop has " + std::to_string(hops.size()) + " entries but weight has " +
                    std::to_string(weights.size());
            return std::nullopt;
        }
    } else if (weightRequired && hops.size() > 1) {
        return error = "missing field weight", std::nullopt;
    }
    PortWeights out;
    for (size_t i = 0; i < hops.size(); ++i) {
        if (!IpAddr::parse(hops[i])) {
            error = "nexthop \"" + names::printable(hops[i], 64) + "\" is not an address";
            return std::nullopt;
        }
        if (const auto& why = checkedName(names[i], cache)) {
            error = "ifname \"" + names::printable(names[i], 64) + "\": " + *why;
            return std::nullopt;
        }
        unsigned w = 1;  // no weights: fpmsyncd dropped them, the ASIC forwards ECMP
        if (!weights.empty()) {
            auto parsed = parseWeight(weights[i]);
            if (!parsed) {
                error = "weight \"" + names::printable(weights[i], 32) +
                        "\" is not a whole number of 1 or more";
                return std::nullopt;
            }
            w = *parsed;
        }
        out[names[i]] += w;
    }
    return out;
}

}  // namespace

std::optional<RouteKey> parseRouteKey(const std::string& key, std::string& error) {
    if (key.rfind(kRouteTable, 0) != 0) {
        error = "not a ROUTE_TABLE key";
        return std::nullopt;
    }
    std::string_view rest = std::string_view(key).substr(kRouteTable.size());
    if (auto p = IpPrefix::parse(rest)) return RouteKey{"", *p};
    auto colon = rest.find(':');
    if (colon != std::string_view::npos && colon > 0) {
        if (auto p = IpPrefix::parse(rest.substr(colon + 1)))
            return RouteKey{std::string(rest.substr(0, colon)), *p};
    }
    error = "\"" + names::printable(std::string(rest), 80) + "\" is not a prefix";
    return std::nullopt;
}

namespace {

std::optional<ApplWeights> parseAppl(const Row& row, const Rows& nhgRows, int sonicRelease,
                                     NameCache& cache, std::string& error) {
    if (const auto* nhg = field(row, "nexthop_group"); nhg != nullptr && !nhg->empty()) {
        auto it = nhgRows.find(std::string(kNhgTable) + *nhg);
        if (it == nhgRows.end()) {
            error = "nexthop_group \"" + names::printable(*nhg, 32) +
                    "\" has no NEXTHOP_GROUP_TABLE row";
            return std::nullopt;
        }
        std::string why;
        auto w = listsToWeights(it->second, true, cache, why);
        if (!w) {
            error = "NEXTHOP_GROUP_TABLE:" + names::printable(*nhg, 32) + ": " + why;
            return std::nullopt;
        }
        return ApplWeights{*w, WeightRule::Exact};  // rtnh_hops + 1: FRR's own weights
    }
    WeightRule rule = routeTableRule(sonicRelease);
    auto w = listsToWeights(row, rule == WeightRule::MinusOneFloorOne, cache, error);
    if (!w) return std::nullopt;
    return ApplWeights{*w, rule};
}

// `"name":"value"` in syncd's route key (sairedis serialises it flat, strings only);
// nullopt when the key has no such member.
std::optional<std::string> keyMember(std::string_view json, std::string_view name) {
    std::string needle = "\"" + std::string(name) + "\":\"";
    auto at = json.find(needle);
    if (at == std::string_view::npos) return std::nullopt;
    auto begin = at + needle.size();
    auto end = json.find('"', begin);
    if (end == std::string_view::npos) return std::nullopt;
    return std::string(json.substr(begin, end - begin));
}

}  // namespace

std::optional<ApplWeights> parseApplRoute(const Row& row, const Rows& nhgRows, int sonicRelease,
                                          std::string& error) {
    NameCache cache;
    return parseAppl(row, nhgRows, sonicRelease, cache, error);
}

AsicRoutes resolveAsic(const AsicTables& t) {
    AsicRoutes out;
    std::map<std::string, std::string> nameOf;  // port or LAG oid -> name
    for (const auto& [name, oid] : t.portNames) nameOf[oid] = name;
    auto objectKey = [](const char* type, const std::string& oid) {
        return std::string("ASIC_STATE:SAI_OBJECT_TYPE_") + type + ":" + oid;
    };
    // Members by group, each resolved to a port name and weight.
    std::map<std::string, PortWeights> groups;
    std::set<std::string> badGroups;
    for (const auto& member : t.members) {
        const std::string& key = member.first;  // named: clang 14 cannot capture a binding
        const Row& row = member.second;
        auto fail = [&out, &key](const std::string& why) {
            out.errors.push_back(names::printable(key, 120) + ": " + why);
        };
        const auto* group = field(row, kMemberGroup);
        const auto* nh = field(row, kMemberNexthop);
        if (group == nullptr || nh == nullptr) {
            fail(std::string("missing field ") +
                 (group == nullptr ? kMemberGroup : kMemberNexthop));
            continue;
        }
        unsigned weight = 1;
        if (const auto* w = field(row, kMemberWeight)) {
            auto parsed = parseWeight(*w);
            if (!parsed) {
                fail(std::string(kMemberWeight) + " \"" + names::printable(*w, 32) +
                     "\" is not a whole number of 1 or more");
                badGroups.insert(*group);
                continue;
            }
            weight = *parsed;
        }
        std::string why;
        auto nhRow = t.nexthops.find(objectKey("NEXT_HOP", *nh));
        const std::string* rif =
            nhRow == t.nexthops.end() ? nullptr : field(nhRow->second, kNexthopRif);
        auto rifRow =
            rif == nullptr ? t.rifs.end() : t.rifs.find(objectKey("ROUTER_INTERFACE", *rif));
        const std::string* port =
            rifRow == t.rifs.end() ? nullptr : field(rifRow->second, kRifPort);
        auto name = port == nullptr ? nameOf.end() : nameOf.find(*port);
        if (nhRow == t.nexthops.end()) {
            why = "unknown next hop oid " + names::printable(*nh, 40);
        } else if (rif == nullptr) {
            why = std::string("next hop without ") + kNexthopRif;
        } else if (rifRow == t.rifs.end()) {
            why = "unknown router interface oid " + names::printable(*rif, 40);
        } else if (port == nullptr) {
            why = std::string("router interface without ") + kRifPort + " (not a port)";
        } else if (name == nameOf.end()) {
            why = "port oid " + names::printable(*port, 40) + " is in no COUNTERS_*_NAME_MAP";
        }
        if (!why.empty()) {
            fail(why);
            badGroups.insert(*group);
            continue;
        }
        groups[*group][name->second] += weight;
    }
    std::map<IpPrefix, std::vector<std::string>> vrsOf;
    std::map<IpPrefix, PortWeights> found;
    for (const auto& route : t.routes) {
        const std::string& key = route.first;
        const Row& row = route.second;
        auto fail = [&out, &key](const std::string& why) {
            out.errors.push_back(names::printable(key, 160) + ": " + why);
        };
        if (key.rfind(kAsicRoute, 0) != 0) {
            fail("not a route entry key");
            continue;
        }
        std::string_view json = std::string_view(key).substr(kAsicRoute.size());
        auto destText = keyMember(json, "dest");
        if (json.empty() || json.front() != '{' || json.back() != '}' || !destText) {
            fail("the key is not the JSON syncd writes (dest)");
            continue;
        }
        auto dest = IpPrefix::parse(*destText);
        if (!dest) {
            fail("dest is not a prefix");
            continue;
        }
        std::string vr = keyMember(json, "vr").value_or("");
        vrsOf[*dest].push_back(vr);
        const auto* target = field(row, kRouteNexthop);
        if (target == nullptr) continue;         // drop, trap or local: no next hops
        if (badGroups.count(*target)) continue;  // a member is named in errors: not half a group
        if (auto g = groups.find(*target); g != groups.end()) {
            found[*dest] = g->second;
        } else if (!t.nexthops.count(objectKey("NEXT_HOP", *target)) &&
                   !t.rifs.count(objectKey("ROUTER_INTERFACE", *target))) {
            // Neither a group with members, a next hop nor a router interface (connected).
            fail(std::string(kRouteNexthop) + " " + names::printable(*target, 40) +
                 " is an unknown oid");
        }
    }
    for (auto& [dest, w] : found)
        if (vrsOf[dest].size() == 1) out.multipath[dest] = std::move(w);
    return out;
}

ForwardedRead forwardedOnSonic(const SonicTables& t, int sonicRelease) {
    ForwardedRead out;
    std::optional<AsicRoutes> asic;
    if (t.asic) {
        asic = resolveAsic(*t.asic);
        out.badRows = asic->errors;
    }
    NameCache cache;
    for (const auto& [key, row] : t.applRoutes) {
        std::string error;
        auto rk = parseRouteKey(key, error);
        auto w = rk ? parseAppl(row, t.nhgRows, sonicRelease, cache, error) : std::nullopt;
        if (!w) {
            out.badRows.push_back(names::printable(key, 120) + ": " + error);
            continue;
        }
        if (!rk->vrf.empty() || w->weights.size() < 2) continue;
        ForwardedRoute r{rk->prefix, w->weights, w->rule, "APPL_DB"};
        if (asic) {
            if (auto it = asic->multipath.find(rk->prefix); it != asic->multipath.end()) {
                r.weights = it->second;  // what the ASIC forwards by
                r.from = "ASIC_DB";
            }
        }
        out.routes.push_back(std::move(r));
    }
    return out;
}

}  // namespace twinrail::pathqd::sonic_weights
