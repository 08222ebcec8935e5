// Reading a SONiC HWSKU directory (port_config.ini; optionally hwsku.json,
// pg_profile_lookup.ini, and platform.json beside them or in the platform directory above)
// for `twinrail-plan --nos sonic`, the lab and `twinrail sonic-apply`, and where a catalog
// model's own HWSKU lives.
#pragma once

#include <filesystem>
#include <string>
#include <variant>

#include "twinrail/plan/sonic_sku.h"

namespace twinrail::plantool {

struct SkuLoadError {
    std::string message;  // names the file (and line/column or key)
    int exitCode = 0;     // 66 a file cannot be read, 65 its content is refused
};

// The directory's name is the SKU's name (SONiC's convention).
std::variant<plan::Sku, SkuLoadError> loadSkuDir(const std::filesystem::path& dir);

// The HWSKU shipped for a catalog model: <share>/hwsku/<model> when installed, else the
// source tree's libs/plan/hwsku/<model>; empty when neither exists.
std::filesystem::path defaultSkuDir(const std::string& model);

}  // namespace twinrail::plantool
