#include "twinrail/plan/sonic_release.h"

#include <array>

#include "twinrail/common/names.h"

namespace twinrail::plan {
namespace {

struct Entry {
    SonicRelease release;
    const char* name;
    SonicFeatures features;
};

const std::array<Entry, 5> kTable{{
    {SonicRelease::R202405,
     "202405",
     {.frrVersion = "8.5.4",
      .bgpdVtyPort = true,
      .vlanInterfaceMacAddr = false,
      .staticAnycastGateway = false,
      .evpnMultihoming = false,
      .tableDirect = false,
      .backEndSpineRouter = false,
      .localArs = false,
      .randomEcmpHash = true}},
    {SonicRelease::R202411,
     "202411",
     {.frrVersion = "10.0.1",
      .bgpdVtyPort = true,
      .vlanInterfaceMacAddr = false,
      .staticAnycastGateway = false,
      .evpnMultihoming = false,
      .tableDirect = true,
      .backEndSpineRouter = false,
      .localArs = false,
      .randomEcmpHash = true}},
    {SonicRelease::R202505,
     "202505",
     {.frrVersion = "10.3",
      .bgpdVtyPort = false,
      .vlanInterfaceMacAddr = true,
      .staticAnycastGateway = false,
      .evpnMultihoming = false,
      .tableDirect = true,
      .backEndSpineRouter = false,
      .localArs = false,
      .randomEcmpHash = true}},
    {SonicRelease::R202605,
     "202605",
     {.frrVersion = "10.5.4",
      .bgpdVtyPort = false,
      .vlanInterfaceMacAddr = true,
      .staticAnycastGateway = false,
      .evpnMultihoming = false,
      .tableDirect = true,
      .backEndSpineRouter = true,
      .localArs = false,
      .randomEcmpHash = true}},
    {SonicRelease::Master,
     "master",
     {.frrVersion = "10.5.4 or later",
      .bgpdVtyPort = false,
      .vlanInterfaceMacAddr = true,
      .staticAnycastGateway = true,
      .evpnMultihoming = true,
      .tableDirect = true,
      .backEndSpineRouter = true,
      .localArs = false,
      .randomEcmpHash = true}},
}};

const Entry& entry(SonicRelease release) {
    for (const auto& e : kTable)
        if (e.release == release) return e;
    return kTable.front();  // unreachable: every enumerator has a row
}

}  // namespace

const std::vector<SonicRelease>& sonicReleases() {
    static const std::vector<SonicRelease> all = [] {
        std::vector<SonicRelease> out;
        out.reserve(kTable.size());
        for (const auto& e : kTable) out.push_back(e.release);
        return out;
    }();
    return all;
}

std::string sonicReleaseName(SonicRelease release) {
    return entry(release).name;
}

std::optional<SonicRelease> parseSonicRelease(std::string_view name) {
    for (const auto& e : kTable)
        if (name == e.name) return e.release;
    return std::nullopt;
}

std::string sonicReleaseList() {
    std::string out;
    for (const auto& e : kTable) out += (out.empty() ? "" : ", ") + std::string(e.name);
    return out;
}

const SonicFeatures& sonicFeatures(SonicRelease release) {
    return entry(release).features;
}

std::optional<std::string> sonicReleaseRefusal(std::string_view name) {
    if (parseSonicRelease(name)) return std::nullopt;
    return "SONiC release \"" + names::printable(std::string(name), 40) +
           "\" is not one twinrail is checked against (" + sonicReleaseList() +
           "): each of those has its YANG models, FRR container and package manager tested";
}

}  // namespace twinrail::plan
