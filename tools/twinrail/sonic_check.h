// `twinrail sonic-check FILE [--base FILE] [--yang-dir DIR]...`: checks a config_db.json
// document (merged onto --base first, when given) against SONiC's YANG modules and
// twinrail's, as `config reload` would on the switch. Exit 0 valid; 65 with every error
// on stdout, one line each ("TABLE|key: field: message"), and the tables without a
// model in sonic-utilities' words; 66 a file or YANG directory cannot be read; 64 usage.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "twinrail/sonic/yang_context.h"

namespace twinrail::cli {

// Where the YANG modules are when no --yang-dir is given: SONiC's on a switch (when the
// directory exists), then twinrail's installed ones.
inline constexpr const char* kSonicYangDir = "/usr/local/yang-models";
inline constexpr const char* kTwinrailYangDir = "/usr/share/twinrail/yang";

int sonicCheckCommand(const std::vector<std::string>& args);

// A JSON file, or an error line: "cannot read" is 66, "not JSON" is 65.
struct Read {
    nlohmann::json doc;
    std::string error;
    int code = 0;
};
Read readJson(const std::string& path);
// SONiC's models (when the directory exists) and twinrail's.
std::vector<std::string> defaultYangDirs();
// Loads each directory (warnings to stderr, prefixed by `tool`); the first one that is not
// a directory, as an error.
std::optional<std::string> loadYangDirs(sonic::YangContext& yang,
                                        const std::vector<std::string>& dirs,
                                        const std::string& tool);

}  // namespace twinrail::cli
