// Fast notices (fast_notifier.h): the socket on the leaf's loopback, a host port's loss
// told at once, and other leaves' notices passed on to the servers here.
#include "daemon.h"
#include "twinrail/common/log.h"

namespace twinrail::hostrouted {

void Daemon::startNotices() {
    const NoticeConfig& n = cfg_.notices;
    if (!n.enabled()) return;
    if (!edges_.notices || !edges_.wallNs) {
        log::warning("fast notices configured, but this build has no notice socket: not sent");
        return;
    }
    noticeSocket_ = edges_.notices(n.source, n.port, [this](const fnn::Datagram& d) {
        try {
            if (notifier_) notifier_->received(d, noticeReceivers(0), fnn::MonoTime::clock::now());
        } catch (const std::exception& e) {
            log::error("fast notice: ", e.what());
        }
    });
    notifier_ = std::make_unique<FastNotifier>(n, *noticeSocket_, edges_.wallNs);
    // The routes found at start (adopted) are routed hosts too.
    registry_.forEach([this](const HostRecord& rec) {
        if (rec.kernelIfindex != 0) portHosts_.routed(rec.ip, rec.kernelIfindex);
    });
    log::notice("fast notices: plane ", int{n.plane}, " from ", n.source->str(), ":", n.port, ", ",
                n.leaves.size(), " other leaves");
}

// The servers on this leaf: every host routed here, but those behind `exceptIfindex`.
std::vector<IpAddr> Daemon::noticeReceivers(int exceptIfindex) const {
    std::vector<IpAddr> out;
    registry_.forEach([&out, exceptIfindex](const HostRecord& rec) {
        if (rec.ifindex != exceptIfindex && rec.kernelIfindex != 0 && rec.ip.isV4() &&
            rec.source == Source::Local)
            out.push_back(rec.ip);
    });
    return out;
}

void Daemon::noticePortLost(int ifindex) {
    if (!notifier_) return;
    // The hosts routed there now, and those withdrawn just before: the kernel flushes a
    // port's neighbors as it loses carrier, sometimes ahead of the link event.
    constexpr auto kJustBefore = std::chrono::milliseconds(1000);
    notifier_->portLost(portHosts_.lostWith(ifindex, Clock::now(), kJustBefore),
                        noticeReceivers(ifindex));
}

}  // namespace twinrail::hostrouted
