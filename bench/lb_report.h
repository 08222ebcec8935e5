// The load-balancing benchmark's outputs beside its JSON: a markdown table of every mode
// (BASE.md, what docs/load-balancing.md shows) and gnuplot plots: balance per mode and
// pattern (BASE.png), reordering per mode (BASE_reorder.png), and the flowlet idle-time
// sweep, balance against reordering (BASE_sweep.png).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace twinrail::bench::lb {

void writeReport(const nlohmann::json& results, const std::string& base);

}  // namespace twinrail::bench::lb
