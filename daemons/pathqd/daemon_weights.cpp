// pathqd's view of the kernel's multipath weights: route events into the weight groups,
// PATH_WEIGHT_TABLE rows, and the weight audit's input.
#include <linux/rtnetlink.h>

#include "daemon.h"
#include "sonic_weight_reader.h"
#include "twinrail/common/log.h"

namespace twinrail::pathqd {
namespace {
constexpr uint8_t kBgpProtocol = 186;  // RTPROT_BGP: routes zebra installs for bgpd
}  // namespace

void Daemon::armWeights() {
    weightsTimer_.expires_after(cfg_.weightsInterval);
    weightsTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        refreshWeights();
        armWeights();
    });
}

// Route events go into the weight groups as they come (a change costs what changed); the
// rows they touched are written at most once per weightsInterval.
void Daemon::onRoutes(const std::vector<netlink::RouteKey>& changed, bool snapshotDone) {
    if (snapshotDone) ifNames_.clear();  // names may have changed while events were lost
    const auto& routes = routeWatch_->routes();
    for (const auto& key : changed) {
        auto it = routes.find(key);
        bool bgp = it != routes.end() && it->second.protocol == kBgpProtocol &&
                   it->second.table == RT_TABLE_MAIN;
        weightGroups_.update(key, bgp ? &it->second : nullptr);
    }
    weightsDirty_ = weightsDirty_ || !changed.empty();
}

void Daemon::refreshWeights() {
    if (!weightsDirty_) return;
    weightsDirty_ = false;
    ++stats_.weightRebuilds;
    for (const auto& key : weightGroups_.takeChanged())
        if (weightTable_) weightTable_->markDirty(key);
}

// The weight audit's input, built when an audit runs (every 30 s), not per change.
const std::vector<netlink::RouteWeights>& Daemon::kernelRoutes() {
    kernelRoutes_.clear();
    if (!routeWatch_) return kernelRoutes_;
    for (const auto& [key, r] : routeWatch_->routes()) {
        if (r.protocol == kBgpProtocol && r.table == RT_TABLE_MAIN)
            kernelRoutes_.push_back({r.dst, r.nhid, r.nexthops});
    }
    return kernelRoutes_;
}

// The weight audit's source: the kernel's routes, or on SONiC what the ASIC forwards by.
std::unique_ptr<ForwardingWeights> Daemon::weightsInForce() {
    if (cfg_.weightAuditSource == WeightAuditSource::Kernel) {
        return std::make_unique<KernelWeights>(
            [this]() -> const std::vector<netlink::RouteWeights>& { return kernelRoutes(); },
            [this](int ifindex) { return cachedIfName(ifindex); });
    }
    if (!edges_.applDb) {
        log::error("weight audit off: weight_audit_source sonic needs APPL_DB");
        return nullptr;
    }
    for (auto* db : {edges_.applDb.get(), edges_.asicDb.get(), edges_.countersDb.get()})
        if (db != nullptr) db->start();
    if (cfg_.sonicRelease < 202111) {
        log::warning("SONiC ", cfg_.sonicRelease,
                     " forwards ECMP whatever BGP's link bandwidths say (fpmsyncd writes no "
                     "weights before 202111): pathqd's weights do not reach this ASIC");
    }
    return std::make_unique<SonicWeightReader>(io_, *edges_.applDb, edges_.asicDb.get(),
                                               edges_.countersDb.get(), cfg_.sonicRelease);
}

std::string Daemon::cachedIfName(int ifindex) {
    auto it = ifNames_.find(ifindex);
    if (it != ifNames_.end()) return it->second;
    return ifNames_[ifindex] = edges_.ifName(ifindex);
}

std::optional<redis::Fields> Daemon::weightRow(const std::string& key) const {
    return weightGroups_.row(key);
}

std::vector<std::string> Daemon::weightKeys() const {
    return weightGroups_.keys();
}

}  // namespace twinrail::pathqd
