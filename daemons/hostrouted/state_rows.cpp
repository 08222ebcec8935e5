#include "state_rows.h"

#include <ctime>

#include "twinrail/netlink/types.h"

namespace twinrail::hostrouted {

std::string wallClock(TimePoint steady, TimePoint steadyNow,
                      std::chrono::system_clock::time_point wallNow) {
    auto wall = wallNow - std::chrono::duration_cast<std::chrono::system_clock::duration>(
                              steadyNow - steady);
    std::time_t t = std::chrono::system_clock::to_time_t(wall);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

redis::Fields hostRow(const HostRecord& rec, const std::string& ifname, TimePoint now,
                      std::chrono::system_clock::time_point wallNow) {
    return {
        {"ifname", ifname},
        {"mac", rec.mac ? formatMac(*rec.mac) : ""},
        {"family", rec.ip.isV4() ? "ipv4" : "ipv6"},
        {"source", std::string(sourceName(rec.source))},
        {"state", std::string(routeStateName(rec.state))},
        {"neigh_state", netlink::nudStateName(rec.nudState)},
        {"since", wallClock(rec.since, now, wallNow)},
    };
}

}  // namespace twinrail::hostrouted
