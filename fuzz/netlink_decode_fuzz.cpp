// twinrail::netlink::decode() on rtnetlink messages (links, addresses, neighbors, routes):
// what hostrouted's monitor and route dump feed it straight from the kernel socket.
// Checks: no out-of-bounds read past nlmsg_len, no UB, and the promises of the views
// (a new link has a name, an address prefix fits its family, addresses have a family).
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cstring>
#include <string>
#include <variant>

#include "fuzz_util.h"
#include "twinrail/netlink/parse.h"

namespace nl = twinrail::netlink;
using twinrail::fuzz::check;

namespace {

void checkAddr(const twinrail::IpAddr& ip) {
    check(ip.isV4() || ip.isV6(), "decoded address without a family");
    check(!ip.str().empty(), "address formats");
}

void inspect(const nl::Decoded& d, uint16_t type) {
    if (const auto* l = std::get_if<nl::LinkMsg>(&d)) {
        check(type == RTM_NEWLINK || type == RTM_DELLINK, "link from a non-link message");
        check(l->removed || !l->link.name.empty(), "new link without a name");
        check(l->link.name.find('\0') == std::string::npos, "NUL inside a link name");
        check(!l->link.operUp || l->link.adminUp, "oper up without admin up");
        check(l->link.vlanId <= 4094, "a VLAN id past 4094");
        check(l->link.vlanId == 0 || l->link.kind == "vlan", "a VLAN id on a non-vlan link");
    } else if (const auto* f = std::get_if<nl::FdbMsg>(&d)) {
        check(type == RTM_NEWNEIGH || type == RTM_DELNEIGH, "FDB entry from a non-neigh message");
        check(f->fdb.vlan <= 4094, "an FDB VLAN past 4094");
    } else if (const auto* a = std::get_if<nl::AddressMsg>(&d)) {
        checkAddr(a->addr.prefix.addr);
        check(a->addr.prefix.length >= 0 &&
                  a->addr.prefix.length <= a->addr.prefix.addr.maxPrefixLen(),
              "address prefix longer than its family");
        // Inside the range, contains() must be safe and true for the address itself.
        check(a->addr.prefix.contains(a->addr.prefix.addr), "prefix contains its address");
    } else if (const auto* n = std::get_if<nl::NeighborMsg>(&d)) {
        checkAddr(n->neigh.ip);
        (void)nl::nudStateName(n->neigh.state);
        (void)n->neigh.isExtLearned();
    } else if (const auto* r = std::get_if<nl::RouteMsg>(&d)) {
        check(type == RTM_NEWROUTE, "route from a non-route message");
        checkAddr(r->route.dst);
    } else if (const auto* m = std::get_if<nl::Malformed>(&d)) {
        check(!m->why.empty(), "malformed without a reason");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    twinrail::fuzz::forEachNetlinkMessage({data, size}, [](nlmsghdr* hdr) {
        uint16_t type = hdr->nlmsg_type;
        inspect(nl::decode(hdr), type);
    });
    return 0;
}
