// planesteer's ICMP echo reply parser and the sampled-header reader: what any host on the
// link can send to a NIC's port. Checks: no read outside the packet, no UB, a reply only
// from a packet long enough to hold IPv4 + ICMP, a reply's fields as the bytes say, and a
// request built from a parsed reply's addresses parses as a request, not a reply.
#include <cstring>

#include "echo_frame.h"
#include "fuzz_util.h"

using twinrail::fuzz::check;
namespace ps = twinrail::planesteer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto r = ps::parseEchoReply(data, size);
    if (r) {
        check(size >= 28, "a reply shorter than IPv4 + ICMP");
        check(r->from.isV4() && r->to.isV4(), "a reply that is not IPv4");
        check(std::memcmp(r->from.data(), data + 12, 4) == 0, "source not the header's");
        size_t ihl = static_cast<size_t>(data[0] & 0x0f) * 4;
        check(r->id == (data[ihl + 4] << 8 | data[ihl + 5]), "identifier not the packet's");
        auto req = ps::buildEchoRequest(r->to, r->from, r->id, r->seq);
        check(!ps::parseEchoReply(req.data(), req.size()), "a request read as a reply");
    }
    auto dst = ps::ipv4Destination(data, size);
    check(!dst || size >= 20, "a destination from less than a header");
    return 0;
}
