// The SONiC releases twinrail claims, and what each one has that a plan can use. One table,
// read by the planner (what it writes or refuses), the lab (how it starts FRR) and
// `twinrail sonic-apply`. Each entry is a fact of that release's own files: the
// conformance test (tests/unit/sonic_release_test.cpp) reads them back from SONiC's sources
// per release (../shared/fixtures/sonic-releases) and fails when one disagrees. A release
// not in the table is refused by name: nothing here was checked against it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace twinrail::plan {

enum class SonicRelease { R202405, R202411, R202505, R202605, Master };

struct SonicFeatures {
    // FRR in the release's bgp container (docs: SONIC-NATIVE-FACTS; rules/frr.mk).
    const char* frrVersion;
    // bgpd's vty TCP port: closed (-P 0) from 202505 on (docker-fpm-frr supervisord); the
    // lab's FRR containers start bgpd the same way.
    bool bgpdVtyPort;
    // `VLAN_INTERFACE|VlanX mac_addr` in sonic-vlan.yang.
    bool vlanInterfaceMacAddr;
    // SAG|GLOBAL gateway_mac and VLAN_INTERFACE static_anycast_gateway
    // (sonic-static-anycast-gateway.yang); intfmgrd's setSagFdbEntry.
    bool staticAnycastGateway;
    // EVPN_ETHERNET_SEGMENT (sonic-evpn.yang).
    bool evpnMultihoming;
    // `redistribute table-direct` (FRR 9.1 and later).
    bool tableDirect;
    // DEVICE_METADATA type BackEndSpineRouter (sonic-device_metadata.yang).
    bool backEndSpineRouter;
    // ARS_PROFILE, ARS_OBJECT, ARS_INTERFACES modelled (no release yet: Local ARS HLD only).
    bool localArs;
    // SWITCH_HASH|GLOBAL ecmp_hash_algorithm RANDOM (sonic-hash.yang).
    bool randomEcmpHash;
};

// Every release twinrail supports, oldest first.
const std::vector<SonicRelease>& sonicReleases();
// "202405", ..., "master".
std::string sonicReleaseName(SonicRelease release);
// The release a name (as sonicReleaseName gives it) stands for, or nothing.
std::optional<SonicRelease> parseSonicRelease(std::string_view name);
// "202405, 202411, 202505, 202605, master": for refusals.
std::string sonicReleaseList();
const SonicFeatures& sonicFeatures(SonicRelease release);
// Why `name` is not a release twinrail can plan for (a usage-level refusal), or nothing.
std::optional<std::string> sonicReleaseRefusal(std::string_view name);

inline constexpr SonicRelease kSonicDefaultRelease = SonicRelease::R202505;

}  // namespace twinrail::plan
