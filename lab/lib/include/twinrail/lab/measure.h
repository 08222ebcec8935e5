// Interruption measurement between lab NICs: UDP flows in both directions while a switch
// or port fails (or comes back), run by this tool inside the NICs' namespaces.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "twinrail/lab/plan_lab.h"

namespace twinrail::lab {

struct FlowPair {
    std::string from;  // NIC node, e.g. srv1-nic2
    std::string to;
};

// Starts flows for every pair, runs `event` after 2 s, keeps the flows for `seconds` in
// all, and returns one receiver report per pair (see runFlowReceiver) plus "pair".
nlohmann::json measureDuring(const std::string& lab, const LabBinaries& bins,
                             const std::vector<FlowPair>& pairs, const std::function<void()>& event,
                             int seconds);

// One line per pair, for people.
std::string describeMeasurement(const nlohmann::json& reports);

}  // namespace twinrail::lab
