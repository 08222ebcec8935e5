#include "frr_audit.h"

#include <map>
#include <nlohmann/json.hpp>

namespace twinrail::hostrouted {

std::optional<ImportCounts> parseImportCounts(const std::string& summaryJson, std::string& error) {
    auto doc = nlohmann::json::parse(summaryJson, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("routes") ||
        !doc["routes"].is_array()) {
        error = "route summary: not the JSON zebra writes";
        return std::nullopt;
    }
    ImportCounts c;  // no "table" entry at all: nothing imported
    for (const auto& r : doc["routes"]) {
        if (!r.is_object() || r.value("type", "") != "table") continue;
        auto rib = r.find("rib");
        auto fib = r.find("fib");
        if (rib == r.end() || fib == r.end() || !rib->is_number_unsigned() ||
            !fib->is_number_unsigned()) {
            error = "route summary: \"table\" entry without rib/fib counts";
            return std::nullopt;
        }
        c.rib += rib->get<size_t>();
        c.fib += fib->get<size_t>();
    }
    return c;
}

std::optional<std::vector<ZebraRoute>> parseZebraRoutes(const std::string& routesJson,
                                                        std::string& error) {
    auto doc = nlohmann::json::parse(routesJson, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        error = "route list: not the JSON zebra writes";
        return std::nullopt;
    }
    std::vector<ZebraRoute> out;
    for (const auto& [prefix, entries] : doc.items()) {
        auto p = IpPrefix::parse(prefix);
        if (!p || p->length != p->addr.maxPrefixLen() || !entries.is_array()) continue;
        for (const auto& e : entries) {
            if (!e.is_object()) continue;
            ZebraRoute r;
            r.prefix = p->addr;
            r.protocol = e.value("protocol", "");
            r.selected = e.value("selected", false);
            out.push_back(std::move(r));
        }
    }
    return out;
}

ImportAudit auditImports(const std::set<IpAddr>& ours, const std::set<IpAddr>& fresh,
                         const std::vector<ZebraRoute>& zebra) {
    struct View {
        bool imported = false, importSelected = false, kernelSelected = false,
             otherSelected = false;
    };
    std::map<IpAddr, View> byPrefix;
    for (const auto& r : zebra) {
        View& v = byPrefix[r.prefix];
        if (r.protocol == "table") {
            v.imported = true;
            v.importSelected |= r.selected;
        } else if (r.selected) {
            (r.protocol == "kernel" ? v.kernelSelected : v.otherSelected) = true;
        }
    }
    ImportAudit a;
    for (const auto& ip : ours) {
        auto it = byPrefix.find(ip);
        if (it == byPrefix.end() || !it->second.imported) {
            a.missing.push_back(ip);
        } else if (!it->second.importSelected) {
            // Not selected: a kernel route wins (repairable), or something else does.
            (it->second.kernelSelected ? a.shadowed : a.outranked).push_back(ip);
        }
    }
    for (const auto& [ip, v] : byPrefix)
        if (v.imported && ours.count(ip) == 0 && fresh.count(ip) == 0) a.foreign.push_back(ip);
    return a;
}

std::optional<std::set<IpAddr>> parseBgpOriginated(const std::string& json, std::string& error) {
    auto doc = nlohmann::json::parse(json, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        error = "BGP table: not the JSON bgpd writes";
        return std::nullopt;
    }
    std::set<IpAddr> out;
    auto routes = doc.find("routes");
    if (routes == doc.end()) return out;  // no self-originated route at all
    if (!routes->is_object()) {
        error = "BGP table: \"routes\" is not an object of prefixes";
        return std::nullopt;
    }
    for (const auto& [prefix, paths] : routes->items()) {
        auto p = IpPrefix::parse(prefix);
        if (!p || p->length != p->addr.maxPrefixLen() || !paths.is_array()) continue;
        for (const auto& path : paths) {
            if (path.is_object() && path.value("valid", false)) {
                out.insert(p->addr);
                break;
            }
        }
    }
    return out;
}

ImportAudit auditOriginated(const std::set<IpAddr>& ours, const std::set<IpAddr>& fresh,
                            const std::set<IpAddr>& originated) {
    ImportAudit audit;
    for (const auto& ip : ours)
        if (originated.count(ip) == 0) audit.missing.push_back(ip);
    for (const auto& ip : originated)
        if (ours.count(ip) == 0 && fresh.count(ip) == 0) audit.foreign.push_back(ip);
    return audit;
}

}  // namespace twinrail::hostrouted
