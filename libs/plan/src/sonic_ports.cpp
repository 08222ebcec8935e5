// A plan's ports on a HWSKU: front-panel cages, SONiC's breakout naming, the mapping of
// swp<n>[s<lane>] onto EthernetN, and the factory-default config_db.json of the SKU.
#include <algorithm>
#include <charconv>
#include <cstddef>

#include "twinrail/common/names.h"
#include "twinrail/plan/sonic_sku.h"
#include "twinrail/plan/sonic_target.h"

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

// The platform.json mode that splits `cage` into `count` ports at `gbps`: a mode whose
// default speed is `gbps` first, else one that lists it as an alternative. DPB accepts
// only platform.json's keys, written exactly.
std::variant<Breakout, std::string> chooseBreakout(const Sku& sku, const PhysicalPort& cage,
                                                   int count, int gbps) {
    const std::string need = cage.base().name + " must be split " + modeText(count, gbps);
    if (sku.platformFile.empty()) {
        return need +
               ", and `config interface breakout` takes only platform.json's modes: "
               "HWSKU " +
               sku.name +
               " has no platform.json (in its directory or the "
               "platform directory above it)";
    }
    auto modes = sku.platformModes.find(cage.base().name);
    if (modes == sku.platformModes.end() || modes->second.empty())
        return need + ", but " + sku.platformFile + " has no breakout_modes for it";
    const BreakoutMode* best = nullptr;
    for (const auto& m : modes->second) {
        if (m.count != count || (m.lanes != 0 && m.lanes != cage.laneCount()) || !m.runsAt(gbps))
            continue;
        if (best == nullptr || (m.speedGbps == gbps && best->speedGbps != gbps)) best = &m;
    }
    if (best == nullptr) {
        std::string offered;
        for (const auto& m : modes->second) offered += (offered.empty() ? "" : ", ") + m.text;
        return need + ", which none of " + sku.platformFile + "'s modes for it gives (" + offered +
               ")";
    }
    return Breakout{*best, gbps};
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
                                                              const Breakout& breakout) {
    const BreakoutMode& mode = breakout.mode;
    const int lanes = cage.laneCount();
    const std::string where = cage.base().name + " (front-panel port " +
                              std::to_string(cage.ordinal) + ", " + std::to_string(lanes) +
                              " lanes)";
    if (mode.count <= 0 || lanes % mode.count != 0)
        return where + " cannot be split " + mode.text + ": its lanes do not divide evenly";
    const long cageMbps = cage.speedMbps();
    if (mode.lanes != 0 && mode.lanes != lanes) {
        return where + " cannot take " + mode.text + ": it uses " + std::to_string(mode.lanes) +
               " lanes";
    }
    if (cageMbps > 0 && static_cast<long>(mode.count) * mode.speedGbps * 1000 > cageMbps)
        return where + " runs at " + std::to_string(cageMbps / 1000) + "G in all, not " + mode.text;
    if (!mode.runsAt(breakout.speedGbps)) {
        return where + ": " + mode.text + " does not run at " + std::to_string(breakout.speedGbps) +
               "G";
    }
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
        p.speedMbps = static_cast<long>(breakout.speedGbps) * 1000;
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
        const int count = lane < 0 ? 1 : static_cast<int>(cageGbps / p.speedGbps);
        if (lane < 0 && cageGbps != p.speedGbps) {
            return what + " runs at " + std::to_string(p.speedGbps) + "G on a " +
                   std::to_string(cageGbps) + "G port without a breakout: a speed change of " +
                   cage.base().name + " is the SKU's (PORT), not the plan's";
        }
        const std::string wanted = modeText(count, p.speedGbps);
        if (lane >= count) {
            return what + " is lane " + std::to_string(lane) + ", but " + cage.base().name +
                   " of HWSKU " + sku.name + " (" + std::to_string(cageGbps) + "G) splits into " +
                   wanted + " at most";
        }
        auto found = split.find(n);
        if (found == split.end()) {
            const BreakoutMode have = currentMode(cage);
            if (have.count == count && have.speedGbps == p.speedGbps) {
                std::vector<SkuPort> rows;
                for (const auto* r : cage.rows) rows.push_back(*r);
                found = split.emplace(n, std::move(rows)).first;
            } else {
                auto chosen = chooseBreakout(sku, cage, count, p.speedGbps);
                if (auto* why = std::get_if<std::string>(&chosen)) return what + ": " + *why;
                const Breakout& b = std::get<Breakout>(chosen);
                auto ports = breakoutPorts(cage, b);
                if (auto* why = std::get_if<std::string>(&ports)) return what + ": " + *why;
                map.breakouts[cage.base().name] = b;
                found = split.emplace(n, std::get<std::vector<SkuPort>>(ports)).first;
            }
        } else if (static_cast<int>(found->second.size()) != count) {
            return what + ": " + cage.base().name + " is needed both " +
                   std::to_string(found->second.size()) + "-way and " + wanted;
        }
        map.names[p.name] = found->second[static_cast<size_t>(std::max(lane, 0))].name;
    }
    return map;
}

