#include "es_sync.h"

#include "twinrail/common/log.h"

namespace twinrail::hostrouted {
namespace {
using Clock = std::chrono::steady_clock;
// zebra re-learns the peer's hosts from BGP after a restart; the session comes up within
// a few seconds (3 s keepalive), the routes right after.
constexpr auto kRestartHold = std::chrono::seconds(15);
constexpr const char* kArp = "show evpn arp-cache vni all detail json";
constexpr const char* kMac = "show evpn mac vni all detail json";
constexpr const char* kEs = "show evpn es detail json";
}  // namespace

EvpnView mergeDuringHold(const EvpnView& old, const EvpnView& fresh) {
    EvpnView out = fresh;
    for (const auto& [ip, n] : old.neighbors) {
        if (out.neighbors.count(ip) > 0) continue;
        out.neighbors.emplace(ip, n);
        if (const EvpnMac* m = old.macOf(n)) {
            out.macs.emplace(std::make_pair(m->vni, m->mac), *m);
            if (const EvpnSegment* s = old.segmentOf(*m)) out.segments.emplace(s->esi, *s);
        }
    }
    return out;
}

EsSync::EsSync(boost::asio::io_context& io, frr::Channel& frr, std::chrono::milliseconds interval,
               Handler onChange, Handler onRead)
    : frr_(frr),
      interval_(interval),
      onChange_(std::move(onChange)),
      onRead_(std::move(onRead)),
      timer_(io) {}

void EsSync::start() {
    running_ = true;
    log::info("EVPN-MH: reading FRR's EVPN view from ", frr_.describe(), " every ",
              interval_.count(), " ms");
    poll();
}

void EsSync::stop() {
    running_ = false;
    timer_.cancel();
}

void EsSync::zebraRestarted() {
    holdUntil_ = Clock::now() + kRestartHold;
    log::info("EVPN-MH: zebra restarted; for ", kRestartHold.count(),
              " s hosts missing from its view are kept");
}

void EsSync::scheduleNext() {
    if (!running_) return;
    timer_.expires_after(interval_);
    timer_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) poll();
    });
}

void EsSync::poll() {
    if (!running_) return;
    pollStart_ = Clock::now();
    // Three reads in a row; each answer is parsed only once all three are in.
    std::weak_ptr<int> alive = alive_;
    frr_.zebra(kArp, [this, alive](bool ok, std::string text) {
        if (alive.expired()) return;
        if (!ok) return finishPoll(false, text);
        arp_ = std::move(text);
        frr_.zebra(kMac, [this, alive](bool ok2, std::string text2) {
            if (alive.expired()) return;
            if (!ok2) return finishPoll(false, text2);
            mac_ = std::move(text2);
            frr_.zebra(kEs, [this, alive](bool ok3, const std::string& es) {
                if (alive.expired()) return;
                if (!ok3) return finishPoll(false, es);
                auto parsed = parseEvpnView(arp_, mac_, es);
                if (auto* e = std::get_if<EvpnParseError>(&parsed))
                    return finishPoll(false, e->message);
                apply(std::move(std::get<EvpnView>(parsed)));
                finishPoll(true, "");
            });
        });
    });
}

void EsSync::apply(EvpnView fresh) {
    viewAsOf_ = pollStart_;
    if (view_ && Clock::now() < holdUntil_) fresh = mergeDuringHold(*view_, fresh);
    if (!view_ || !(*view_ == fresh)) {
        view_ = std::move(fresh);
        ++stats_.changes;
        onChange_(*view_);
    }
    onRead_(*view_);
}

void EsSync::finishPoll(bool ok, const std::string& error) {
    ++stats_.polls;
    stats_.lastPollMs =
        std::chrono::duration<double, std::milli>(Clock::now() - pollStart_).count();
    stats_.maxPollMs = std::max(stats_.maxPollMs, stats_.lastPollMs);
    if (ok) {
        if (errorLogged_) log::info("EVPN-MH: FRR's EVPN view is readable again");
        errorLogged_ = false;
    } else {
        ++stats_.errors;
        stats_.lastError = error;
        // Once per outage: a stopped zebra would otherwise log ten lines a second.
        if (!errorLogged_) log::warning("EVPN-MH: keeping the last view; ", error);
        errorLogged_ = true;
    }
    scheduleNext();
}

}  // namespace twinrail::hostrouted
