// What `twinrail-plan --out DIR` writes, as a list of files, before anything is written.
// Every path is built from plan names only after names::check(..., Kind::Node) and is then
// verified to resolve under DIR (symlinks included), so a plan cannot make the planner
// write outside its output folder, whatever the plan file says.
#pragma once

#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include "twinrail/plan/plan.h"
#include "twinrail/plan/sonic_sku.h"
#include "twinrail/plan/sonic_target.h"

namespace twinrail::plantool {

// One path component: a plan name (field says where it came from, e.g.
// "plan.switches[2].name"), or a fixed part of the layout (field empty).
struct PathPart {
    std::string value;
    std::string field;
};

// dir / parts..., or why not: the field and the printable name that failed the grammar,
// or the path that would leave dir.
std::variant<std::filesystem::path, std::string> outputPath(const std::filesystem::path& dir,
                                                            const std::vector<PathPart>& parts);

struct OutFile {
    std::filesystem::path path;
    std::string text;
};

// `--nos sonic`: each switch's config_db.overlay.json and split-unified frr.conf (and
// config_db.patch.json with `patch`, against the SKU's factory-default config) instead of
// the Linux frr.conf and config_db.json.
struct SonicTarget {
    plan::Sku leafSku;
    plan::Sku spineSku;
    plan::SonicOptions options;
};

// Every file of the plan's output folder, or the first refusal (nothing is written then).
// Without `sonic`, the Linux target (today's files, byte for byte).
std::variant<std::vector<OutFile>, std::string> planFiles(const plan::Plan& p,
                                                          const std::filesystem::path& dir,
                                                          const SonicTarget* sonic = nullptr);

}  // namespace twinrail::plantool
