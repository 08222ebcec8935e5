// The plan file: toJson() writes it, planFromJson() reads it back and checks it. The
// sizing is recomputed from the stored request and must match, so a plan file cannot
// claim a fabric its own request does not give.
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "twinrail/common/ip.h"
#include "twinrail/common/names.h"
#include "twinrail/plan/plan.h"

namespace twinrail::plan {
namespace {

using json = nlohmann::json;
// 2: request.attach and request.gateway_mac replace request.host_bgp. Version 1 files are
// read as before: host_bgp true is the routed attachment, false the bond one.
// 3: request.lb and the leaves' host ports' pinned_uplink; older files get the pins
// computed as buildPlan() does.
constexpr int kVersion = 3;

json modelJson(const SwitchModel& m) {
    return {{"name", m.name},
            {"ports", m.ports},
            {"port_speed_gbps", m.portSpeedGbps},
            {"breakouts", m.breakouts}};
}

json sizingJson(const Sizing& s) {
    return {{"planes", s.planes},
            {"servers", s.servers},
            {"rails", s.rails},
            {"nic_port_speed_gbps", s.nicPortSpeedGbps},
            {"nic_ports_per_plane", s.nicPortsPerPlane},
            {"uplink_speed_gbps", s.uplinkSpeedGbps},
            {"leaf_downlinks", s.leafDownlinks},
            {"leaf_uplinks", s.leafUplinks},
            {"spine_radix", s.spineRadix},
            {"rails_per_leaf", s.railsPerLeaf},
            {"groups", s.groups},
            {"servers_per_group", s.serversPerGroup},
            {"leaves_per_plane", s.leavesPerPlane},
            {"spines_per_plane", s.spinesPerPlane},
            {"links_per_leaf_spine", s.linksPerLeafSpine},
            {"spine_ports_used", s.spinePortsUsed},
            {"leaves_total", s.leavesTotal()},
            {"spines_total", s.spinesTotal()},
            {"max_gpus_two_tier", s.maxGpusTwoTier}};
}

// A read error naming where in the file it is.
struct FieldError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

const json& field(const json& obj, const std::string& key, const std::string& at) {
    if (!obj.is_object()) throw FieldError(at + ": must be an object");
    auto it = obj.find(key);
    if (it == obj.end()) throw FieldError(at + "." + key + ": missing");
    return *it;
}

// A whole number that fits T. nlohmann's get<int>() would cast a float (undefined
// behaviour when it is out of range, found by fuzz/plan_fuzz) and wrap a large integer.
template <typename T>
T integer(const json& v, const std::string& where) {
    if (!v.is_number_integer()) throw FieldError(where + ": wrong type (" + v.dump() + ")");
    bool fits = v.is_number_unsigned() ? std::in_range<T>(v.get<uint64_t>())
                                       : std::in_range<T>(v.get<int64_t>());
    if (!fits) throw FieldError(where + ": out of range (" + v.dump() + ")");
    return v.is_number_unsigned() ? static_cast<T>(v.get<uint64_t>())
                                  : static_cast<T>(v.get<int64_t>());
}

template <typename T>
T get(const json& obj, const std::string& key, const std::string& at) {
    const json& v = field(obj, key, at);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        return integer<T>(v, at + "." + key);
    } else if constexpr (std::is_same_v<T, std::vector<int>>) {
        if (!v.is_array()) throw FieldError(at + "." + key + ": wrong type (" + v.dump() + ")");
        std::vector<int> out;
        for (size_t i = 0; i < v.size(); ++i)
            out.push_back(integer<int>(v[i], at + "." + key + "[" + std::to_string(i) + "]"));
        return out;
    } else {
        try {
            return v.get<T>();
        } catch (const json::exception&) {
            throw FieldError(at + "." + key + ": wrong type (" + v.dump() + ")");
        }
    }
}

// A name field: every name in a plan becomes a namespace, a directory, an interface, a
// hostname in frr.conf or an argument of the lab's commands, so each must pass the one
// grammar (twinrail/common/names.h) before anything uses it.
std::string nameField(const json& obj, const std::string& key, const std::string& at,
                      names::Kind kind) {
    auto v = get<std::string>(obj, key, at);
    if (auto why = names::check(v, kind)) {
        throw FieldError(at + "." + key + ": " + std::string(names::kindName(kind)) + " \"" +
                         names::printable(v) + "\" " + *why);
    }
    return v;
}

// An address or prefix field: it reaches `ip addr add` and frr.conf as it is written.
std::string address(const json& obj, const std::string& key, const std::string& at, bool prefix) {
    auto v = get<std::string>(obj, key, at);
    auto slash = v.find('/');
    bool ok = prefix == (slash != std::string::npos) &&
              IpAddr::parse(std::string_view(v).substr(0, slash)).has_value();
    if (ok && prefix) {
        auto len = std::string_view(v).substr(slash + 1);
        ok = !len.empty() && len.size() <= 3 &&
             len.find_first_not_of("0123456789") == std::string_view::npos;
    }
    if (!ok) {
        throw FieldError(at + "." + key + ": \"" + names::printable(v) + "\" is not " +
                         (prefix ? "an address/length" : "an IP address"));
    }
    return v;
}

// A port's peer: a switch, or "<server>/<nic>" for a leaf's host port.
std::string peerName(const json& obj, const std::string& at) {
    auto v = get<std::string>(obj, "peer", at);
    auto slash = v.find('/');
    auto bad = slash == std::string::npos
                   ? names::check(v, names::Kind::Node)
                   : names::check(std::string_view(v).substr(0, slash), names::Kind::Node);
    if (!bad && slash != std::string::npos)
        bad = names::check(std::string_view(v).substr(slash + 1), names::Kind::Node);
    if (bad) {
        throw FieldError(at + ".peer: \"" + names::printable(v) +
                         "\" is not <switch> or <server>/<nic>: " + *bad);
    }
    return v;
}

const json& array(const json& obj, const std::string& key, const std::string& at) {
    const json& v = field(obj, key, at);
    if (!v.is_array()) throw FieldError(at + "." + key + ": must be an array");
    return v;
}

std::string idx(const std::string& at, const std::string& key, size_t i) {
    return at + "." + key + "[" + std::to_string(i) + "]";
}

SwitchModel readModel(const json& j, const std::string& at) {
    return {nameField(j, "name", at, names::Kind::Node), get<int>(j, "ports", at),
            get<int>(j, "port_speed_gbps", at), get<std::vector<int>>(j, "breakouts", at)};
}

Request readRequest(const json& j, const std::string& at) {
    Request r;
    r.gpus = get<int>(j, "gpus", at);
    r.gpusPerServer = get<int>(j, "gpus_per_server", at);
    r.nicSpeedGbps = get<int>(j, "nic_speed_gbps", at);
    r.nicPorts = get<int>(j, "nic_ports", at);
    r.planes = get<int>(j, "planes", at);
    r.leafModel = readModel(field(j, "leaf_model", at), at + ".leaf_model");
    r.spineModel = readModel(field(j, "spine_model", at), at + ".spine_model");
    r.oversubscription = get<int>(j, "oversubscription", at);
    r.uplinkSpeedGbps = get<int>(j, "uplink_speed_gbps", at);
    r.spinesPerPlane = get<int>(j, "spines_per_plane", at);
    if (j.contains("attach")) {
        auto name = get<std::string>(j, "attach", at);
        auto a = parseAttach(name);
        if (!a) {
            throw FieldError(at + ".attach: \"" + names::printable(name) +
                             "\" is not bond, routed or evpn-mh");
        }
        r.attach = *a;
        r.gatewayMac = get<std::string>(j, "gateway_mac", at);
        // It reaches `ip link` and config_db.json as written; normalize() checks the rest.
        if (r.gatewayMac.size() != 17 ||
            r.gatewayMac.find_first_not_of("0123456789abcdefABCDEF:") != std::string::npos) {
            throw FieldError(at + ".gateway_mac: \"" + names::printable(r.gatewayMac) +
                             "\" is not a MAC address (xx:xx:xx:xx:xx:xx)");
        }
    } else {
        r.attach = get<bool>(j, "host_bgp", at) ? Attach::Routed : Attach::Bond;
    }
    if (j.contains("lb")) {
        auto name = get<std::string>(j, "lb", at);
        auto lb = parseLb(name);
        if (!lb) {
            throw FieldError(at + ".lb: \"" + names::printable(name) + "\" is not one of " +
                             kLbNames);
        }
        r.lb = *lb;
    }
    if (j.contains("roce")) {  // absent: the defaults (plans before RoCE QoS)
        const json& q = j.at("roce");
        const std::string qa = at + ".roce";
        if (!q.is_object()) throw FieldError(qa + ": not an object");
        r.roce.priority = get<int>(q, "priority", qa);
        r.roce.dscp = get<int>(q, "dscp", qa);
        r.roce.cnpPriority = get<int>(q, "cnp_priority", qa);
        r.roce.cnpDscp = get<int>(q, "cnp_dscp", qa);
        r.roce.hostCableM = get<int>(q, "host_cable_m", qa);
        r.roce.fabricCableM = get<int>(q, "fabric_cable_m", qa);
        if (auto why = roceQosProblem(r.roce)) throw FieldError(qa + ": " + *why);
    }
    return r;
}

PortRole readRole(const std::string& s, const std::string& at) {
    for (PortRole r : {PortRole::Host, PortRole::Uplink, PortRole::Downlink})
        if (s == roleName(r)) return r;
    throw FieldError(at + ".role: \"" + names::printable(s) + "\" is not host, uplink or downlink");
}

Switch readSwitch(const json& j, const std::string& at) {
    Switch sw;
    sw.name = nameField(j, "name", at, names::Kind::Node);
    auto role = get<std::string>(j, "role", at);
    if (role != "leaf" && role != "spine") throw FieldError(at + ".role: not leaf or spine");
    sw.spine = role == "spine";
    sw.plane = get<int>(j, "plane", at);
    sw.index = get<int>(j, "index", at);
    sw.asn = get<uint32_t>(j, "asn", at);
    sw.loopback = address(j, "loopback", at, false);
    sw.group = get<int>(j, "group", at);
    sw.rails = get<std::vector<int>>(j, "rails", at);
    const json& ports = array(j, "ports", at);
    for (size_t i = 0; i < ports.size(); ++i) {
        std::string pa = idx(at, "ports", i);
        SwitchPort p;
        p.name = nameField(ports[i], "name", pa, names::Kind::Interface);
        p.speedGbps = get<int>(ports[i], "speed_gbps", pa);
        p.role = readRole(get<std::string>(ports[i], "role", pa), pa);
        p.peer = peerName(ports[i], pa);
        p.peerPort = nameField(ports[i], "peer_port", pa, names::Kind::Interface);
        if (ports[i].contains("pinned_uplink"))
            p.pinnedUplink = nameField(ports[i], "pinned_uplink", pa, names::Kind::Interface);
        sw.ports.push_back(p);
    }
    return sw;
}

Server readServer(const json& j, const std::string& at) {
    Server s;
    s.name = nameField(j, "name", at, names::Kind::Node);
    s.group = get<int>(j, "group", at);
    const json& nics = array(j, "nics", at);
    for (size_t i = 0; i < nics.size(); ++i) {
        std::string na = idx(at, "nics", i);
        Nic nic;
        nic.name = nameField(nics[i], "name", na, names::Kind::Node);
        nic.rail = get<int>(nics[i], "rail", na);
        nic.address = address(nics[i], "address", na, false);
        const json& ports = array(nics[i], "ports", na);
        for (size_t k = 0; k < ports.size(); ++k) {
            std::string pa = idx(na, "ports", k);
            nic.ports.push_back({nameField(ports[k], "name", pa, names::Kind::Interface),
                                 get<int>(ports[k], "plane", pa),
                                 nameField(ports[k], "leaf", pa, names::Kind::Node),
                                 nameField(ports[k], "leaf_port", pa, names::Kind::Interface)});
        }
        s.nics.push_back(std::move(nic));
    }
    return s;
}

// A pinned uplink must be one of the same leaf's uplinks.
void checkPins(const Plan& p) {
    for (size_t s = 0; s < p.switches.size(); ++s) {
        const Switch& sw = p.switches[s];
        for (size_t i = 0; i < sw.ports.size(); ++i) {
            const SwitchPort& port = sw.ports[i];
            if (port.pinnedUplink.empty()) continue;
            std::string at = idx(idx("plan", "switches", s), "ports", i) + ".pinned_uplink";
            if (port.role != PortRole::Host)
                throw FieldError(at + ": only a leaf's host port is pinned");
            bool found = false;
            for (const auto& up : sw.ports)
                found = found || (up.role == PortRole::Uplink && up.name == port.pinnedUplink);
            if (!found) {
                throw FieldError(at + ": \"" + port.pinnedUplink + "\" is not an uplink of " +
                                 sw.name);
            }
        }
    }
}

// Every cable must name a switch and port that exist, the same way from both ends.
void checkCabling(const Plan& p) {
    for (const auto& srv : p.servers) {
        for (const auto& nic : srv.nics) {
            for (const auto& np : nic.ports) {
                const Switch* lf = p.findSwitch(np.leaf);
                std::string who = srv.name + "/" + nic.name + "/" + np.name;
                if (lf == nullptr) throw FieldError(who + ": no switch " + np.leaf);
                bool found = false;
                for (const auto& sp : lf->ports) {
                    found =
                        found || (sp.name == np.leafPort && sp.peer == srv.name + "/" + nic.name &&
                                  sp.peerPort == np.name);
                }
                if (!found) {
                    throw FieldError(who + ": " + np.leaf + " has no port " + np.leafPort +
                                     " back to it");
                }
            }
        }
    }
}

}  // namespace

