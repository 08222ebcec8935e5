// pathqd's INT collector parser, parseTelemetryReport(), on any UDP payload: every
// datagram on the collector port reaches it. Checks: no read outside the datagram, no UB,
// and (written against the result's shape, so it compiles against either parser
// generation) an error's offset lies inside the datagram, every report or hop takes at
// least 4 bytes of it, every offset/length pair a report gives lies inside it, and
// parsing is deterministic.
#include <span>
#include <variant>

#include "fuzz_util.h"
#include "twinrail/telemetry/int_report.h"

using twinrail::fuzz::check;
namespace tl = twinrail::telemetry;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::span<const uint8_t> datagram(data, size);
    auto result = tl::parseTelemetryReport(datagram);
    std::visit(
        [size](const auto& v) {
            if constexpr (requires { v.offset; }) {
                check(v.offset <= size, "error offset outside the datagram");
            }
            if constexpr (requires { v.hops.size(); }) {
                check(v.hops.size() <= size / 4, "more hops than the datagram can hold");
            }
            if constexpr (requires { v.reports.size(); }) {
                check(v.reports.size() <= size / 4, "more reports than the datagram can hold");
                for (const auto& r : v.reports) {
                    check(r.offset + 4 <= size, "a report header outside the datagram");
                    check(r.innerOffset <= size && r.innerBytes <= size - r.innerOffset,
                          "inner contents outside the datagram");
                    check(r.dsMetadataOffset <= size &&
                              r.dsMetadataBytes <= size - r.dsMetadataOffset,
                          "domain-specific metadata outside the datagram");
                }
            }
        },
        result);
    check(tl::parseTelemetryReport(datagram).index() == result.index(), "parse not deterministic");
    return 0;
}
