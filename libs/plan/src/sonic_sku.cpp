// Reading a HWSKU: port_config.ini and hwsku.json, hostile input. Every error names the
// file and where: line and column for the ini and for JSON syntax, the key otherwise.
#include <algorithm>
#include <charconv>
#include <set>
#include <sstream>

#include "sonic_sku_internal.h"
#include "twinrail/common/names.h"
#include "twinrail/plan/sonic_sku.h"

namespace twinrail::plan {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxFileBytes = 1 << 20;
constexpr size_t kMaxLineBytes = 4096;
constexpr size_t kMaxPorts = 1024;
constexpr int kMaxLane = 65535;
constexpr long kMaxSpeedMbps = 3200000;
// SONiC's own default when the file has no "# name ..." header (portconfig.py).
std::vector<std::string> defaultColumns() {
    return {"name", "lanes", "alias", "index"};
}
// Port columns that become PORT fields in a base config (sonic-port.yang leaves).
bool passedThrough(const std::string& column) {
    return column == "fec" || column == "autoneg" || column == "subport" || column == "mtu" ||
           column == "admin_status" || column == "tpid";
}

struct Token {
    std::string text;
    size_t column = 1;  // 1-based
};

std::vector<Token> tokens(const std::string& line) {
    std::vector<Token> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        size_t start = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
        if (i > start) out.push_back({line.substr(start, i - start), start + 1});
    }
    return out;
}

template <typename Int>
bool toInt(const std::string& s, Int& out) {
    if (s.empty() || s.size() > 12) return false;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

// "Ethernet<N>" -> N, or -1.
int ethernetNumber(const std::string& name) {
    constexpr std::string_view kPrefix = "Ethernet";
    if (name.rfind(kPrefix, 0) != 0) return -1;
    int n = -1;
    const std::string digits = name.substr(kPrefix.size());
    if (!toInt(digits, n) || n < 0 || n > 99999) return -1;
    if (std::to_string(n) != digits) return -1;  // no leading zeros
    return n;
}

std::string at(const std::string& file, size_t line, size_t column) {
    return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
}

// One data field into the port; an error message without the position, or empty.
std::string setField(SkuPort& port, const std::string& column, const std::string& value,
                     std::set<int>& usedLanes) {
    if (column == "name") {
        port.number = ethernetNumber(value);
        if (port.number < 0 || !names::valid(value, names::Kind::Interface))
            return "name \"" + names::printable(value) + "\" is not Ethernet<N>";
        port.name = value;
    } else if (column == "lanes") {
        std::stringstream in(value);
        for (std::string part; std::getline(in, part, ',');) {
            int lane = -1;
            if (!toInt(part, lane) || lane < 0 || lane > kMaxLane) {
                return "lanes \"" + names::printable(value) + "\": \"" + names::printable(part) +
                       "\" is not a lane number (0-65535)";
            }
            if (!usedLanes.insert(lane).second)
                return "lane " + std::to_string(lane) + " is already another port's";
            port.lanes.push_back(lane);
        }
        if (port.lanes.empty()) return "lanes is empty";
    } else if (column == "alias") {
        if (!names::valid(value, names::Kind::Interface))
            return "alias \"" + names::printable(value) + "\" is not a port alias";
        port.alias = value;
    } else if (column == "index") {
        if (!toInt(value, port.index) || port.index < 0 || port.index > 99999)
            return "index \"" + names::printable(value) + "\" is not a whole number";
    } else if (column == "speed") {
        if (!toInt(value, port.speedMbps) || port.speedMbps <= 0 || port.speedMbps > kMaxSpeedMbps)
            return "speed \"" + names::printable(value) + "\" is not a speed in Mb/s";
    } else if (passedThrough(column)) {
        if (!names::valid(value, names::Kind::Interface))
            return column + " \"" + names::printable(value) + "\" is not a plain word";
        port.extra[column] = value;
    }
    return "";
}

// 1-based line and column of byte `offset` in `text`.
std::pair<size_t, size_t> lineColumn(const std::string& text, size_t offset) {
    size_t line = 1;
    size_t column = 1;
    for (size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return {line, column};
}

}  // namespace

std::variant<std::vector<SkuPort>, SkuError> parsePortConfigIni(const std::string& text,
                                                                const std::string& file) {
    if (text.size() > kMaxFileBytes) return SkuError{file + ": larger than 1 MiB"};
    std::vector<std::string> columns = defaultColumns();
    bool sawHeader = false;
    bool sawData = false;
    std::vector<SkuPort> ports;
    std::set<int> usedLanes;
    std::set<std::string> usedNames;
    std::istringstream in(text);
    size_t lineNo = 0;
    for (std::string line; std::getline(in, line);) {
        ++lineNo;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.size() > kMaxLineBytes) return SkuError{at(file, lineNo, 1) + "line too long"};
        for (size_t i = 0; i < line.size(); ++i) {
            auto c = static_cast<unsigned char>(line[i]);
            if (c < 0x20 && c != '\t')
                return SkuError{at(file, lineNo, i + 1) + "control character in the file"};
        }
        auto first = line.find_first_not_of(" \t");
        if (first == std::string::npos) continue;
        if (line[first] == '#') {
            // The first comment naming "name" is the header (SONiC's rule); others are prose.
            auto t = tokens(line.substr(first + 1));
            if (sawHeader || sawData || t.empty() || t.front().text != "name") continue;
            columns.clear();
            std::set<std::string> seen;
            for (const auto& tok : t) {
                if (!seen.insert(tok.text).second) {
                    return SkuError{at(file, lineNo, first + 1 + tok.column) + "column \"" +
                                    names::printable(tok.text) + "\" twice"};
                }
                columns.push_back(tok.text);
            }
            if (seen.count("lanes") == 0)
                return SkuError{at(file, lineNo, 1) + "the header has no lanes column"};
            sawHeader = true;
            continue;
        }
        sawData = true;
        auto t = tokens(line);
        if (t.size() < 2)
            return SkuError{at(file, lineNo, t.front().column) + "a port needs a name and lanes"};
        if (t.size() > columns.size()) {
            return SkuError{at(file, lineNo, t[columns.size()].column) + "more fields than the " +
                            std::to_string(columns.size()) + " columns of the header"};
        }
        SkuPort port;
        for (size_t i = 0; i < t.size(); ++i) {
            auto why = setField(port, columns[i], t[i].text, usedLanes);
            if (!why.empty()) return SkuError{at(file, lineNo, t[i].column) + why};
        }
        if (port.name.empty() || port.lanes.empty())
            return SkuError{at(file, lineNo, 1) + "a port needs a name and lanes"};
        // Rows group into cages by index: one row without it would silently regroup
        // every other row (each its own cage), so every row has one or none does.
        const bool hasIndex = port.index >= 0;
        if (!ports.empty() && (ports.front().index >= 0) != hasIndex) {
            return SkuError{at(file, lineNo, 1) + "port " + port.name +
                            (hasIndex ? " has an index, though the first port has none"
                                      : " has no index, though the first port has one")};
        }
        if (!usedNames.insert(port.name).second)
            return SkuError{at(file, lineNo, t[0].column) + "port " + port.name + " twice"};
        if (ports.size() == kMaxPorts)
            return SkuError{at(file, lineNo, 1) + "more than 1024 ports"};
        ports.push_back(std::move(port));
    }
    if (ports.empty()) return SkuError{file + ": no ports"};
    return ports;
}

