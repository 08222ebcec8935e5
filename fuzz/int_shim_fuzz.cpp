// parseIntShim(): an INT v2.1 data packet's TCP/UDP payload (shim, INT-MD header and
// stack, or INT-MX header), as an INT-MD sink or a report's truncated packet carries it.
// Checks: no read outside the payload, no UB, an error's offset inside the payload, the
// payload offset within it and past the shim, a hop takes at least 4 bytes, only the
// shim types the parser claims to accept, and determinism.
#include <span>
#include <variant>

#include "fuzz_util.h"
#include "twinrail/telemetry/int_shim.h"

using twinrail::fuzz::check;
namespace tl = twinrail::telemetry;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::span<const uint8_t> payload(data, size);
    auto result = tl::parseIntShim(payload);
    if (const auto* err = std::get_if<tl::ParseError>(&result)) {
        check(err->offset <= size, "error offset outside the payload");
        check(!err->what.empty(), "an error without a reason");
    } else {
        const auto& p = std::get<tl::IntShimPacket>(result);
        check(p.type == tl::kShimTypeMd || p.type == tl::kShimTypeMx, "an unknown shim type");
        check(p.version == tl::kIntVersion, "a header of another INT version");
        check(p.payloadOffset >= 4 + tl::kIntHeaderBytes && p.payloadOffset <= size,
              "payload offset outside the packet");
        check(p.payloadOffset == 4 + size_t{p.lengthWords} * 4,
              "payload offset is not the shim length");
        check(p.hops.size() <= size / 4, "more hops than the payload can hold");
        check(p.type == tl::kShimTypeMd || p.hops.empty(), "INT-MX with a hop stack");
    }
    check(tl::parseIntShim(payload).index() == result.index(), "parse not deterministic");
    return 0;
}
