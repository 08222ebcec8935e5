// fnn::parse() and NoticeGuard::admit(): a fast network notification as a receiver's UDP
// socket hands it up (proto/fnn_wire.md). Checks: an error's offset inside the datagram
// (or at its end) with a reason; an accepted datagram has exactly one spelling, so the
// notice encoded again is byte for byte what was parsed (the MAC aside); the guard never
// admits a datagram whose MAC is not valid under its key, and counts every verdict.
#include <span>
#include <variant>

#include "fuzz_util.h"
#include "twinrail/fnn/guard.h"
#include "twinrail/fnn/notice.h"

using twinrail::fuzz::check;
namespace fnn = twinrail::fnn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const fnn::Key kKey =
        *fnn::parseKeyHex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
    std::span<const uint8_t> datagram(data, size);
    auto parsed = fnn::parse(datagram);
    if (const auto* err = std::get_if<fnn::ParseError>(&parsed)) {
        check(err->offset <= size || err->offset == fnn::kMaxBytes, "error offset outside");
        check(!err->what.empty(), "an error without a reason");
    } else {
        const auto& p = std::get<fnn::Parsed>(parsed);
        check(p.macOffset + fnn::kMacBytes == size, "the MAC is not the datagram's end");
        check(p.notice.subjects.size() <= fnn::kMaxSubjects, "too many subjects");
        auto again = fnn::encode(p.notice, kKey);
        check(again.size() == size, "encoded again to another length");
        check(std::equal(again.begin(), again.begin() + static_cast<long>(p.macOffset), data),
              "a second spelling of the same notice");
        check(!fnn::describe(p.notice).empty(), "an empty description");
    }
    fnn::GuardSettings g;
    g.plane = 1;
    g.keys = {{0, kKey}};
    g.senders = {*twinrail::IpAddr::parse("10.254.1.1")};
    fnn::NoticeGuard guard(g);
    auto v = guard.admit(datagram, *twinrail::IpAddr::parse("10.254.1.1"), 0,
                         fnn::MonoTime{} + std::chrono::seconds(1));
    if (std::holds_alternative<fnn::Notice>(v)) {
        const auto& p = std::get<fnn::Parsed>(parsed);
        check(fnn::macValid(datagram, p.macOffset, kKey), "admitted without a valid MAC");
    }
    const auto& c = guard.counters();
    uint64_t total = c.accepted;
    for (auto n : c.refused) total += n;
    check(total == 1, "a verdict not counted once");
    return 0;
}
