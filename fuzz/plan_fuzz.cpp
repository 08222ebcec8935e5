// The plan file reader (twinrail-lab up --plan, twinrail-plan --from) on any JSON
// document. Checks: nothing throws or overflows, a rejection says why, and an accepted
// plan written back with toJson() reads back as the same plan and the same JSON.
#include <nlohmann/json.hpp>
#include <variant>

#include "fuzz_util.h"
#include "twinrail/plan/plan.h"

using nlohmann::json;
using twinrail::fuzz::check;
namespace plan = twinrail::plan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    json doc = json::parse(data, data + size, nullptr, false);
    if (doc.is_discarded()) return 0;
    auto read = plan::planFromJson(doc);
    if (const auto* err = std::get_if<plan::SizingError>(&read)) {
        check(!err->message.empty(), "a plan rejected without a reason");
        return 0;
    }
    const auto& p = std::get<plan::Plan>(read);
    json written = plan::toJson(p);
    auto again = plan::planFromJson(written);
    const auto* p2 = std::get_if<plan::Plan>(&again);
    check(p2 != nullptr, "a plan written back from an accepted one is rejected");
    check(*p2 == p, "a plan written back reads differently");
    check(plan::toJson(*p2) == written, "toJson is not stable");
    return 0;
}
