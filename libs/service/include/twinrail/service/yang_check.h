// --check-config's second step, after the daemon's own parse: the daemon's CONFIG_DB
// tables against the YANG modules, as SONiC's `config reload` would check them.
//
// When it runs, and why it may not: on a SONiC switch SONiC's models are in
// /usr/local/yang-models and twinrail's package installs its own in
// /usr/share/twinrail/yang. twinrail's modules import SONiC's (sonic-port, sonic-vlan),
// so on a plain Linux install they cannot load, and the YANG check cannot run there:
// the daemon's own parse is then the whole check (it is the one that matters off
// SONiC: no `config reload` will read the file). So the check is skipped, with a printed
// notice saying why, when no YANG directory exists or when none of the daemon's tables
// in the document has a loaded model. An explicit --yang-dir that does not exist is an
// error. A loaded module that lacks one of the daemon's tables is an error too (the
// tables without a model, in sonic-utilities' words).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace twinrail::service {

struct YangCheckOutcome {
    std::optional<std::string> error;  // the lines that make --check-config fail (78)
    std::vector<std::string> notices;  // why it was skipped, what it could not check
};

// `yangDirs` empty: the default directories (SONiC's when it exists, then twinrail's).
YangCheckOutcome checkConfigYang(const std::vector<std::string>& tables,
                                 const std::vector<std::string>& yangDirs,
                                 const nlohmann::json& doc);

}  // namespace twinrail::service
