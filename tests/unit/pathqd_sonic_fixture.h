// What both pathqd-on-SONiC test files read: the fixture rows (tests/fixtures/pathqd-sonic,
// sonic-db-dump's shape, or a mock table).
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "sonic_weights.h"
#include "weight_audit.h"

namespace twinrail::pathqd {
namespace {

const std::string kFixtures = TWINRAIL_PATHQD_SONIC_FIXTURES;

// A sonic-db-dump file (key -> {"type": "hash", "value": {...}}) or a mock table
// (key -> {...}) as rows.
inline sonic_weights::Rows loadDump(const std::string& path) {
    std::ifstream in(path);
    auto doc = nlohmann::json::parse(in, nullptr, false);
    sonic_weights::Rows rows;
    if (!doc.is_object()) return rows;
    for (const auto& [key, v] : doc.items()) {
        const auto& fields = v.contains("value") && v.contains("type") ? v["value"] : v;
        if (!fields.is_object()) continue;
        for (const auto& [f, val] : fields.items())
            if (val.is_string()) rows[key][f] = val.get<std::string>();
    }
    return rows;
}

// Weights on the fixture's two ports.
inline PortWeights w(unsigned a, unsigned b) {
    return {{"Ethernet0", a}, {"Ethernet4", b}};
}

}  // namespace
}  // namespace twinrail::pathqd
