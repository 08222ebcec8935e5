#include "wcmp_watch.h"

#include "twinrail/common/log.h"

namespace twinrail::pathqd {

std::optional<WcmpNotice> wcmpNotice(std::optional<bool> before, std::optional<bool> now) {
    if (!now || before == now) return std::nullopt;
    if (*now) {
        return WcmpNotice{true,
                          "SONiC's static W-ECMP is on (CONFIG_DB BGP_DEVICE_GLOBAL|STATE "
                          "wcmp_enabled true): bgpcfgd sets the link-bandwidth community in "
                          "TO_BGP_PEER_V4/V6 too, which competes with pathqd's; turn it off "
                          "(config bgp device-global w-ecmp disabled) where pathqd publishes"};
    }
    if (!before) return std::nullopt;  // off from the start: nothing to say
    return WcmpNotice{false, "SONiC's static W-ECMP is off again (wcmp_enabled)"};
}

bool wcmpEnabled(const redis::Value& hgetall) {
    if (hgetall.type != redis::Value::Type::Array) return false;
    for (size_t i = 0; i + 1 < hgetall.elements.size(); i += 2)
        if (hgetall.elements[i].str == "wcmp_enabled") return hgetall.elements[i + 1].str == "true";
    return false;
}

WcmpWatch::WcmpWatch(boost::asio::io_context& io, redis::Connection& configDb,
                     std::chrono::milliseconds period)
    : db_(configDb), period_(period), timer_(io) {}

void WcmpWatch::start() {
    db_.onConnected([this] { readNow(); });
    db_.start();
    arm();
}

void WcmpWatch::stop() {
    timer_.cancel();
    db_.stop();
}

std::string WcmpWatch::state() const {
    if (!enabled_) return "unknown";
    return *enabled_ ? "on" : "off";
}

void WcmpWatch::arm() {
    timer_.expires_after(period_);
    timer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        readNow();
        arm();
    });
}

void WcmpWatch::readNow() {
    std::weak_ptr<int> alive = alive_;
    db_.command({"HGETALL", kWcmpKey}, [this, alive](const redis::Value& v) {
        if (alive.expired() || v.isError()) return;  // unread: the last state stands
        bool now = wcmpEnabled(v);
        if (auto n = wcmpNotice(enabled_, now)) {
            if (n->warning) {
                log::warning(n->text);
            } else {
                log::notice(n->text);
            }
        }
        enabled_ = now;
    });
}

}  // namespace twinrail::pathqd
