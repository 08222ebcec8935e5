#include "frr_requirements.h"

#include <string>

namespace twinrail::hostrouted {

std::vector<frr::ConfigLine> requiredFrrLines(const Config& cfg) {
    std::vector<frr::ConfigLine> lines;
    const std::string table = std::to_string(cfg.routeTable);
    const std::string rm = kV6RouteMap;
    if (cfg.advertise == Advertise::NetworkTable) return lines;
    if (cfg.ipv4 && cfg.advertise == Advertise::TableDirect) {
        lines.push_back(
            {{"router bgp", "address-family ipv4 unicast"}, "redistribute table-direct " + table});
    } else if (cfg.ipv4) {
        lines.push_back({{}, "ip import-table " + table});
        lines.push_back(
            {{"router bgp", "address-family ipv4 unicast"}, "redistribute table " + table});
    }
    if (cfg.ipv6) {
        lines.push_back({{}, "ipv6 prefix-list " + rm + " seq 5 permit ::/0 ge 128"});
        lines.push_back(
            {{"route-map " + rm + " permit 10"}, "match ipv6 address prefix-list " + rm});
        lines.push_back(
            {{"router bgp", "address-family ipv6 unicast"}, "redistribute kernel route-map " + rm});
    }
    return lines;
}

}  // namespace twinrail::hostrouted
