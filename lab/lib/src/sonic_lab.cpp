// `twinrail-lab up --nos sonic`: the lab's switches built from the planner's SONiC target
// (sonic_target.h), in the kernel and Redis shape a SONiC switch has. The decisions are
// in sonic_layout.cpp; this file reads the HWSKUs and runs them.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sku_dir.h"
#include "twinrail/common/names.h"
#include "twinrail/lab/plan_lab.h"
#include "twinrail/lab/sonic_layout.h"
#include "twinrail/plan/outputs.h"
#include "twinrail/plan/sonic_sku.h"
#include "twinrail/plan/sonic_target.h"

namespace twinrail::lab {
namespace fs = std::filesystem;

namespace {

plan::Sku loadSku(const fs::path& dir) {
    auto sku = plantool::loadSkuDir(dir);
    if (auto* e = std::get_if<plantool::SkuLoadError>(&sku)) throw SonicLayoutError(e->message);
    return std::get<plan::Sku>(sku);
}

std::string modelOf(const plan::Plan& p, const plan::Switch& sw) {
    const auto& r = p.request;
    return sw.spine && !r.spineModel.name.empty() ? r.spineModel.name : r.leafModel.name;
}

}  // namespace

std::string labSkuDir(const std::string& model, const std::string& hwskuDir) {
    std::error_code ec;
    if (!hwskuDir.empty()) {
        if (!fs::exists(fs::path(hwskuDir) / "port_config.ini", ec))
            throw SonicLayoutError(hwskuDir + ": no port_config.ini (not a HWSKU directory)");
        return hwskuDir;
    }
    if (auto why = names::check(model, names::Kind::Node))
        throw SonicLayoutError("switch model \"" + names::printable(model) + "\" " + *why);
    for (const auto& root : {fs::path(TWINRAIL_LAB_HWSKU_DIR), fs::path(TWINRAIL_PLAN_HWSKU_DIR)})
        if (fs::exists(root / model / "port_config.ini", ec)) return (root / model).string();
    throw SonicLayoutError("no HWSKU for switch model " + model + " (in " +
                           std::string(TWINRAIL_LAB_HWSKU_DIR) + " or " +
                           std::string(TWINRAIL_PLAN_HWSKU_DIR) + "): give one with --hwsku DIR");
}

nlohmann::json labSonicRecord(const std::string& labName) {
    std::ifstream in(PlanLab::stateDir(labName) + "/sonic.json");
    if (!in) return nullptr;
    auto j = nlohmann::json::parse(in, nullptr, false);
    return j.is_discarded() ? nlohmann::json(nullptr) : j;
}

void PlanLab::prepareSonic(const plan::Plan& planner) {
    const bool evpn = planner.request.attach == plan::Attach::EvpnMh;
    const plan::SonicRelease release =
        sonic_->release.value_or(evpn ? plan::SonicRelease::Master : kLabSonicRelease);
    sonicRelease_ = release;
    const plan::SonicOptions options{release, plan::SonicBufferModel::Traditional};
    if (auto why = plan::sonicFeatureRefusal(planner, options)) throw SonicLayoutError(*why);
    // On a switch, aclorch turns hostrouted's ACL_RULE_TABLE redirects into the ASIC's ACL;
    // the lab has no aclorch, and pins that nothing applies would look pinned.
    if (planner.request.lb == plan::Request::Lb::Static)
        throw SonicLayoutError(
            "--lb static on the SONiC layout: static smart routing on SONiC is ACL-based PBR "
            "that orchagent's aclorch programs into the ASIC, and the lab has no aclorch, so no "
            "packet would be pinned (docs/static-routing.md, \"On SONiC\"); use --nos linux");
    std::map<std::string, plan::Sku> skus;  // by directory
    std::map<std::string, plan::PortMap> maps;
    for (const auto& sw : planner.switches) {
        const std::string dir = labSkuDir(modelOf(planner, sw), sonic_->hwskuDir);
        if (skus.count(dir) == 0) skus.emplace(dir, loadSku(dir));
        const plan::Sku& sku = skus.at(dir);
        auto cfg = plan::sonicSwitchConfig(planner, sw, sku, options);
        if (auto* why = std::get_if<std::string>(&cfg)) throw SonicLayoutError(*why);
        auto mapped = plan::mapPorts(sku, sw);
        if (auto* why = std::get_if<std::string>(&mapped)) throw SonicLayoutError(*why);
        const auto& c = std::get<plan::SonicSwitchConfig>(cfg);
        // What the switch's CONFIG_DB holds after `config load` of its factory default
        // and the overlay.
        auto db = mergeConfigDb(plan::sonicBaseConfigDb(sku, c.breakouts), c.overlay);
        applyLabOverrides(db);
        sonicConfigDb_[sw.name] = db;
        sonicFrrConf_[sw.name] = c.frrConf;
        maps[sw.name] = std::get<plan::PortMap>(mapped);
        if (evpn && !sw.spine) sonicAux_[sw.name] = *plan::sonicAuxPort(sku, maps[sw.name]);
    }
    plan_ = withSkuPortNames(planner, maps);
    sonicRecord_ = sonicRecord(release, maps);
}

std::string PlanLab::frrConfFor(const plan::Switch& sw) const {
    if (!sonic_) return plan::frrConfig(plan_, sw);
    return labFrrConf(sonicFrrConf_.at(sw.name));
}

void PlanLab::addressSonicSwitches() {
    for (const auto& sw : plan_.switches) {
        auto cmds = sonicKernelCommands(sonicConfigDb_.at(sw.name));
        if (auto res = inNodeAll(name_, sw.name, cmds); res.rc != 0)
            throw std::runtime_error("cannot lay out " + sw.name + " as SONiC does: " + res.out);
    }
}

void PlanLab::buildSonicSegments() {
    for (const auto& sw : plan_.switches) {
        auto cmds = sonicSegmentCommands(sonicConfigDb_.at(sw.name));
        if (auto res = inNodeAll(name_, sw.name, cmds); res.rc != 0) {
            throw std::runtime_error("cannot build the EVPN-MH segments of " + sw.name + ": " +
                                     res.out);
        }
    }
}

plan::EvpnMhLeaf PlanLab::evpnLeaf(const plan::Switch& leaf) const {
    if (!sonic_) return plan::evpnMhLeaf(plan_, leaf);
    return plan::sonicEvpnMhLeaf(plan_, leaf, nullptr, sonicAux_.at(leaf.name));
}

void PlanLab::startSonicSwitch(const plan::Switch& sw) {
    const std::string d = dir_ + "/" + sw.name;
    fs::create_directories(d);
    const nlohmann::json& db = sonicConfigDb_.at(sw.name);
    std::ofstream(d + "/config_db.json") << db.dump(2) << "\n";
    // Its presence is what makes the lab's services start in SONiC's way (lab_services.cpp).
    std::ofstream(d + "/database_config.json")
        << labDatabaseConfig(d + "/redis.sock").dump(2) << "\n";
    startService(name_, bins_, sw.name, Service::Redis);  // and loads CONFIG_DB
    if (!sw.spine) startService(name_, bins_, sw.name, Service::Hostrouted);
    startService(name_, bins_, sw.name, Service::Pathqd);
    startArsdIfEnabled(name_, bins_, sw.name, db);
    const auto g =
        db.value("HOSTROUTED", nlohmann::json::object()).value("global", nlohmann::json::object());
    if (g.value("advertise", "") == "network-table") {
        // bgpcfgd's part on a SONiC switch: the lab's stand-in (network_advertiser.h),
        // root in the switch's namespace, as bgpcfgd is root in the bgp container.
        spawnDetached(inNamespace(ns(sw.name), {bins_.self, "advertise-networks",
                                                d + "/database_config.json", ns(sw.name)}),
                      d + "/advertise-networks.log");
    }
}

}  // namespace twinrail::lab
