// RoCE QoS on a Linux switch (roce.h roceLinuxSwitchUnit): what the kernel offers and a
// switchdev driver (mlxsw on Spectrum, which the seed's Linux option runs) puts in the
// ASIC, as one oneshot unit of iproute2 lines per port:
//   * `dcb pfc`: PFC on the lossless priority alone; `dcb app dscp-prio`: RoCE's and the
//     CNPs' DSCPs to their priorities (a DSCP entry makes the port trust DSCP);
//   * `tc ... ets`: three bands, the CNP priority on the strict one, RoCE's on a DWRR band
//     of weight 85, the rest on 15 (SONiC's scheduler weights), by the ETS priomap;
//   * `tc ... red ... ecn` on RoCE's band: the plan's WRED profile, ECN marks from 1 MB of
//     queue to 2 MB at 5%, ECN-capable packets marked instead of dropped.
// What it cannot: size the lossless PG's headroom from the cable length (mlxsw sizes its
// own buffers), and a PFC watchdog (there is none in Linux). docs/roce.md says so.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "twinrail/plan/roce.h"

namespace twinrail::plan {
namespace {

constexpr const char* kTc = "/usr/sbin/tc";
// The plan's WRED profile (sonic_qos.cpp): marks from 1 MB to 2 MB, 5% at 2 MB.
constexpr long kMarkMin = 1048576, kMarkMax = 2097152, kRedLimit = 4L * 1048576;
constexpr int kAvpkt = 1500;
constexpr int kCnpBand = 0, kRoceBand = 1, kBestEffortBand = 2;

std::string n(long v) {
    return std::to_string(v);
}

// The ETS band of each priority 0..15 (what `priomap` lists).
std::string priomap(const RoceQos& q) {
    std::string out;
    for (int p = 0; p < 16; ++p) {
        int band = p == q.cnpPriority ? kCnpBand : p == q.priority ? kRoceBand : kBestEffortBand;
        out += " " + n(band);
    }
    return out;
}

std::vector<std::string> words(const std::string& line) {
    std::istringstream w(line);
    std::vector<std::string> a;
    for (std::string t; w >> t;) a.push_back(t);
    return a;
}

// The value after `key` in a tc argument list, or "".
std::string after(const std::vector<std::string>& a, const std::string& key, size_t skip = 0) {
    for (size_t i = 0; i + 1 + skip < a.size(); ++i)
        if (a[i] == key) return a[i + 1 + skip];
    return "";
}

struct PortTc {
    std::vector<int> bandOf;  // priority -> band (ets priomap)
    int strictBands = -1;
    std::string redParent;  // "1:<band+1>" of the red qdisc
    bool redEcn = false;
    std::string redMin, redMax;
};

}  // namespace

std::string roceLinuxSwitchUnit(const RoceQos& q, const std::string& sw,
                                const std::vector<RocePort>& ports) {
    std::vector<std::string> names;
    names.reserve(ports.size());
    for (const auto& p : ports) names.push_back(p.name);
    // The DCB half is the NICs' (roceDcbUnit); the queues follow it.
    std::string unit = roceDcbUnit(q, sw, names);
    const std::string install = "\n[Install]\n";
    std::string tc;
    const long burst = (2 * kMarkMin + kMarkMax) / (3L * kAvpkt);
    // No `bandwidth`: RED uses it only to age its average over idle time, and iproute2
    // takes it as a 32-bit byte rate (no more than 34 Gbit/s; "Illegal" beyond).
    for (const auto& port : names) {
        tc += "ExecStart=" + std::string(kTc) + " qdisc replace dev " + port +
              " root handle 1: ets bands 3 strict 1 quanta 8500 1500 priomap" + priomap(q) + "\n";
        tc += "ExecStart=" + std::string(kTc) + " qdisc replace dev " + port +
              " parent 1:" + n(kRoceBand + 1) + " handle " + n(10 + kRoceBand) + ": red limit " +
              n(kRedLimit) + " min " + n(kMarkMin) + " max " + n(kMarkMax) + " avpkt " + n(kAvpkt) +
              " burst " + n(burst) + " probability 0.05 ecn\n";
    }
    unit.insert(unit.find(install), tc);
    const std::string from = "twinrail-plan for " + sw + ": RoCE QoS on its NIC ports";
    if (auto at = unit.find(from); at != std::string::npos)
        unit.replace(at, from.size(), "twinrail-plan for " + sw + ": RoCE QoS on its ports");
    return unit;
}

std::vector<std::string> roceLinuxSwitchAgreement(const RoceQos& q, const std::string& unit) {
    // The DCB lines are checked as a server's are.
    std::vector<std::string> out = roceAgreement(q, {}, unit, "");
    std::map<std::string, PortTc> ports;
    std::istringstream in(unit);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("ExecStart=", 0) != 0) continue;
        auto a = words(line.substr(10));
        if (a.size() < 6 || a[0] != kTc || a[1] != "qdisc" || a[3] != "dev") continue;
        PortTc& p = ports[a[4]];
        if (a[5] == "root" && std::find(a.begin(), a.end(), "ets") != a.end()) {
            p.strictBands = std::atoi(after(a, "strict").c_str());
            for (size_t i = 0; i < a.size(); ++i) {
                if (a[i] != "priomap") continue;
                for (size_t k = i + 1; k < a.size(); ++k)
                    p.bandOf.push_back(std::atoi(a[k].c_str()));
            }
        }
        if (a[5] == "parent" && std::find(a.begin(), a.end(), "red") != a.end()) {
            p.redParent = a[6];
            p.redEcn = std::find(a.begin(), a.end(), "ecn") != a.end();
            p.redMin = after(a, "min");
            p.redMax = after(a, "max");
        }
    }
    if (ports.empty()) out.push_back("switch QoS unit: no `tc qdisc` line");
    for (const auto& [dev, port] : ports) {
        const PortTc& p = port;
        const std::string at = "switch QoS unit " + dev;
        auto band = [&p](int prio) {
            return prio < static_cast<int>(p.bandOf.size()) ? p.bandOf[prio] : -1;
        };
        if (band(q.cnpPriority) < 0 || band(q.cnpPriority) >= p.strictBands)
            out.push_back(at + ": CNP priority " + n(q.cnpPriority) + " is not on a strict band");
        const int roce = band(q.priority);
        if (roce < p.strictBands || roce < 0)
            out.push_back(at + ": priority " + n(q.priority) + " has no DWRR band of its own");
        std::set<int> shared;
        for (int prio = 0; prio < 8; ++prio) {
            if (prio != q.priority && band(prio) == roce) shared.insert(prio);
        }
        if (!shared.empty()) {
            out.push_back(at + ": priority " + n(q.priority) + " shares its band with priority " +
                          n(*shared.begin()));
        }
        if (p.redParent != "1:" + n(roce + 1) || !p.redEcn) {
            out.push_back(at + ": no ECN marking on priority " + n(q.priority) + "'s band");
        } else if (p.redMin != n(kMarkMin) || p.redMax != n(kMarkMax)) {
            out.push_back(at + ": ECN marks from " + p.redMin + " to " + p.redMax +
                          " bytes, the plan says " + n(kMarkMin) + " to " + n(kMarkMax));
        }
    }
    return out;
}

}  // namespace twinrail::plan
