#include "frr_policy.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace twinrail::pathqd {
namespace {

using frr::ConfigLine;

std::vector<std::string> families(const PolicyInput& in) {
    std::vector<std::string> out;
    if (in.ipv4) out.emplace_back("address-family ipv4 unicast");
    if (in.ipv6) out.emplace_back("address-family ipv6 unicast");
    return out;
}

std::string entry(const std::string& map, int seq) {
    return "route-map " + map + " permit " + std::to_string(seq);
}

std::string largeCommunities(uint32_t asn, const DownlinkState& d) {
    std::string a = std::to_string(asn) + ":";
    const auto& m = d.metrics;
    return "set large-community " + a + "1:" + std::to_string(d.level) + " " + a +
           "2:" + std::to_string(m.utilPermille) + " " + a + "3:" + std::to_string(m.queueKiB) +
           " " + a + "4:" + std::to_string(m.latencyUs) + " " + a +
           "5:" + std::to_string(m.capacityMbps) + " additive";
}

struct Group {
    int level = 0;      // sum of this switch's levels over the links that are up
    int peerLevel = 0;  // sum of the neighbor's reported levels over them (unknown: levels)
};

std::map<std::string, Group> groups(const PolicyInput& in) {
    std::map<std::string, Group> out;
    for (const auto& [port, d] : in.downlinks) {
        Group& g = out[d.neighbor.empty() ? port : d.neighbor];
        if (!d.up) continue;
        g.level += d.level;
        g.peerLevel += d.peerLevel > 0 ? d.peerLevel : in.levels;
    }
    return out;
}

// The most parallel links to one neighbor. Tags are in levels per that many links, so a
// tag stays within 1..levels (one route-map entry per level, whatever the parallelism:
// FRR takes a few hundred ms per entry it is given) and means the same in the in-maps
// that write it and the out-maps that read it, both on this switch.
int linksPerTag(const PolicyInput& in) {
    std::map<std::string, int> links;
    int most = 1;
    for (const auto& [port, d] : in.downlinks)
        most = std::max(most, ++links[d.neighbor.empty() ? port : d.neighbor]);
    return most;
}

// What one session toward the neighbor carries for a route tagged `tag` (0: untagged).
int sessionBandwidth(int tag, int perTag, int ownPeerLevel, const Group& g) {
    if (g.peerLevel <= 0) return 1;
    int pathBw = tag > 0 ? std::min(tag * perTag, g.peerLevel) : g.peerLevel;
    return std::max(
        1, static_cast<int>(std::lround(static_cast<double>(pathBw) * ownPeerLevel / g.peerLevel)));
}

bool ownsMap(const std::string& attachLine) {
    return attachLine.find(kInPrefix) != std::string::npos ||
           attachLine.find(kOutPrefix) != std::string::npos;
}

}  // namespace

std::vector<PolicyLine> desiredPolicy(const PolicyInput& in) {
    std::vector<PolicyLine> out;
    if (in.downlinks.empty()) return out;
    const auto byNeighbor = groups(in);
    const int perTag = linksPerTag(in);
    for (int k = 1; k <= in.levels; ++k) {
        std::string name = kListPrefix + std::to_string(k);
        // `_` matches a community boundary, so level 1 does not match 65000:1:16.
        out.push_back({ConfigLine{{},
                                  "bgp large-community-list expanded " + name +
                                      " seq 5 permit _[0-9]+:1:" + std::to_string(k) + "_"},
                       "", Refresh::None, ""});
    }
    for (const auto& [port, d] : in.downlinks) {
        std::string inMap = kInPrefix + port;
        std::string outMap = kOutPrefix + port;
        const Group& g = byNeighbor.at(d.neighbor.empty() ? port : d.neighbor);
        DownlinkState tagged = d;
        // What this spine reaches the leaf with, in levels per `perTag` links.
        tagged.level = std::clamp(
            static_cast<int>(std::lround(static_cast<double>(g.level) / perTag)), 1, in.levels);
        out.push_back({ConfigLine{{entry(inMap, 10)},
                                  "set extcommunity bandwidth " + std::to_string(d.level)},
                       port, Refresh::In, ""});
        out.push_back({ConfigLine{{entry(inMap, 10)}, largeCommunities(in.asn, tagged)}, port,
                       Refresh::In,
                       "set large-community " + std::to_string(in.asn) +
                           ":1:" + std::to_string(tagged.level) + " "});
        int peer = d.peerLevel > 0 ? d.peerLevel : in.levels;
        for (int k = 1; k <= in.levels; ++k) {
            out.push_back({ConfigLine{{entry(outMap, k)},
                                      "match large-community " + std::string(kListPrefix) +
                                          std::to_string(k)},
                           port, Refresh::Out, ""});
            out.push_back({ConfigLine{{entry(outMap, k)},
                                      "set extcommunity bandwidth " +
                                          std::to_string(sessionBandwidth(k, perTag, peer, g))},
                           port, Refresh::Out, ""});
        }
        out.push_back({ConfigLine{{entry(outMap, kUntaggedSeq)},
                                  "set extcommunity bandwidth " +
                                      std::to_string(sessionBandwidth(0, perTag, peer, g))},
                       port, Refresh::Out, ""});
        // Attach last, so a neighbor never points at a route-map that does not exist
        // yet (FRR would deny every route through it). soft-reconfiguration keeps the
        // leaf's routes as received, so `clear ... soft in` re-applies the inbound map
        // locally (~80 ms to the remote kernel here) instead of asking the leaf to resend
        // them (~600 ms), at the cost of a copy of the leaf's routes.
        for (const auto& af : families(in)) {
            out.push_back({ConfigLine{{"router bgp", af},
                                      "neighbor " + port + " soft-reconfiguration inbound"},
                           port, Refresh::None, ""});
            out.push_back(
                {ConfigLine{{"router bgp", af}, "neighbor " + port + " route-map " + inMap + " in"},
                 port, Refresh::In, ""});
            out.push_back({ConfigLine{{"router bgp", af},
                                      "neighbor " + port + " route-map " + outMap + " out"},
                           port, Refresh::Out, ""});
        }
    }
    return out;
}