json toJson(const Plan& p) {
    const Request& r = p.request;
    json out;
    out["version"] = kVersion;
    out["request"] = {{"gpus", r.gpus},
                      {"gpus_per_server", r.gpusPerServer},
                      {"nic_speed_gbps", r.nicSpeedGbps},
                      {"nic_ports", r.nicPorts},
                      {"planes", r.planes},
                      {"leaf_model", modelJson(r.leafModel)},
                      {"spine_model", modelJson(r.spineModel)},
                      {"oversubscription", r.oversubscription},
                      {"uplink_speed_gbps", r.uplinkSpeedGbps},
                      {"spines_per_plane", r.spinesPerPlane},
                      {"attach", attachName(r.attach)},
                      {"gateway_mac", r.gatewayMac},
                      {"lb", lbName(r.lb)},
                      {"roce",
                       {{"priority", r.roce.priority},
                        {"dscp", r.roce.dscp},
                        {"cnp_priority", r.roce.cnpPriority},
                        {"cnp_dscp", r.roce.cnpDscp},
                        {"host_cable_m", r.roce.hostCableM},
                        {"fabric_cable_m", r.roce.fabricCableM}}}};
    out["sizing"] = sizingJson(p.sizing);
    out["host_asn"] = p.hostAsn;
    out["rail_subnets"] = json::array();
    for (const auto& s : p.subnets) {
        out["rail_subnets"].push_back(
            {{"group", s.group}, {"rail", s.rail}, {"prefix", s.prefix}, {"gateway", s.gateway}});
    }
    out["switches"] = json::array();
    for (const auto& sw : p.switches) {
        json ports = json::array();
        for (const auto& pt : sw.ports) {
            ports.push_back({{"name", pt.name},
                             {"speed_gbps", pt.speedGbps},
                             {"role", roleName(pt.role)},
                             {"peer", pt.peer},
                             {"peer_port", pt.peerPort}});
            if (!pt.pinnedUplink.empty()) ports.back()["pinned_uplink"] = pt.pinnedUplink;
        }
        out["switches"].push_back({{"name", sw.name},
                                   {"role", sw.spine ? "spine" : "leaf"},
                                   {"plane", sw.plane},
                                   {"index", sw.index},
                                   {"asn", sw.asn},
                                   {"loopback", sw.loopback},
                                   {"group", sw.group},
                                   {"rails", sw.rails},
                                   {"ports", ports}});
    }
    out["servers"] = json::array();
    for (const auto& srv : p.servers) {
        json nics = json::array();
        for (const auto& nic : srv.nics) {
            json ports = json::array();
            for (const auto& np : nic.ports) {
                ports.push_back({{"name", np.name},
                                 {"plane", np.plane},
                                 {"leaf", np.leaf},
                                 {"leaf_port", np.leafPort}});
            }
            nics.push_back({{"name", nic.name},
                            {"rail", nic.rail},
                            {"address", nic.address},
                            {"ports", ports}});
        }
        out["servers"].push_back({{"name", srv.name}, {"group", srv.group}, {"nics", nics}});
    }
    return out;
}

