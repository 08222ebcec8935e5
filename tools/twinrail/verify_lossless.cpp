// `twinrail verify`'s lossless checks: each switch's CONFIG_DB QoS against the plan's RoCE
// choices (roceSwitchAgreement on the plan's ports), and the two ends of every fabric cable
// against each other (PFC on at one end only, or on other priorities, spreads pauses one
// way and drops the other). Only when some switch has RoCE QoS at all: a Linux fabric has
// none, and is not called lossy for it.
#include "twinrail/plan/roce.h"
#include "verify.h"

namespace twinrail::cli {
namespace {

using json = nlohmann::json;

std::string pfcOf(const SwitchState& s, const std::string& port) {
    const json& t = s.config.value("PORT_QOS_MAP", json::object());
    if (!t.contains(port) || !t[port].is_object()) return "";
    return t[port].value("pfc_enable", "");
}

void problem(VerifyReport& r, const std::string& sw, const std::string& what) {
    r.lossless.rows.push_back({sw, what});
    r.json["lossless"]["problems"].push_back({{"switch", sw}, {"problem", what}});
    r.healthy = false;
}

}  // namespace

void addLossless(const plan::Plan& plan, const std::map<std::string, SwitchState>& st,
                 VerifyReport& r) {
    r.lossless.columns = {"SWITCH", "PROBLEM"};
    bool configured = false;
    for (const auto& [name, s] : st)
        configured = configured || (s.reachable && s.config.contains("PORT_QOS_MAP"));
    r.json["lossless"] = {{"configured", configured}, {"problems", json::array()}};
    if (!configured) return;
    for (const auto& sw : plan.switches) {
        auto s = st.find(sw.name);
        if (s == st.end() || !s->second.reachable) continue;  // reported as unreachable
        if (!s->second.configError.empty()) {
            problem(r, sw.name, "CONFIG_DB not read: " + s->second.configError);
            continue;
        }
        std::vector<plan::RocePort> ports;
        for (const auto& p : sw.ports) ports.push_back({p.name, p.role != plan::PortRole::Host});
        for (const auto& line :
             plan::roceSwitchAgreement(plan.request.roce, s->second.config, ports))
            problem(r, sw.name, line);
    }
    for (const auto& sw : plan.switches) {
        for (const auto& p : sw.ports) {
            if (p.role != plan::PortRole::Uplink) continue;  // each cable once, from the leaf
            auto a = st.find(sw.name);
            auto b = st.find(p.peer);
            if (a == st.end() || b == st.end() || !a->second.reachable || !b->second.reachable)
                continue;
            const std::string here = pfcOf(a->second, p.name);
            const std::string there = pfcOf(b->second, p.peerPort);
            if (here == there) continue;
            auto side = [](const std::string& pfc) {
                return pfc.empty() ? std::string("lossy") : "PFC on " + pfc;
            };
            problem(r, sw.name,
                    "cable " + sw.name + ":" + p.name + " - " + p.peer + ":" + p.peerPort + ": " +
                        side(here) + " at " + sw.name + ", " + side(there) + " at " + p.peer);
        }
    }
}

}  // namespace twinrail::cli
