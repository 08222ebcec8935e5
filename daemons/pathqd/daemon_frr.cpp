// pathqd and FRR: the desired policy handed to the publisher, the publisher started and
// dropped with `publish`, and what happens when bgpd or zebra restarts.
#include "daemon.h"
#include "twinrail/common/log.h"

namespace twinrail::pathqd {

void Daemon::startPublisher() {
    if (frr_ == nullptr || publisher_) return;
    publisher_ = std::make_unique<FrrPublisher>(io_, *frr_, options_.periods.frrRetry);
}

void Daemon::publish() {
    if (!publisher_) return;
    PolicyInput in;
    in.levels = cfg_.model.levels;
    in.ipv4 = cfg_.ipv4;
    in.ipv6 = cfg_.ipv6;
    for (const auto& [name, link] : links_) {
        if (link.config.role != Role::Downlink) continue;
        in.downlinks[name] =
            DownlinkState{std::max(1, link.filter.published()), link.peerLevel, link.snapshot,
                          link.config.neighbor, link.filter.published() > 0};
    }
    publisher_->request(std::move(in));
}

// A restarted bgpd has only its saved config: the route-maps pathqd added at run time are
// gone until they are put back. Re-read and re-apply now, and a few more times while FRR
// loads its config and re-forms its sessions, rather than at the next 30 s audit.
void Daemon::onFrrRestart(const std::string& daemon) {
    if (daemon != "bgpd" && daemon != "zebra") return;
    ++stats_.frrRestarts;
    log::notice("FRR: ", daemon, " started; re-applying pathqd's route-maps");
    if (weightAuditor_) weightAuditor_->runSoon();
    frrBurstUntil_ = std::chrono::steady_clock::now() + options_.periods.frrBurstFor;
    armFrrBurst();
}

void Daemon::armFrrBurst() {
    frrBurstTimer_.expires_after(options_.periods.frrBurst);
    frrBurstTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        if (publisher_) publisher_->audit();
        if (std::chrono::steady_clock::now() < frrBurstUntil_) armFrrBurst();
    });
}

}  // namespace twinrail::pathqd
