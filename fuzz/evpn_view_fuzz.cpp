// hostrouted's reading of FRR's EVPN view (evpn_view.h) and the attachment rule on it.
// Input: the three JSON answers (arp-cache, mac, es), separated by NUL bytes.
// Checks: nothing throws; a rejection names the view; in an accepted view every neighbor
// is keyed by its own address and a MAC or segment it points to is its own; the rule never
// routes a host FRR has behind a remote VTEP, nor one on a segment that is down here.
#include <string>
#include <variant>

#include "fuzz_util.h"
#include "hostrouted/es_attachment.h"
#include "hostrouted/evpn_view.h"

using twinrail::fuzz::check;
namespace hr = twinrail::hostrouted;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string in(reinterpret_cast<const char*>(data), size);
    std::string part[3];
    size_t at = 0;
    for (int i = 0; i < 3; ++i) {
        size_t end = i == 2 ? in.size() : in.find('\0', at);
        if (end == std::string::npos) end = in.size();
        part[i] = at <= in.size() ? in.substr(at, end - at) : "";
        at = end + 1;
    }
    auto parsed = hr::parseEvpnView(part[0], part[1], part[2]);
    if (const auto* e = std::get_if<hr::EvpnParseError>(&parsed)) {
        check(e->message.find("show evpn") != std::string::npos ||
                  e->message.find("EVPN view") != std::string::npos,
              "an error that names no view");
        return 0;
    }
    const auto& v = std::get<hr::EvpnView>(parsed);
    for (const auto& [ip, n] : v.neighbors) {
        check(n.ip == ip, "a neighbor keyed by another address");
        const hr::EvpnMac* m = v.macOf(n);
        check(m == nullptr || (n.mac && m->mac == *n.mac && m->vni == n.vni),
              "a neighbor's MAC entry is another's");
        const hr::EvpnSegment* es = m != nullptr ? v.segmentOf(*m) : nullptr;
        check(es == nullptr || es->esi == m->esi, "a MAC's segment is another's");
        for (bool present : {false, true}) {
            hr::KernelNeighborFacts k{present, present, false, false, false};
            auto d = hr::decideAttachment(ip, k, &v, {});
            check(!(d.route && n.remote), "a remote VTEP's host is routed");
            check(!(d.route && es != nullptr && !es->operUp), "a host on a down segment is routed");
            check(!d.why.empty(), "a decision without a reason");
        }
    }
    return 0;
}
