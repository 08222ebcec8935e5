#include "weight_audit.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace twinrail::pathqd {
namespace {

// "LB:65000:4000000 (32.000 Mbps)": AS, then bytes per second (RFC 10005 counts bytes).
std::optional<double> linkBandwidth(const nlohmann::json& path) {
    auto ec = path.find("extendedCommunity");
    if (ec == path.end() || !ec->is_object()) return std::nullopt;
    std::string s = ec->value("string", "");
    auto at = s.find("LB:");
    if (at == std::string::npos) return std::nullopt;
    auto colon = s.find(':', at + 3);
    if (colon == std::string::npos) return std::nullopt;
    const char* begin = s.c_str() + colon + 1;
    char* end = nullptr;
    double v = std::strtod(begin, &end);
    if (end == begin || !std::isfinite(v) || v < 0) return std::nullopt;
    return v;
}

}  // namespace

std::optional<std::vector<BgpPath>> parseBgpMultipaths(const std::string& json,
                                                       std::string& error) {
    auto doc = nlohmann::json::parse(json, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        error = "BGP route: not the JSON bgpd writes";
        return std::nullopt;
    }
    auto paths = doc.find("paths");
    if (paths == doc.end() || !paths->is_array()) return std::vector<BgpPath>{};  // no route
    std::vector<BgpPath> multi, best;
    try {  // value() throws when a field has another type than bgpd gives it
        for (const auto& p : *paths) {
            if (!p.is_object() || !p.value("valid", false)) continue;
            auto peer = p.find("peer");
            std::string ifname =
                peer != p.end() && peer->is_object() ? peer->value("interface", "") : "";
            if (ifname.empty()) continue;  // not a session on a port: nothing to compare
            BgpPath bp{ifname, linkBandwidth(p)};
            if (p.value("multipath", false)) multi.push_back(bp);
            auto bestpath = p.find("bestpath");
            if (bestpath != p.end() && bestpath->is_object() && bestpath->value("overall", false))
                best.push_back(bp);
        }
    } catch (const nlohmann::json::exception& e) {
        error = std::string("BGP route: unexpected JSON: ") + e.what();
        return std::nullopt;
    }
    return multi.empty() ? best : multi;
}

PortWeights impliedWeights(const std::vector<BgpPath>& paths) {
    PortWeights w;
    double total = 0;
    bool allTagged = true;
    for (const auto& p : paths) {
        allTagged &= p.bytesPerSecond.has_value();
        total += p.bytesPerSecond.value_or(0);
    }
    for (const auto& p : paths) {
        unsigned weight = 1;  // plain ECMP
        if (allTagged && total > 0)
            weight = std::max(1u, static_cast<unsigned>(*p.bytesPerSecond * 100 / total));
        w[p.interface] += weight;  // two sessions on one port add up
    }
    return w;
}

bool weightsAgree(const PortWeights& implied, const PortWeights& kernel) {
    if (implied.size() != kernel.size()) return false;
    double ti = 0, tk = 0;
    for (const auto& [p, v] : implied) ti += v;
    for (const auto& [p, v] : kernel) tk += v;
    if (ti <= 0 || tk <= 0) return false;
    for (const auto& [port, v] : implied) {
        auto k = kernel.find(port);
        if (k == kernel.end()) return false;
        if (std::abs(100.0 * v / ti - 100.0 * k->second / tk) > 1.0 + 1e-9) return false;
    }
    return true;
}

std::string describeWeights(const PortWeights& w) {
    std::string out;
    for (const auto& [port, v] : w)
        out += (out.empty() ? "" : " ") + port + "=" + std::to_string(v);
    return out;
}

}  // namespace twinrail::pathqd
