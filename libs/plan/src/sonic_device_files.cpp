// The platform's files next to a HWSKU: platform.json (the breakout modes dynamic port
// breakout accepts) and pg_profile_lookup.ini (the lossless profiles buffermgrd can build).
// Hostile input, as the rest of the SKU: every error names the file and where.
#include <algorithm>
#include <charconv>
#include <sstream>

#include "sonic_sku_internal.h"
#include "twinrail/common/names.h"

namespace twinrail::plan {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxLookupLines = 4096;
constexpr long kMaxSpeedMbps = 3200000;
constexpr int kMaxCableM = 100000;

bool digitsTo(std::string_view s, long& out) {
    if (s.empty() || s.size() > 9) return false;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

// buffermgrd's reader: whitespace-separated `speed cable size xon xoff threshold
// [xon_offset]`, '#' lines skipped. The cable is `<metres>m`.
std::optional<std::string> lookupLine(const std::string& line, PgProfileLookup& out) {
    std::istringstream in(line);
    std::string speed, cable, size;
    in >> speed >> cable >> size;
    long mbps = 0;
    long metres = 0;
    if (!digitsTo(speed, mbps) || mbps <= 0 || mbps > kMaxSpeedMbps)
        return "speed \"" + names::printable(speed) + "\" is not a speed in Mb/s";
    if (cable.size() < 2 || cable.back() != 'm' ||
        !digitsTo(std::string_view(cable).substr(0, cable.size() - 1), metres) || metres <= 0 ||
        metres > kMaxCableM)
        return "cable \"" + names::printable(cable) + "\" is not a length like 40m";
    if (size.empty()) return "no profile sizes after the cable length";
    auto& cables = out.cablesBySpeed[mbps];
    auto at = std::lower_bound(cables.begin(), cables.end(), static_cast<int>(metres));
    if (at == cables.end() || *at != metres) cables.insert(at, static_cast<int>(metres));
    return std::nullopt;
}

}  // namespace

std::variant<std::map<std::string, std::vector<BreakoutMode>>, SkuError> parsePlatformJson(
    const std::string& text, const std::string& file) {
    auto parsed = parseSkuJson(text, file);
    if (auto* e = std::get_if<SkuError>(&parsed)) return *e;
    const json& j = std::get<json>(parsed);
    if (!j.is_object() || !j.contains("interfaces") || !j["interfaces"].is_object())
        return SkuError{file + ": interfaces: missing, or not an object"};
    std::map<std::string, std::vector<BreakoutMode>> out;
    for (const auto& [port, row] : j["interfaces"].items()) {
        const std::string key = "interfaces." + names::printable(port, 40);
        if (!names::valid(port, names::Kind::Interface))
            return SkuError{file + ": " + key + ": not a port name"};
        if (!row.is_object()) return SkuError{file + ": " + key + ": not an object"};
        auto modes = row.find("breakout_modes");
        if (modes == row.end()) continue;
        if (!modes->is_object())
            return SkuError{file + ": " + key + ".breakout_modes: not an object"};
        for (const auto& [name, aliases] : modes->items()) {
            auto mode = parseBreakoutMode(name);
            if (auto* m = std::get_if<BreakoutMode>(&mode)) out[port].push_back(*m);
        }
    }
    return out;
}

std::variant<PgProfileLookup, SkuError> parsePgProfileLookup(const std::string& text,
                                                             const std::string& file) {
    PgProfileLookup out;
    out.present = true;
    out.file = file;
    if (text.size() > (size_t{1} << 20)) return SkuError{file + ": larger than 1 MiB"};
    std::istringstream in(text);
    size_t lineNo = 0;
    for (std::string line; std::getline(in, line);) {
        if (++lineNo > kMaxLookupLines) return SkuError{file + ": more than 4096 lines"};
        if (!line.empty() && line.back() == '\r') line.pop_back();
        auto first = line.find_first_not_of(" \t");
        // buffermgrd skips a line that is empty or starts with '#' at column 1; an indented
        // '#' would be read as a speed, and refused here.
        if (first == std::string::npos || line[0] == '#') continue;
        if (auto why = lookupLine(line, out))
            return SkuError{file + ":" + std::to_string(lineNo) + ": " + *why};
    }
    return out;
}

std::variant<Sku, SkuError> skuFromFiles(const SkuTexts& t) {
    Sku sku;
    sku.name = t.name;
    auto ports = parsePortConfigIni(t.portConfigIni, t.iniFile);
    if (auto* e = std::get_if<SkuError>(&ports)) return *e;
    sku.ports = std::move(std::get<std::vector<SkuPort>>(ports));
    if (!t.hwskuJson.empty()) {
        auto modes = parseHwskuJson(t.hwskuJson, t.jsonFile, sku.ports);
        if (auto* e = std::get_if<SkuError>(&modes)) return *e;
        sku.defaultModes = std::move(std::get<std::map<std::string, BreakoutMode>>(modes));
        if (auto e = checkDefaultModes(sku, t.jsonFile)) return *e;
    }
    if (!t.platformJson.empty()) {
        auto modes = parsePlatformJson(t.platformJson, t.platformFile);
        if (auto* e = std::get_if<SkuError>(&modes)) return *e;
        sku.platformModes = std::move(std::get<0>(modes));
        sku.platformFile = t.platformFile;
        // A cage's default mode is what BREAKOUT_CFG starts with, and DPB compares the
        // target against it: it must be one of the platform's own keys.
        for (const auto& [port, defaultMode] : sku.defaultModes) {
            const BreakoutMode& mode = defaultMode;  // captured below (clang 14)
            auto offered = sku.platformModes.find(port);
            if (offered == sku.platformModes.end()) continue;
            const bool known =
                std::any_of(offered->second.begin(), offered->second.end(),
                            [&mode](const BreakoutMode& m) { return m.text == mode.text; });
            if (!known) {
                return SkuError{t.jsonFile + ": interfaces." + port + ".default_brkout_mode \"" +
                                mode.text + "\" is not one of " + t.platformFile +
                                "'s breakout_modes for " + port};
            }
        }
    }
    if (!t.pgLookupFile.empty()) {
        auto lookup = parsePgProfileLookup(t.pgLookup, t.pgLookupFile);
        if (auto* e = std::get_if<SkuError>(&lookup)) return *e;
        sku.pgLookup = std::move(std::get<PgProfileLookup>(lookup));
    }
    return sku;
}

}  // namespace twinrail::plan