std::variant<BreakoutMode, std::string> parseBreakoutMode(const std::string& text) {
    // <count>x<speed>G, optionally [<speed>G,...], optionally (<lanes>): platform.json's
    // keys. SONiC also has mixed modes ("1x400G(4)+2x200G(4)"); a plan never needs them.
    const std::string bad =
        "\"" + names::printable(text) + "\" is not a breakout mode like 4x200G or 1x800G[400G]";
    if (text.size() > 64) return bad;
    auto x = text.find('x');
    auto g = text.find('G');
    BreakoutMode mode;
    mode.text = text;
    if (x == std::string::npos || g == std::string::npos || g < x ||
        !toInt(text.substr(0, x), mode.count) || mode.count < 1 || mode.count > 8 ||
        !toInt(text.substr(x + 1, g - x - 1), mode.speedGbps) || mode.speedGbps <= 0 ||
        mode.speedGbps > 3200)
        return bad;
    std::string rest = text.substr(g + 1);
    if (auto open = rest.find('('); open != std::string::npos) {
        if (rest.back() != ')' ||
            !toInt(rest.substr(open + 1, rest.size() - open - 2), mode.lanes) || mode.lanes < 1 ||
            mode.lanes > 16)
            return bad;
        rest.resize(open);
    }
    if (rest.empty()) return mode;
    if (rest.size() < 3 || rest.front() != '[' || rest.back() != ']') return bad;
    std::stringstream in(rest.substr(1, rest.size() - 2));
    for (std::string part; std::getline(in, part, ',');) {
        int alt = 0;
        if (part.size() < 2 || part.back() != 'G' || !toInt(part.substr(0, part.size() - 1), alt) ||
            alt <= 0 || alt > 3200)
            return bad;
        mode.altSpeedsGbps.push_back(alt);
    }
    if (mode.altSpeedsGbps.empty()) return bad;
    return mode;
}

