#include "sku_dir.h"

#include <fstream>
#include <optional>
#include <sstream>

#include "twinrail/common/names.h"
#include "twinrail/common/sysexits.h"

namespace twinrail::plantool {
namespace fs = std::filesystem;

namespace {

constexpr std::streamsize kMaxBytes = 1 << 20;

// The file's text, or nothing when it cannot be opened; a file over the limit is read
// only that far (the parser then refuses it by size).
std::optional<std::string> readText(const fs::path& path) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return std::nullopt;
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::string text(static_cast<size_t>(kMaxBytes) + 1, '\0');
    in.read(text.data(), kMaxBytes + 1);
    text.resize(static_cast<size_t>(in.gcount()));
    return text;
}

}  // namespace

// A file of the SKU directory into `text` (and its name into `file`) when it exists.
std::optional<SkuLoadError> readOptional(const fs::path& path, std::string& text,
                                         std::string& file) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return std::nullopt;
    auto t = readText(path);
    if (!t) {
        return SkuLoadError{names::printable(path.string(), 200) + ": cannot read it",
                            exitcode::kNoInput};
    }
    text = std::move(*t);
    file = names::printable(path.string(), 200);
    return std::nullopt;
}

std::variant<plan::Sku, SkuLoadError> loadSkuDir(const fs::path& dir) {
    const fs::path ini = dir / "port_config.ini";
    plan::SkuTexts t;
    auto iniText = readText(ini);
    if (!iniText) {
        return SkuLoadError{names::printable(ini.string(), 200) + ": cannot read it",
                            exitcode::kNoInput};
    }
    t.portConfigIni = std::move(*iniText);
    t.iniFile = names::printable(ini.string(), 200);
    if (auto e = readOptional(dir / "hwsku.json", t.hwskuJson, t.jsonFile)) return *e;
    if (!t.jsonFile.empty() && t.hwskuJson.empty()) t.hwskuJson = " ";  // refused as JSON
    // platform.json is the platform's: in the SKU directory's parent on a switch
    // (/usr/share/sonic/device/<platform>/), or beside the SKU's files.
    for (const fs::path& at : {dir / "platform.json", dir.parent_path() / "platform.json"}) {
        if (auto e = readOptional(at, t.platformJson, t.platformFile)) return *e;
        if (!t.platformFile.empty()) break;
    }
    if (!t.platformFile.empty() && t.platformJson.empty()) t.platformJson = " ";
    if (auto e = readOptional(dir / "pg_profile_lookup.ini", t.pgLookup, t.pgLookupFile)) return *e;
    std::string name = fs::path(dir).lexically_normal().filename().string();
    if (name.empty()) name = fs::path(dir).lexically_normal().parent_path().filename().string();
    t.name = names::printable(name);
    auto sku = plan::skuFromFiles(t);
    if (auto* e = std::get_if<plan::SkuError>(&sku))
        return SkuLoadError{e->message, exitcode::kDataErr};
    return std::get<plan::Sku>(sku);
}

fs::path defaultSkuDir(const std::string& model) {
    if (!names::valid(model, names::Kind::Node)) return {};
    for (const fs::path& root :
         {fs::path(TWINRAIL_HWSKU_INSTALLED), fs::path(TWINRAIL_HWSKU_SOURCE)}) {
        std::error_code ec;
        if (fs::is_directory(root / model, ec)) return root / model;
    }
    return {};
}

}  // namespace twinrail::plantool