PolicyDiff diffPolicy(const frr::RunningConfig& running, const PolicyInput& in) {
    PolicyDiff diff;
    for (const auto& [port, d] : in.downlinks) {
        // A route-map of the port's peer-group (SONiC's bgpcfgd attaches FROM_/TO_BGP_PEER_*
        // to PEER_V4/V6) would be overridden by one on the port: that is a conflict too.
        std::vector<std::string> holders{port};
        // Numbered sessions, then unnumbered ones (FRR's two forms of membership).
        for (const char* form : {" peer-group ", " interface peer-group "}) {
            for (const auto& line : running.linesUnder({"router bgp"}, "neighbor " + port + form))
                holders.push_back(line.substr(line.rfind(' ') + 1));
        }
        for (const auto& af : families(in)) {
            for (const auto& holder : holders) {
                for (const auto& line :
                     running.linesUnder({"router bgp", af}, "neighbor " + holder + " route-map "))
                    if (!ownsMap(line)) diff.conflicts[port] = line;
            }
        }
    }
    for (const auto& p : desiredPolicy(in)) {
        if (!p.port.empty() && diff.conflicts.count(p.port) > 0) continue;
        if (running.has(p.line)) continue;
        if (!p.presentIfStartsWith.empty() &&
            !running.linesUnder(p.line.context, p.presentIfStartsWith).empty())
            continue;
        diff.add.push_back(p.line);
        if (p.refresh != Refresh::None) diff.refresh.insert({p.port, p.refresh});
    }
    // Route-maps of ports that are no longer downlinks: detach, then delete.
    for (const auto& af :
         {std::string("address-family ipv4 unicast"), std::string("address-family ipv6 unicast")}) {
        for (const auto& line : running.linesUnder({"router bgp", af}, "neighbor ")) {
            if (!ownsMap(line)) continue;
            std::string port = line.substr(9, line.find(' ', 9) - 9);
            if (in.downlinks.count(port) > 0) continue;
            diff.remove.push_back(ConfigLine{{"router bgp", af}, "no " + line});
            diff.refresh.insert({port, line.back() == 'n' ? Refresh::In : Refresh::Out});
        }
    }
    for (const auto& prefix : {std::string(kInPrefix), std::string(kOutPrefix)}) {
        std::set<std::string> maps;
        for (const auto& line : running.linesUnder({}, "route-map " + prefix))
            maps.insert(line.substr(10, line.find(' ', 10) - 10));
        for (const auto& map : maps) {
            if (in.downlinks.count(map.substr(prefix.size())) == 0)
                diff.remove.push_back(ConfigLine{{}, "no route-map " + map});
        }
    }
    return diff;
}

bool hasControlChar(std::string_view text) {
    return std::any_of(text.begin(), text.end(), [](char c) {
        auto byte = static_cast<unsigned char>(c);
        return byte < 0x20 || byte == 0x7f;
    });
}

std::vector<std::string> dropUnsafeLines(PolicyDiff& diff) {
    std::vector<std::string> dropped;
    auto unsafe = [&dropped](const ConfigLine& l) {
        bool bad = hasControlChar(l.line) ||
                   std::any_of(l.context.begin(), l.context.end(),
                               [](const std::string& c) { return hasControlChar(c); });
        if (bad) dropped.push_back(l.describe());
        return bad;
    };
    std::erase_if(diff.add, unsafe);
    std::erase_if(diff.remove, unsafe);
    std::erase_if(diff.refresh, [&dropped](const std::pair<std::string, Refresh>& r) {
        bool bad = hasControlChar(r.first);
        if (bad) dropped.push_back("clear bgp ... " + r.first);
        return bad;
    });
    return dropped;
}

const std::string* unsafeVtyshArg(const std::vector<std::string>& args) {
    auto it = std::find_if(args.begin(), args.end(),
                           [](const std::string& a) { return hasControlChar(a); });
    return it == args.end() ? nullptr : &*it;
}

std::vector<std::string> policyVtyshArgs(const frr::RunningConfig& running, const PolicyDiff& diff,
                                         const PolicyInput& in) {
    auto args = frr::vtyshBatchArgs(running, diff.remove);
    auto add = frr::vtyshBatchArgs(running, diff.add);
    args.insert(args.end(), add.begin(), add.end());
    for (const auto& [port, what] : diff.refresh) {
        if (what == Refresh::None) continue;
        for (const char* af : {"ipv4", "ipv6"}) {
            if ((std::string(af) == "ipv4" && !in.ipv4) || (std::string(af) == "ipv6" && !in.ipv6))
                continue;
            args.insert(args.end(), {"-c", "clear bgp " + std::string(af) + " unicast " + port +
                                               (what == Refresh::In ? " soft in" : " soft out")});
        }
    }
    return args;
}

}  // namespace twinrail::pathqd
