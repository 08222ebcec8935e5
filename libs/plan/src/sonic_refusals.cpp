// What a plan asks of a SONiC release, against what that release has (sonic_release.h).
// A feature the release cannot carry is refused by name, never written for SONiC to
// ignore or for `config reload` to abort on.
#include "sonic_evpn.h"
#include "twinrail/plan/sonic_target.h"

namespace twinrail::plan {
namespace {

std::string on(const SonicOptions& options) {
    return "SONiC " + sonicReleaseName(options.release);
}

// Local ARS: SONiC's HLD names ARS_PROFILE, ARS_OBJECT and ARS_INTERFACES, but no release
// models them and no orchagent reads them (sonic-swss #3597 is unmerged).
std::optional<std::string> arsRefusal(const Plan& plan, const SonicOptions& options) {
    const auto lb = plan.request.lb;
    if (lb != Request::Lb::Ars && lb != Request::Lb::ArsGlobal) return std::nullopt;
    if (sonicFeatures(options.release).localArs && lb == Request::Lb::Ars) return std::nullopt;
    return "--lb " + std::string(lbName(lb)) + " on " + on(options) +
           ": this release has no YANG model for ARS_PROFILE, ARS_OBJECT or ARS_INTERFACES" +
           (lb == Request::Lb::ArsGlobal
                ? std::string(" (nor GLOBAL_ARS, which no SONiC design has)")
                : std::string()) +
           ", and no orchagent reads them (SONiC's Local ARS HLD is not implemented: sonic-swss "
           "#3597 is unmerged); `config reload` would abort on the tables. Use --lb ecmp, "
           "static or spray on SONiC, or arsd on a Linux switch";
}

std::optional<std::string> sprayRefusal(const Plan& plan, const SonicOptions& options) {
    if (plan.request.lb != Request::Lb::Spray || sonicFeatures(options.release).randomEcmpHash)
        return std::nullopt;
    return "--lb spray on " + on(options) +
           ": SWITCH_HASH ecmp_hash_algorithm RANDOM has no model in this release";
}

// Bonded NICs send to one gateway MAC over either plane: both leaves must answer to it.
std::optional<std::string> gatewayMacRefusal(const Plan& plan, const SonicOptions& options) {
    if (plan.request.attach != Attach::Bond) return std::nullopt;
    const SonicFeatures& f = sonicFeatures(options.release);
    if (f.vlanInterfaceMacAddr || f.staticAnycastGateway) return std::nullopt;
    return "--attach bond on " + on(options) +
           ": a bonded NIC sends to one gateway MAC over both planes, so both leaves' rail SVIs "
           "need it, and this release can set neither VLAN_INTERFACE mac_addr (sonic-vlan.yang "
           "has it from 202505) nor SAG (master). Use --sonic-release 202505 or later, or "
           "--attach routed";
}

}  // namespace

std::optional<std::string> sonicFeatureRefusal(const Plan& plan, const SonicOptions& options) {
    if (auto why = arsRefusal(plan, options)) return why;
    if (auto why = sprayRefusal(plan, options)) return why;
    if (auto why = gatewayMacRefusal(plan, options)) return why;
    return sonicEvpnReleaseRefusal(plan, options);
}

std::optional<std::string> sonicRefusal(const Plan& plan, const SonicOptions& options) {
    if (auto why = sonicFeatureRefusal(plan, options)) return why;
    return sonicRoutedRefusal(plan);
}

}  // namespace twinrail::plan
