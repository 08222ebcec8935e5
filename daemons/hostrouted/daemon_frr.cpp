// hostrouted and FRR: the import/redistribute lines it needs (checked, with manage_frr
// added), FRR restarts, and the IPv4 routes the import auditor checks zebra against.
#include "daemon.h"
#include "frr_requirements.h"
#include "twinrail/common/log.h"

namespace twinrail::hostrouted {
namespace {
constexpr auto kImportSettle = std::chrono::seconds(5);  // zebra has seen a route by then
}  // namespace

void Daemon::checkFrr() {
    if (!options_.checkFrr || frrCheckRunning_) return;
    frrCheckRunning_ = true;
    frr_.ensure(requiredFrrLines(cfg_), cfg_.manageFrr,
                [this](const frr::Channel::EnsureResult& r) {
                    frrCheckRunning_ = false;
                    for (const auto& line : r.added)
                        log::notice("FRR: added '", line.describe(), "'");
                    if (!r.reachable) {
                        frrStatus_ = "unreachable";
                        log::error("FRR: cannot read the running config (", r.error,
                                   "); host routes are in the kernel but may not be advertised");
                        return;
                    }
                    if (!r.error.empty()) log::error("FRR: ", r.error);
                    if (r.missing.empty()) {
                        frrStatus_ = "ok";
                        log::info("FRR: import/redistribute configuration present");
                        return;
                    }
                    frrStatus_ = "missing";
                    for (const auto& line : r.missing) {
                        log::error("FRR config missing (host routes will not be advertised): ",
                                   line.describe());
                    }
                    if (!cfg_.manageFrr)
                        log::error("FRR: add the lines above, or set manage_frr=true");
                });
}

void Daemon::onFrrRestart(const std::string& daemon) {
    if (daemon != "zebra" && daemon != "bgpd") return;
    if (auditor_) auditor_->frrRestarted(daemon);
    if (evpn_ && daemon == "zebra") evpn_->zebraRestarted();
    // A restarted FRR has only its saved config; check (and with manage_frr restore) the
    // import and redistribute lines once it has had a moment to load it.
    frrRecheckTimer_.expires_after(options_.frrRecheckDelay);
    frrRecheckTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) checkFrr();
    });
}

// Installed IPv4 host routes (the ones zebra imports from our table). A route written in
// the last few seconds is "fresh": zebra may not have processed it yet.
std::vector<OurRoute> Daemon::ourImportedRoutes() const {
    std::vector<OurRoute> out;
    auto now = Clock::now();
    registry_.forEach([&out, now, this](const HostRecord& r) {
        if (!r.ip.isV4() || r.state != RouteState::Installed || r.kernelIfindex == 0) return;
        out.push_back(OurRoute{routeFor(r.ip, r.kernelIfindex), now - r.since < kImportSettle});
    });
    return out;
}

}  // namespace twinrail::hostrouted