json sonicPortRow(const SkuPort& p) {
    std::string lanes;
    for (int l : p.lanes) lanes += (lanes.empty() ? "" : ",") + std::to_string(l);
    json row{{"lanes", lanes}, {"admin_status", "up"}};
    if (!p.alias.empty()) row["alias"] = p.alias;
    if (p.index >= 0) row["index"] = std::to_string(p.index);
    if (p.speedMbps > 0) row["speed"] = std::to_string(p.speedMbps);
    for (const auto& [k, v] : p.extra) row[k] = v;
    return row;
}

json sonicBaseConfigDb(const Sku& sku, const std::map<std::string, Breakout>& breakouts) {
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
            const std::string text = m != breakouts.end()          ? m->second.mode.text
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
        for (const auto& p : rows) db["PORT"][p.name] = sonicPortRow(p);
    }
    return db;
}

json sonicBreakoutsJson(const std::map<std::string, Breakout>& breakouts) {
    json out = json::object();
    for (const auto& [port, b] : breakouts)
        out[port] = {{"brkout_mode", b.mode.text}, {"speed", std::to_string(b.speedGbps * 1000L)}};
    return out;
}

std::variant<std::map<std::string, Breakout>, std::string> parseSonicBreakouts(const json& j) {
    std::map<std::string, Breakout> out;
    if (!j.is_object()) return std::string("breakouts: not an object");
    for (const auto& [port, row] : j.items()) {
        const std::string where = "breakouts." + names::printable(port, 40);
        if (!names::valid(port, names::Kind::Interface)) return where + ": not a port name";
        if (!row.is_object() || !row.contains("brkout_mode") || !row["brkout_mode"].is_string() ||
            !row.contains("speed") || !row["speed"].is_string())
            return where + ": needs brkout_mode and speed (strings)";
        auto mode = parseBreakoutMode(row["brkout_mode"].get<std::string>());
        if (auto* why = std::get_if<std::string>(&mode)) return where + ".brkout_mode: " + *why;
        long mbps = 0;
        const std::string speed = row["speed"].get<std::string>();
        auto [end, ec] = std::from_chars(speed.data(), speed.data() + speed.size(), mbps);
        const auto& m = std::get<BreakoutMode>(mode);
        if (ec != std::errc() || end != speed.data() + speed.size() || mbps % 1000 != 0 ||
            !m.runsAt(static_cast<int>(mbps / 1000))) {
            return where + ".speed: \"" + names::printable(speed) + "\" is not a speed " + m.text +
                   " runs at (Mb/s)";
        }
        out[port] = Breakout{m, static_cast<int>(mbps / 1000)};
    }
    return out;
}

}  // namespace twinrail::plan
