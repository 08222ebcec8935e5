// FRR's `show running-config` as hostrouted and pathqd read it through vtysh
// (RunningConfig::parse). Checks: no UB or overflow on any text, and the queries agree
// with each other: every line linesUnder() lists under a context is has() there, the BGP
// header is a default-VRF `router bgp`, and the vtysh arguments built from it are sane.
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "twinrail/frr/running_config.h"

using twinrail::fuzz::check;
namespace frr = twinrail::frr;

namespace {

void checkContext(const frr::RunningConfig& rc, const std::vector<std::string>& context) {
    for (const auto& line : rc.linesUnder(context, "")) {
        check(!line.empty(), "an empty line listed");
        check(line.find('\n') == std::string::npos, "a listed line spans lines");
        check(rc.has(frr::ConfigLine{context, line}), "a listed line is not has()");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    auto rc = frr::RunningConfig::parse(text);
    checkContext(rc, {});
    auto header = rc.bgpRouterHeader();
    if (header) {
        check(header->rfind("router bgp ", 0) == 0, "BGP header is not router bgp");
        check(header->find(" vrf ") == std::string::npos, "BGP header is a VRF instance");
        check(rc.has(frr::ConfigLine{{}, *header}), "BGP header is not a top-level line");
    }
    checkContext(rc, {"router bgp"});
    checkContext(rc, {"router bgp", "address-family ipv4 unicast"});
    // What the daemons ask for: a missing line gets args only when its context exists.
    std::vector<frr::ConfigLine> wanted = {
        {{}, "ip import-table 10"},
        {{"router bgp", "address-family ipv4 unicast"}, "redistribute table 10"},
        {{"route-map TWINRAIL-HOSTROUTES-V6 permit 10"}, "match ipv6 address prefix-list X"}};
    auto missing = frr::missingLines(rc, wanted);
    check(missing.size() <= wanted.size(), "more missing lines than asked for");
    auto args = frr::vtyshBatchArgs(rc, missing);
    check(args.size() % 2 == 0, "vtysh arguments are not -c pairs");
    for (size_t i = 0; i < args.size(); i += 2) check(args[i] == "-c", "an argument without -c");
    if (!header) {
        check(frr::vtyshAddArgs(rc, wanted[1]).empty(), "BGP line without a BGP instance");
    }
    return 0;
}
