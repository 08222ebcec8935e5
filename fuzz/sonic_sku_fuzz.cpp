// A SONiC HWSKU as the planner reads it from an operator's --hwsku directory:
// port_config.ini, hwsku.json, platform.json and pg_profile_lookup.ini (libs/plan
// sonic_sku.h). The input is the files in that order, split at NUL bytes (fewer parts: the
// later files are absent). Checks: no UB or crash on any text, and what is accepted holds
// together: unique EthernetN names, every cage's rows sharing its index, each breakout of
// a cage using only that cage's lanes, the lookup's cable lengths sorted and distinct, and
// the factory-default config_db.json having a PORT row per SKU port.
#include <set>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "twinrail/plan/sonic_sku.h"

using twinrail::fuzz::check;
namespace plan = twinrail::plan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string input(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> parts;
    for (size_t at = 0; parts.size() < 4;) {
        auto nul = input.find('\0', at);
        parts.push_back(input.substr(at, nul == std::string::npos ? std::string::npos : nul - at));
        if (nul == std::string::npos) break;
        at = nul + 1;
    }
    parts.resize(4);
    plan::SkuTexts t{"fuzz",
                     parts[0],
                     "port_config.ini",
                     parts[1],
                     "hwsku.json",
                     parts[2],
                     parts[2].empty() ? "" : "platform.json",
                     parts[3],
                     parts[3].empty() ? "" : "pg_profile_lookup.ini"};
    auto parsed = plan::skuFromFiles(t);
    if (const auto* err = std::get_if<plan::SkuError>(&parsed)) {
        check(!err->message.empty(), "a refusal without a message");
        return 0;
    }
    const auto& sku = std::get<plan::Sku>(parsed);
    std::set<std::string> names;
    for (const auto& p : sku.ports) check(names.insert(p.name).second, "two ports of one name");
    size_t rows = 0;
    for (const auto& cage : plan::physicalPorts(sku)) {
        check(!cage.rows.empty(), "a cage without rows");
        rows += cage.rows.size();
        std::set<int> lanes;
        for (const auto* r : cage.rows) {
            if (r->index >= 0) check(r->index == cage.index, "a row in another cage");
            lanes.insert(r->lanes.begin(), r->lanes.end());
        }
        for (int count : {1, 2, 4, 8}) {
            plan::BreakoutMode mode;
            mode.count = count;
            mode.speedGbps = static_cast<int>(cage.speedMbps() / 1000 / count);
            auto split = plan::breakoutPorts(cage, {mode, mode.speedGbps});
            if (const auto* ports = std::get_if<std::vector<plan::SkuPort>>(&split)) {
                for (const auto& p : *ports)
                    for (int lane : p.lanes) check(lanes.count(lane) == 1, "a lane not the cage's");
            }
        }
    }
    check(rows == sku.ports.size(), "cages do not hold every port");
    for (const auto& [speed, cables] : sku.pgLookup.cablesBySpeed) {
        check(speed > 0 && !cables.empty(), "a lookup speed without cables");
        for (size_t i = 1; i < cables.size(); ++i)
            check(cables[i - 1] < cables[i], "lookup cables not sorted and distinct");
    }
    auto base = plan::sonicBaseConfigDb(sku);
    check(base["PORT"].size() == sku.ports.size(), "the base lacks a port");
    return 0;
}
