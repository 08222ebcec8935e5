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

std::variant<plan::Sku, SkuLoadError> loadSkuDir(const fs::path& dir) {
    const fs::path ini = dir / "port_config.ini";
    const fs::path hwsku = dir / "hwsku.json";
    auto iniText = readText(ini);
    if (!iniText) {
        return SkuLoadError{names::printable(ini.string(), 200) + ": cannot read it",
                            exitcode::kNoInput};
    }
    std::string jsonText;
    std::error_code ec;
    if (fs::exists(hwsku, ec)) {
        auto t = readText(hwsku);
        if (!t) {
            return SkuLoadError{names::printable(hwsku.string(), 200) + ": cannot read it",
                                exitcode::kNoInput};
        }
        jsonText = t->empty() ? " " : *t;  // an empty file is refused as JSON, not skipped
    }
    std::string name = fs::path(dir).lexically_normal().filename().string();
    if (name.empty()) name = fs::path(dir).lexically_normal().parent_path().filename().string();
    auto sku =
        plan::skuFromTexts(names::printable(name), *iniText, names::printable(ini.string(), 200),
                           jsonText, names::printable(hwsku.string(), 200));
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
