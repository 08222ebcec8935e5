// The decoders behind pathqd's kernel reads (libs/netlink/src/link_stats.cpp): link stats64,
// root qdisc TCA_STATS2 and tbf rate, nexthop objects and groups, and route weights with
// RTA_MULTIPATH or RTA_NH_ID. The input is a datagram of messages; like dumpRouteWeights(),
// nexthop objects are collected first and routes resolved through them afterwards.
// Checks: no read past nlmsg_len, no UB, weights within what the kernel can carry
// (1..256), and nexthops of RTA_NH_ID routes come from the objects seen. The route
// watch's decoder (any table, RTM_DELROUTE, RTA_VIA) and the rule decoder of the uplink
// pinner run on every message too.
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "fuzz_util.h"
#include "twinrail/netlink/link_stats.h"
#include "twinrail/netlink/policy_writer.h"
#include "twinrail/netlink/route_watch.h"

namespace nl = twinrail::netlink;
using twinrail::fuzz::check;

namespace {

void checkRoute(const nl::RouteWeights& r, const nl::NexthopObjects& objects, size_t msgLen) {
    check(r.dst.addr.isV4() || r.dst.addr.isV6(), "route destination without a family");
    (void)r.dst.str();
    for (const auto& nh : r.nexthops) {
        check(nh.weight >= 1 && nh.weight <= 256, "nexthop weight outside 1..256");
        (void)nh.gateway.str();
    }
    if (r.nhid != 0) {
        auto it = objects.find(r.nhid);
        check(it != objects.end(), "route through a nexthop object that was not seen");
        size_t most = it->second.group.empty() ? 1 : it->second.group.size();
        check(r.nexthops.size() <= most, "more nexthops than the object holds");
    } else {
        // Inline nexthops: each rtnexthop takes at least 8 bytes of the message. (RTA_NH_ID 0
        // looks the same here and may resolve through an object 0.)
        size_t most = 1 + msgLen / 8;
        if (auto it = objects.find(0); it != objects.end())
            most = std::max(most, it->second.group.size());
        check(r.nexthops.size() <= most, "more inline nexthops than bytes allow");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    nl::NexthopObjects objects;
    twinrail::fuzz::forEachNetlinkMessage({data, size}, [&objects](nlmsghdr* hdr) {
        if (auto rule = nl::decodeRule(hdr)) {
            check(rule->iif.find('\0') == std::string::npos, "NUL inside a rule's iif");
        }
        if (auto c = nl::decodeLinkCounters(hdr)) {
            check(c->name.find('\0') == std::string::npos, "NUL inside a link name");
        }
        if (auto q = nl::decodeQdisc(hdr)) {
            check(q->kind.find('\0') == std::string::npos, "NUL inside a qdisc kind");
            check(!q->rateBps || q->kind == "tbf", "a shaper rate on a qdisc that is not tbf");
            check(!q->ecnMarks || q->ecnMarks <= uint64_t{2} * UINT32_MAX, "marks past two u32s");
        }
        if (auto nh = nl::decodeNexthop(hdr)) {
            for (const auto& [member, weight] : nh->group)
                check(weight >= 1 && weight <= 256, "group weight outside 1..256");
            objects[nh->id] = *nh;
        }
    });
    twinrail::fuzz::forEachNetlinkMessage({data, size}, [&objects](nlmsghdr* hdr) {
        if (hdr->nlmsg_len < NLMSG_LENGTH(sizeof(rtmsg))) return;
        rtmsg rt{};
        std::memcpy(&rt, NLMSG_DATA(hdr), sizeof rt);
        if (auto ev = nl::decodeRouteEvent(hdr)) {
            check(ev->route.dst.length <= ev->route.dst.addr.maxPrefixLen(), "prefix too long");
            check(ev->route.nhid == 0 || ev->route.nexthops.empty(),
                  "inline nexthops on a route through an object");
            for (const auto& nh : ev->route.nexthops)
                check(nh.weight >= 1 && nh.weight <= 256, "event nexthop weight outside 1..256");
            (void)nl::keyOf(ev->route);
        }
        // The message's own protocol, so every route gets decoded, not only BGP's.
        for (int family : {AF_INET, AF_INET6}) {
            if (auto r = nl::decodeRouteWeights(hdr, family, rt.rtm_protocol, objects))
                checkRoute(*r, objects, hdr->nlmsg_len);
        }
    });
    return 0;
}
