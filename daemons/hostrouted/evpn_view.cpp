#include "evpn_view.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

namespace twinrail::hostrouted {
namespace {

using json = nlohmann::json;

struct Bad {
    std::string message;
};

bool flag(const json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_boolean() && it->get<bool>();
}

std::string text(const json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

uint32_t vniOf(const std::string& key, const std::string& where) {
    char* end = nullptr;
    unsigned long v = std::strtoul(key.c_str(), &end, 10);
    if (key.empty() || *end != '\0' || v == 0 || v > 0xffffff)
        throw Bad{where + ": \"" + key + "\" is not a VNI"};
    return static_cast<uint32_t>(v);
}

json parse(const std::string& text, const std::string& view) {
    auto j = json::parse(text, nullptr, false);
    if (j.is_discarded()) throw Bad{view + ": not JSON"};
    return j;
}

void neighbors(const json& root, EvpnView& out) {
    const std::string view = "show evpn arp-cache vni all detail json";
    if (!root.is_object()) throw Bad{view + ": not an object"};
    for (const auto& [vniKey, table] : root.items()) {
        uint32_t vni = vniOf(vniKey, view);
        if (!table.is_object()) throw Bad{view + ": VNI " + vniKey + " is not an object"};
        for (const auto& [key, e] : table.items()) {
            if (!e.is_object()) continue;  // numArpNd and other counters
            const std::string where = view + ": VNI " + vniKey + " entry " + key;
            auto ip = IpAddr::parse(text(e, "ip").empty() ? key : text(e, "ip"));
            if (!ip) throw Bad{where + ": no IP address"};
            EvpnNeighbor n;
            n.ip = *ip;
            n.vni = vni;
            std::string type = text(e, "type");
            if (type != "local" && type != "remote")
                throw Bad{where + ": type \"" + type + "\" is not local or remote"};
            n.remote = type == "remote";
            n.remoteVtep = text(e, "remoteVtep");
            if (!text(e, "mac").empty()) {
                n.mac = parseMac(text(e, "mac"));
                if (!n.mac) throw Bad{where + ": bad MAC \"" + text(e, "mac") + "\""};
            }
            n.localInactive = flag(e, "localInactive");
            n.peerActive = flag(e, "peerActive");
            n.peerProxy = flag(e, "peerProxy");
            out.neighbors[n.ip] = n;
        }
    }
}

void macs(const json& root, EvpnView& out) {
    const std::string view = "show evpn mac vni all detail json";
    if (!root.is_object()) throw Bad{view + ": not an object"};
    for (const auto& [vniKey, table] : root.items()) {
        uint32_t vni = vniOf(vniKey, view);
        auto list = table.find("macs");
        if (list == table.end() || !list->is_object()) continue;  // a VNI with no MACs
        for (const auto& [key, e] : list->items()) {
            const std::string where = view + ": VNI " + vniKey + " MAC " + key;
            auto mac = parseMac(key);
            if (!mac || !e.is_object()) throw Bad{where + ": not a MAC entry"};
            EvpnMac m;
            m.vni = vni;
            m.mac = *mac;
            m.remote = text(e, "type") == "remote";
            m.interface = text(e, "intf");
            m.esi = text(e, "esi");
            m.peerActive = flag(e, "peerActive");
            out.macs[{vni, m.mac}] = m;
        }
    }
}

void segments(const json& root, EvpnView& out) {
    const std::string view = "show evpn es detail json";
    if (root.is_object() && root.empty()) return;  // no segments: FRR prints {}
    if (!root.is_array()) throw Bad{view + ": not a list"};
    for (const auto& e : root) {
        EvpnSegment s;
        s.esi = text(e, "esi");
        if (s.esi.empty()) throw Bad{view + ": a segment without an esi"};
        s.accessPort = text(e, "accessPort");
        if (auto f = e.find("flags"); f != e.end() && f->is_array()) {
            for (const auto& v : *f) {
                if (!v.is_string()) continue;
                s.local = s.local || v.get<std::string>() == "local";
                s.operUp = s.operUp || v.get<std::string>() == "operUp";
            }
        }
        if (auto p = e.find("vteps"); p != e.end() && p->is_array()) {
            for (const auto& v : *p)
                if (v.is_object() && !text(v, "vtep").empty()) s.peers.push_back(text(v, "vtep"));
        }
        out.segments[s.esi] = s;
    }
}

}  // namespace

const EvpnMac* EvpnView::macOf(const EvpnNeighbor& n) const {
    if (!n.mac) return nullptr;
    auto it = macs.find({n.vni, *n.mac});
    return it == macs.end() ? nullptr : &it->second;
}

const EvpnSegment* EvpnView::segmentOf(const EvpnMac& m) const {
    if (m.esi.empty()) return nullptr;
    auto it = segments.find(m.esi);
    return it == segments.end() ? nullptr : &it->second;
}

std::variant<EvpnView, EvpnParseError> parseEvpnView(const std::string& arpCacheJson,
                                                     const std::string& macJson,
                                                     const std::string& esJson) {
    try {
        EvpnView v;
        neighbors(parse(arpCacheJson, "show evpn arp-cache vni all detail json"), v);
        macs(parse(macJson, "show evpn mac vni all detail json"), v);
        segments(parse(esJson, "show evpn es detail json"), v);
        return v;
    } catch (const Bad& b) {
        return EvpnParseError{b.message};
    } catch (const json::exception& e) {
        return EvpnParseError{std::string("EVPN view: ") + e.what()};
    }
}

}  // namespace twinrail::hostrouted
