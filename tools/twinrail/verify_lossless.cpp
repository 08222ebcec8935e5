// `twinrail verify`'s lossless checks: each switch's CONFIG_DB QoS against the plan's RoCE
// choices (roceSwitchAgreement on the plan's ports), and the two ends of every fabric cable
// against each other (PFC on at one end only, or on other priorities, spreads pauses one
// way and drops the other). Only when some switch has RoCE QoS at all: a Linux fabric has
// none, and is not called lossy for it. Then, on any fabric, what is happening now: a
// lossless queue the PFC watchdog found stormed (its traffic is being dropped or sent
// lossy), and a port paused more often than the limit (pathqd's measured rate).
#include <cstdlib>

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

namespace {

// Storms and pauses on the plan's ports of one reachable switch.
void addCongestion(const plan::Switch& sw, const SwitchState& s, const VerifyOptions& options,
                   VerifyReport& r) {
    if (!s.countersError.empty()) problem(r, sw.name, "COUNTERS_DB not read: " + s.countersError);
    for (const auto& p : sw.ports) {
        for (const auto& [queue, status] : s.watchdog) {
            if (status != "stormed" || queue.rfind(p.name + ":", 0) != 0) continue;
            problem(r, sw.name,
                    "PFC storm on " + p.name + " queue " + queue.substr(p.name.size() + 1) +
                        ": the PFC watchdog is dropping or forwarding its lossless traffic "
                        "lossy (PFC_WD_STATUS stormed)");
        }
        auto q = s.quality.find(p.name);
        if (q == s.quality.end()) continue;
        auto pps = q->second.find("pause_rx_pps");
        if (pps == q->second.end() || pps->second.empty()) continue;
        char* end = nullptr;
        double v = std::strtod(pps->second.c_str(), &end);
        if (*end != '\0' || !(v > options.maxPausePps)) continue;  // NaN and junk: not named
        problem(r, sw.name,
                p.name + " receives " + pps->second + " pause frames/s (over " +
                    std::to_string(static_cast<long>(options.maxPausePps)) +
                    "): " + (p.peer.empty() ? std::string("its peer") : p.peer) +
                    " is congested and holding it back");
    }
}

}  // namespace

void addLossless(const plan::Plan& plan, const std::map<std::string, SwitchState>& st,
                 const VerifyOptions& options, VerifyReport& r) {
    r.lossless.columns = {"SWITCH", "PROBLEM"};
    bool configured = false;
    for (const auto& [name, s] : st)
        configured = configured || (s.reachable && s.config.contains("PORT_QOS_MAP"));
    r.json["lossless"] = {{"configured", configured}, {"problems", json::array()}};
    for (const auto& sw : plan.switches) {
        auto s = st.find(sw.name);
        if (s == st.end() || !s->second.reachable) continue;
        // Unread, a switch's QoS is unknown, not absent: named whether or not others have it.
        if (!s->second.configError.empty())
            problem(r, sw.name, "CONFIG_DB not read: " + s->second.configError);
        addCongestion(sw, s->second, options, r);
    }
    if (!configured) return;
    for (const auto& sw : plan.switches) {
        auto s = st.find(sw.name);
        if (s == st.end() || !s->second.reachable) continue;  // reported as unreachable
        if (!s->second.configError.empty()) continue;         // named above
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