std::variant<Plan, SizingError> planFromJson(const json& j) {
    try {
        int version = get<int>(j, "version", "plan");
        if (version < 1 || version > kVersion) {
            throw FieldError("plan.version: " + std::to_string(version) + " is not 1 to " +
                             std::to_string(kVersion));
        }
        Plan p;
        p.request = readRequest(field(j, "request", "plan"), "plan.request");
        auto norm = normalize(p.request);
        if (auto* e = std::get_if<SizingError>(&norm))
            throw FieldError("plan.request: " + e->message);
        auto sized = size(std::get<Request>(norm));
        if (auto* e = std::get_if<SizingError>(&sized))
            throw FieldError("plan.request: " + e->message);
        p.sizing = std::get<Sizing>(sized);
        if (sizingJson(p.sizing) != field(j, "sizing", "plan"))
            throw FieldError("plan.sizing: does not follow from plan.request");
        p.hostAsn = get<uint32_t>(j, "host_asn", "plan");
        const json& subnets = array(j, "rail_subnets", "plan");
        for (size_t i = 0; i < subnets.size(); ++i) {
            std::string at = idx("plan", "rail_subnets", i);
            p.subnets.push_back({get<int>(subnets[i], "group", at),
                                 get<int>(subnets[i], "rail", at),
                                 address(subnets[i], "prefix", at, true),
                                 address(subnets[i], "gateway", at, false)});
        }
        const json& switches = array(j, "switches", "plan");
        for (size_t i = 0; i < switches.size(); ++i)
            p.switches.push_back(readSwitch(switches[i], idx("plan", "switches", i)));
        const json& servers = array(j, "servers", "plan");
        for (size_t i = 0; i < servers.size(); ++i)
            p.servers.push_back(readServer(servers[i], idx("plan", "servers", i)));
        checkCabling(p);
        if (version < 3) assignUplinkPins(p);
        checkPins(p);
        return p;
    } catch (const FieldError& e) {
        return SizingError{e.what()};
    }
}

}  // namespace twinrail::plan
