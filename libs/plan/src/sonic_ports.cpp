// A plan's ports on a HWSKU: front-panel cages, SONiC's breakout naming, the mapping of
// swp<n>[s<lane>] onto EthernetN, and the factory-default config_db.json of the SKU.
#include <algorithm>
#include <charconv>
#include <cstddef>

#include "twinrail/plan/sonic_sku.h"

namespace twinrail::plan {
namespace {

using json = nlohmann::json;

// swp<n> or swp<n>s<lane> -> (n, lane or -1); n = 0 when it is neither.
std::pair<int, int> planPort(const std::string& name) {
    int n = 0;
    int lane = -1;
    if (name.rfind("swp", 0) != 0) return {0, -1};
    const char* p = name.c_str() + 3;
    const char* end = name.c_str() + name.size();
    auto r = std::from_chars(p, end, n);
    if (r.ec != std::errc() || r.ptr == p || n <= 0) return {0, -1};
    if (r.ptr == end) return {n, -1};
    if (*r.ptr != 's') return {0, -1};
    auto r2 = std::from_chars(r.ptr + 1, end, lane);
    if (r2.ec != std::errc() || r2.ptr != end || lane < 0) return {0, -1};
    return {n, lane};
}

std::string modeText(int count, int speedGbps) {
    return std::to_string(count) + "x" + std::to_string(speedGbps) + "G";
}

// The mode a cage is in as port_config.ini has it.
BreakoutMode currentMode(const PhysicalPort& cage) {
    BreakoutMode m;
    m.count = static_cast<int>(cage.rows.size());
    m.speedGbps = static_cast<int>(cage.speedMbps() / 1000 / m.count);
    m.text = modeText(m.count, m.speedGbps);
    return m;
}

// etp1 -> etp1, etp1a -> etp1 (a broken-out cage's first alias carries the letter).
std::string aliasStem(const PhysicalPort& cage) {
    std::string a = cage.base().alias;
    if (cage.rows.size() > 1 && !a.empty() && a.back() >= 'a' && a.back() <= 'h') a.pop_back();
    return a;
}

}  // namespace

int PhysicalPort::laneCount() const {
    int n = 0;
    for (const auto* r : rows) n += static_cast<int>(r->lanes.size());
    return n;
}

long PhysicalPort::speedMbps() const {
    long s = 0;
    for (const auto* r : rows) s += r->speedMbps;
    return s;
}

std::vector<PhysicalPort> physicalPorts(const Sku& sku) {
    std::map<int, PhysicalPort> byIndex;
    std::vector<PhysicalPort> out;
    const bool indexed = std::all_of(sku.ports.begin(), sku.ports.end(),
                                     [](const SkuPort& p) { return p.index >= 0; });
    for (const auto& p : sku.ports) {
        if (!indexed) {
            out.push_back({0, static_cast<int>(out.size()), {&p}});
            continue;
        }
        auto& cage = byIndex[p.index];
        cage.index = p.index;
        cage.rows.push_back(&p);
    }
    for (auto& [index, cage] : byIndex) out.push_back(std::move(cage));
    for (size_t i = 0; i < out.size(); ++i) {
        out[i].ordinal = static_cast<int>(i) + 1;
        std::sort(out[i].rows.begin(), out[i].rows.end(),
                  [](const SkuPort* a, const SkuPort* b) { return a->number < b->number; });
    }
    return out;
}

std::variant<std::vector<SkuPort>, std::string> breakoutPorts(const PhysicalPort& cage,
                                                              const BreakoutMode& mode) {
    const int lanes = cage.laneCount();
    const std::string where = cage.base().name + " (front-panel port " +
                              std::to_string(cage.ordinal) + ", " + std::to_string(lanes) +
                              " lanes)";
    if (mode.count <= 0 || lanes % mode.count != 0)
        return where + " cannot be split " + mode.text + ": its lanes do not divide evenly";
    const long cageMbps = cage.speedMbps();
    if (cageMbps > 0 && static_cast<long>(mode.count) * mode.speedGbps * 1000 > cageMbps)
        return where + " runs at " + std::to_string(cageMbps / 1000) + "G in all, not " + mode.text;
    std::vector<int> all;
    for (const auto* r : cage.rows) all.insert(all.end(), r->lanes.begin(), r->lanes.end());
    const int per = lanes / mode.count;
    const std::string stem = aliasStem(cage);
    std::vector<SkuPort> out;
    for (int k = 0; k < mode.count; ++k) {
        SkuPort p;
        p.number = cage.base().number + k * per;
        p.name = "Ethernet" + std::to_string(p.number);
        const auto from = static_cast<std::ptrdiff_t>(k) * per;
        p.lanes.assign(all.begin() + from, all.begin() + from + per);
        p.alias = mode.count == 1 ? stem : stem + static_cast<char>('a' + k);
        p.index = cage.index;
        p.speedMbps = static_cast<long>(mode.speedGbps) * 1000;
        p.extra = cage.base().extra;
        // subport numbers a cage's ports from 1 (0 or 1 when it is not split).
        if (p.extra.count("subport") > 0 && mode.count > 1)
            p.extra["subport"] = std::to_string(k + 1);
        out.push_back(std::move(p));
    }
    return out;
}

std::variant<PortMap, std::string> mapPorts(const Sku& sku, const Switch& sw) {
    PortMap map;
    const auto cages = physicalPorts(sku);
    // Each cage's ports in the mode the plan needs, worked out once.
    std::map<int, std::vector<SkuPort>> split;
    for (const auto& p : sw.ports) {
        auto [n, lane] = planPort(p.name);
        const std::string what = sw.name + " port " + p.name;
        if (n == 0) return what + ": not a swp<n> or swp<n>s<lane> name";
        if (n > static_cast<int>(cages.size())) {
            return what + " needs front-panel port " + std::to_string(n) + ", but HWSKU " +
                   sku.name + " has " + std::to_string(cages.size());
        }
        const PhysicalPort& cage = cages[static_cast<size_t>(n - 1)];
        const long cageGbps = cage.speedMbps() / 1000;
        if (cageGbps <= 0) {
            return what + ": HWSKU " + sku.name + " gives " + cage.base().name +
                   " no speed (port_config.ini needs a speed column)";
        }
        if (p.speedGbps <= 0 || (cageGbps > 0 && cageGbps % p.speedGbps != 0)) {
            return what + " runs at " + std::to_string(p.speedGbps) + "G, which " +
                   cage.base().name + " (" + std::to_string(cageGbps) + "G) cannot be split into";
        }
        BreakoutMode want;
        want.count = lane < 0 ? 1 : static_cast<int>(cageGbps / p.speedGbps);
        want.speedGbps = p.speedGbps;
        want.text = modeText(want.count, want.speedGbps);
        if (lane < 0 && cageGbps != p.speedGbps) {
            return what + " runs at " + std::to_string(p.speedGbps) + "G on a " +
                   std::to_string(cageGbps) + "G port without a breakout: a speed change of " +
                   cage.base().name + " is the SKU's (PORT), not the plan's";
        }
        if (lane >= want.count) {
            return what + " is lane " + std::to_string(lane) + ", but " + cage.base().name +
                   " of HWSKU " + sku.name + " (" + std::to_string(cageGbps) + "G) splits into " +
                   want.text + " at most";
        }
        auto found = split.find(n);
        if (found == split.end()) {
            const BreakoutMode have = currentMode(cage);
            if (have.count == want.count && have.speedGbps == want.speedGbps) {
                std::vector<SkuPort> rows;
                for (const auto* r : cage.rows) rows.push_back(*r);
                found = split.emplace(n, std::move(rows)).first;
            } else {
                auto ports = breakoutPorts(cage, want);
                if (auto* why = std::get_if<std::string>(&ports)) return what + ": " + *why;
                map.breakouts[cage.base().name] = want;
                found = split.emplace(n, std::get<std::vector<SkuPort>>(ports)).first;
            }
        } else if (static_cast<int>(found->second.size()) != want.count) {
            return what + ": " + cage.base().name + " is needed both " +
                   std::to_string(found->second.size()) + "-way and " + want.text;
        }
        map.names[p.name] = found->second[static_cast<size_t>(std::max(lane, 0))].name;
    }
    return map;
}

json sonicBaseConfigDb(const Sku& sku, const std::map<std::string, BreakoutMode>& breakouts) {
    json db;
    // Placeholders: a real box fills these from its EEPROM and ONIE (hostname "sonic").
    db["DEVICE_METADATA"]["localhost"] = {{"hwsku", sku.name},
                                          {"platform", "x86_64-unknown-r0"},
                                          {"mac", "02:00:00:00:00:01"},
                                          {"hostname", "sonic"},
                                          {"type", "LeafRouter"}};
    db["PORT"] = json::object();
    for (const auto& cage : physicalPorts(sku)) {
        // sonic-cfggen writes a BREAKOUT_CFG row per cage from hwsku.json's default modes.
        if (!sku.defaultModes.empty()) {
            auto m = breakouts.find(cage.base().name);
            auto d = sku.defaultModes.find(cage.base().name);
            const std::string text = m != breakouts.end()          ? m->second.text
                                     : d != sku.defaultModes.end() ? d->second.text
                                                                   : currentMode(cage).text;
            db["BREAKOUT_CFG"][cage.base().name] = {{"brkout_mode", text}};
        }
        std::vector<SkuPort> rows;
        auto mode = breakouts.find(cage.base().name);
        if (mode != breakouts.end()) {
            auto ports = breakoutPorts(cage, mode->second);
            if (auto* split = std::get_if<std::vector<SkuPort>>(&ports)) rows = *split;
        }
        if (rows.empty())
            for (const auto* r : cage.rows) rows.push_back(*r);
        for (const auto& p : rows) {
            std::string lanes;
            for (int l : p.lanes) lanes += (lanes.empty() ? "" : ",") + std::to_string(l);
            json row{{"lanes", lanes}, {"admin_status", "up"}};
            if (!p.alias.empty()) row["alias"] = p.alias;
            if (p.index >= 0) row["index"] = std::to_string(p.index);
            if (p.speedMbps > 0) row["speed"] = std::to_string(p.speedMbps);
            for (const auto& [k, v] : p.extra) row[k] = v;
            db["PORT"][p.name] = row;
        }
    }
    return db;
}

std::map<std::string, BreakoutMode> breakoutsOf(const json& overlay) {
    std::map<std::string, BreakoutMode> out;
    if (!overlay.is_object() || !overlay.contains("BREAKOUT_CFG")) return out;
    for (const auto& [port, row] : overlay["BREAKOUT_CFG"].items()) {
        if (!row.is_object() || !row.contains("brkout_mode") || !row["brkout_mode"].is_string())
            continue;
        auto mode = parseBreakoutMode(row["brkout_mode"].get<std::string>());
        if (auto* m = std::get_if<BreakoutMode>(&mode)) out[port] = *m;
    }
    return out;
}

}  // namespace twinrail::plan
