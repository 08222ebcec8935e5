#include "verify.h"

#include "twinrail/plan/evpn_mh.h"

namespace twinrail::cli {
namespace {

using json = nlohmann::json;

struct Seen {
    std::string leaf, port, how;  // "routed" (installed), "unresponsive", "foreign", "refused"
};

// The port a HOST_ROUTE_TABLE row puts the host behind: the member port (`port`) when the
// host is on an SVI (SONiC: one VLAN per rail), else the interface itself.
std::string portOf(const Fields& row) {
    for (const char* field : {"port", "ifname"}) {
        auto it = row.find(field);
        if (it != row.end() && !it->second.empty()) return it->second;
    }
    return "";
}

// Every place a NIC's address shows up on a leaf: routed, tracked but not answering,
// or heard on a port whose subnet it does not belong to.
std::vector<Seen> sightings(const plan::Plan& plan, const std::map<std::string, SwitchState>& st,
                            const std::string& address) {
    std::vector<Seen> out;
    for (const auto& sw : plan.switches) {
        if (sw.spine) continue;
        auto it = st.find(sw.name);
        if (it == st.end() || !it->second.reachable) continue;
        if (auto h = it->second.hosts.find(address); h != it->second.hosts.end()) {
            auto state = h->second.find("state");
            bool installed = state != h->second.end() && state->second == "installed";
            out.push_back({sw.name, portOf(h->second), installed ? "routed" : "unresponsive"});
        }
        if (auto f = it->second.foreign.find(address); f != it->second.foreign.end()) {
            out.push_back({sw.name, portOf(f->second), "foreign"});
        }
        // Refused claims: where the address was heard against the plan's binding. For a NIC
        // not routed where it should be, that is where its cable ends.
        for (const auto& [key, f] : it->second.claims) {
            auto sep = key.rfind('|');
            if (sep != std::string::npos && key.substr(0, sep) == address)
                out.push_back({sw.name, key.substr(sep + 1), "refused"});
        }
    }
    return out;
}

// With EVPN-MH a host is seen behind the Ethernet segment of its port: the one-member bond
// over it, hbond<es-id> on Linux, PortChannel<es-id> on SONiC (evpn_mh.h, sonic_target.h).
bool behindPlannedPort(const plan::Plan& plan, const plan::NicPort& np, const std::string& seen) {
    if (seen == np.leafPort) return true;
    if (plan.request.attach != plan::Attach::EvpnMh) return false;
    const plan::Switch* leaf = plan.findSwitch(np.leaf);
    if (leaf == nullptr || leaf->spine) return false;
    for (const auto& seg : plan::evpnMhLeaf(plan, *leaf).segments) {
        if (seg.port != np.leafPort) continue;
        const std::string id = std::to_string(seg.esId);
        return seen == seg.bond || seen == "PortChannel" + id;
    }
    return false;
}

std::string where(const Seen& s) {
    return s.leaf + ":" + s.port + (s.how == "routed" ? "" : " (" + s.how + ")");
}

const plan::Switch* byLoopback(const plan::Plan& plan, const std::string& routerId) {
    for (const auto& sw : plan.switches)
        if (sw.loopback == routerId) return &sw;
    return nullptr;
}

// Who the plan gives an address to: "srv1/nic1", or "" for an address it does not know.
std::string ownerOf(const plan::Plan& plan, const std::string& address) {
    for (const auto& srv : plan.servers) {
        for (const auto& nic : srv.nics) {
            if (nic.address == address) return srv.name + "/" + nic.name;
        }
    }
    return "";
}

// Refused claims: someone else's address heard on a port. They make the fabric degraded
// (an attack or a misconfigured host is on it), but they are not cabling faults.
void addClaims(const plan::Plan& plan, const std::map<std::string, SwitchState>& st,
               VerifyReport& r) {
    r.claims.columns = {"SWITCH", "ADDRESS", "CLAIMED ON", "MAC", "REASON", "COUNT", "OWNER"};
    r.json["claims"] = json::array();
    for (const auto& [name, s] : st) {
        for (const auto& [key, fields] : s.claims) {
            auto sep = key.rfind('|');
            std::string address = key.substr(0, sep);
            std::string port = sep == std::string::npos ? "" : key.substr(sep + 1);
            const Fields& f = fields;
            auto field = [&f](const char* n) {
                auto it = f.find(n);
                return it == f.end() ? std::string() : it->second;
            };
            std::string owner = ownerOf(plan, address);
            r.claims.rows.push_back({name, address, port, field("mac"), field("reason"),
                                     field("count"), owner.empty() ? "(not in the plan)" : owner});
            r.json["claims"].push_back({{"switch", name},
                                        {"address", address},
                                        {"port", port},
                                        {"mac", field("mac")},
                                        {"reason", field("reason")},
                                        {"count", field("count")},
                                        {"first", field("first")},
                                        {"last", field("last")},
                                        {"owner", owner}});
            r.healthy = false;
        }
    }
}

}  // namespace

VerifyReport verifyFabric(const plan::Plan& plan, const std::map<std::string, SwitchState>& st,
                          const VerifyOptions& options) {
    VerifyReport r;
    r.json = {
        {"nic_ports", json::array()}, {"links", json::array()}, {"unreachable", json::array()}};
    for (const auto& [name, s] : st) {
        if (s.reachable) continue;
        r.healthy = false;
        r.json["unreachable"].push_back({{"switch", name}, {"error", s.error}});
    }
    r.nicPorts.columns = {"SERVER", "NIC", "PORT", "PLANE", "PLANNED", "STATUS", "SEEN ON"};
    for (const auto& srv : plan.servers) {
        for (const auto& nic : srv.nics) {
            auto seen = sightings(plan, st, nic.address);
            int planesReached = 0;  // planes that route to the NIC, where the plan says or not
            std::vector<json> rows;
            for (const auto& np : nic.ports) {
                std::string status = "missing", on;
                bool routed = false;
                auto leaf = st.find(np.leaf);
                if (leaf == st.end() || !leaf->second.reachable) status = "unknown";
                for (const auto& s : seen) {
                    bool planned = s.leaf == np.leaf && behindPlannedPort(plan, np, s.port);
                    if (planned && s.how == "routed") {
                        status = "ok";
                        on = where(s);
                        routed = true;
                        break;
                    }
                    // Seen elsewhere in this port's plane, or tracked on the planned port
                    // without answering: the cable does not end where the plan says.
                    const plan::Switch* at = plan.findSwitch(s.leaf);
                    if (at != nullptr && at->plane == np.plane && status != "ok") {
                        status = planned ? "unresponsive" : "miscabled";
                        on = where(s);
                        routed = routed || s.how == "routed";
                    }
                }
                planesReached += routed;
                rows.push_back({{"server", srv.name},
                                {"nic", nic.name},
                                {"address", nic.address},
                                {"port", np.name},
                                {"plane", np.plane},
                                {"planned", np.leaf + ":" + np.leafPort},
                                {"status", status},
                                {"seen_on", on}});
            }
            std::string nicState = planesReached == static_cast<int>(nic.ports.size())
                                       ? "all-planes"
                                   : planesReached > 0 ? "single-plane"
                                                       : "unreachable";
            for (auto& row : rows) {
                row["nic_state"] = nicState;
                if (row["status"] != "ok") r.healthy = false;
                r.nicPorts.rows.push_back(
                    {row["server"], row["nic"], row["port"],
                     std::to_string(row["plane"].get<int>()), row["planned"],
                     row["status"].get<std::string>() +
                         (nicState == "single-plane" ? ", NIC single-plane" : ""),
                     row["seen_on"]});
                r.json["nic_ports"].push_back(row);
            }
        }
    }
    r.links.columns = {"LINK", "PLANE", "STATUS", "DETAIL"};
    for (const auto& sw : plan.switches) {
        for (const auto& p : sw.ports) {
            if (p.role != plan::PortRole::Uplink) continue;  // each link once, from the leaf
            std::string status = "ok", detail;
            for (const auto& [dev, port, peer] :
                 {std::tuple{sw.name, p.name, p.peer}, std::tuple{p.peer, p.peerPort, sw.name}}) {
                auto s = st.find(dev);
                if (s == st.end() || !s->second.reachable) {
                    status = "unknown";
                    detail += dev + ": no state; ";
                    continue;
                }
                auto row = s->second.peers.find(port);
                std::string state = row == s->second.peers.end() || !row->second.count("state")
                                        ? "no session"
                                        : row->second.at("state");
                if (state != "Established") {
                    if (status != "unknown") status = "down";
                    detail += dev + ":" + port + " " + state + "; ";
                    continue;
                }
                std::string rid =
                    row->second.count("remote_router_id") ? row->second.at("remote_router_id") : "";
                const plan::Switch* far = byLoopback(plan, rid);
                if (far == nullptr || far->name != peer) {
                    status = "wrong-peer";
                    detail += dev + ":" + port + " reaches " + (far ? far->name : "router " + rid) +
                              ", planned " + peer + "; ";
                }
            }
            if (status != "ok") r.healthy = false;
            if (!detail.empty()) detail.resize(detail.size() - 2);
            std::string link = sw.name + ":" + p.name + " - " + p.peer + ":" + p.peerPort;
            r.links.rows.push_back({link, std::to_string(sw.plane), status, detail});
            r.json["links"].push_back(
                {{"link", link}, {"plane", sw.plane}, {"status", status}, {"detail", detail}});
        }
    }
    addClaims(plan, st, r);
    addLossless(plan, st, options, r);
    r.json["healthy"] = r.healthy;
    return r;
}

}  // namespace twinrail::cli
