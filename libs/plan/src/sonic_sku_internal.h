// Shared between the HWSKU readers (sonic_sku.cpp, sonic_device_files.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>

#include "twinrail/plan/sonic_sku.h"

namespace twinrail::plan {

// A JSON file of a HWSKU directory: at most 1 MiB, syntax errors with line and column.
std::variant<nlohmann::json, SkuError> parseSkuJson(const std::string& text,
                                                    const std::string& file);
// hwsku.json's default modes against the cages port_config.ini describes.
std::optional<SkuError> checkDefaultModes(const Sku& sku, const std::string& jsonFile);

}  // namespace twinrail::plan