std::variant<nlohmann::json, SkuError> parseSkuJson(const std::string& text,
                                                    const std::string& file) {
    if (text.size() > kMaxFileBytes) return SkuError{file + ": larger than 1 MiB"};
    try {
        return json::parse(text);
    } catch (const json::parse_error& e) {
        auto [line, column] = lineColumn(text, e.byte > 0 ? e.byte - 1 : 0);
        return SkuError{at(file, line, column) + "not JSON"};
    } catch (const json::exception& e) {
        // A number past double's range (out_of_range 406), deep nesting: found by
        // fuzz/sonic_sku_fuzz. Refused, never a crash.
        return SkuError{file + ": not usable JSON (" + std::string(e.what()) + ")"};
    }
}

bool BreakoutMode::runsAt(int gbps) const {
    return gbps == speedGbps ||
           std::find(altSpeedsGbps.begin(), altSpeedsGbps.end(), gbps) != altSpeedsGbps.end();
}

std::variant<std::map<std::string, BreakoutMode>, SkuError> parseHwskuJson(
    const std::string& text, const std::string& file, const std::vector<SkuPort>& ports) {
    auto parsed = parseSkuJson(text, file);
    if (auto* e = std::get_if<SkuError>(&parsed)) return *e;
    const json& j = std::get<json>(parsed);
    if (!j.is_object() || !j.contains("interfaces") || !j["interfaces"].is_object())
        return SkuError{file + ": interfaces: missing, or not an object"};
    std::set<std::string> known;
    for (const auto& p : ports) known.insert(p.name);
    std::map<std::string, BreakoutMode> modes;
    for (const auto& [name, row] : j["interfaces"].items()) {
        const std::string key = "interfaces." + names::printable(name);
        if (known.count(name) == 0)
            return SkuError{file + ": " + key + ": no such port in port_config.ini"};
        if (!row.is_object()) return SkuError{file + ": " + key + ": not an object"};
        if (!row.contains("default_brkout_mode")) continue;
        const auto& m = row["default_brkout_mode"];
        if (!m.is_string())
            return SkuError{file + ": " + key + ".default_brkout_mode: not a string"};
        auto mode = parseBreakoutMode(m.get<std::string>());
        if (auto* why = std::get_if<std::string>(&mode))
            return SkuError{file + ": " + key + ".default_brkout_mode: " + *why};
        modes[name] = std::get<BreakoutMode>(mode);
    }
    return modes;
}

std::variant<Sku, SkuError> skuFromTexts(const std::string& name, const std::string& portConfigIni,
                                         const std::string& iniFile, const std::string& hwskuJson,
                                         const std::string& jsonFile) {
    SkuTexts t;
    t.name = name;
    t.portConfigIni = portConfigIni;
    t.iniFile = iniFile;
    t.hwskuJson = hwskuJson;
    t.jsonFile = jsonFile;
    return skuFromFiles(t);
}

std::optional<SkuError> checkDefaultModes(const Sku& sku, const std::string& jsonFile) {
    // A default mode names a cage by its first port and must be the cage the ini describes.
    for (const auto& cage : physicalPorts(sku)) {
        for (const auto* row : cage.rows) {
            auto m = sku.defaultModes.find(row->name);
            if (m == sku.defaultModes.end()) continue;
            const std::string key = jsonFile + ": interfaces." + row->name +
                                    ".default_brkout_mode \"" + m->second.text + "\": ";
            if (row != cage.rows.front())
                return SkuError{key + "not the first port of its cage (" + cage.base().name + ")"};
            const long total = static_cast<long>(m->second.count) * m->second.speedGbps * 1000;
            if (m->second.count != static_cast<int>(cage.rows.size()) ||
                (cage.speedMbps() > 0 && total != cage.speedMbps())) {
                return SkuError{key + "port_config.ini has " + std::to_string(cage.rows.size()) +
                                " port(s), " + std::to_string(cage.speedMbps() / 1000) +
                                "G in all, on index " + std::to_string(cage.index)};
            }
        }
    }
    return std::nullopt;
}

}  // namespace twinrail::plan
