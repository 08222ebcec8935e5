#include "port_holder.h"

#include <linux/rtnetlink.h>

#include <algorithm>
#include <cstring>

#include "state_rows.h"
#include "twinrail/common/log.h"

namespace twinrail::hostrouted {
namespace {
constexpr const char* kScanCount = "512";
}  // namespace

PortHolder::PortHolder(boost::asio::io_context& io, HoldSettings settings, LinkControl& links,
                       const netlink::RouteFeedFactory& feed)
    : io_(io),
      hold_(std::move(settings), Clock::now()),
      links_(links),
      watch_(feed({RT_TABLE_MAIN}, [this](const std::vector<netlink::RouteKey>& /*changed*/,
                                          bool /*snapshotDone*/) { evaluate(); })),
      timer_(io) {}

void PortHolder::start() {
    stopped_ = false;
    watch_->start();
    std::string list;
    for (const auto& p : hold_.settings().prefixes) list += (list.empty() ? "" : ", ") + p.str();
    log::notice("host-port hold: host ports held until the leaf has routes to ", list, " (at most ",
                hold_.settings().maxHold.count(), " s with only some of them)");
}

void PortHolder::stop() {
    stopped_ = true;
    timer_.cancel();
    watch_->stop();
}

void PortHolder::setSettings(HoldSettings next) {
    hold_.setSettings(std::move(next), Clock::now());
    evaluate();
}

void PortHolder::portsChanged(const Ports& ports) {
    auto now = Clock::now();
    std::set<int> fabric;
    std::map<std::string, bool> admin;
    for (const auto& [ifindex, port] : ports) {
        if (!port.managed && port.link.operUp) fabric.insert(ifindex);
        if (!port.managed || port.link.name.empty()) continue;
        admin[port.link.name] = port.link.adminUp;
        // Only changes: the table may still hold a port's state from before our own write
        // (its event not read yet), which is not news and must not undo the write.
        auto was = managed_.find(port.link.name);
        if (was == managed_.end() || was->second != port.link.adminUp)
            hold_.portSeen(port.link.name, port.link.adminUp, now);
    }
    for (const auto& [name, up] : managed_) {
        if (admin.count(name) != 0) continue;
        hold_.portGone(name);
        if (table_) table_->markDirty(name);
    }
    // The kernel drops IPv4 routes through a link that goes down without telling anyone:
    // only a new dump shows that they are gone, before the link (and its stale routes in
    // the watch's view) could come back.
    bool lost = std::any_of(fabricPorts_.begin(), fabricPorts_.end(),
                            [&fabric](int ifindex) { return fabric.count(ifindex) == 0; });
    fabricPorts_ = std::move(fabric);
    managed_ = std::move(admin);
    if (lost && watch_->synced()) watch_->resync();
    evaluate();
}

void PortHolder::evaluate() {
    // Before the first view of the routes nothing is known: a restart on a running leaf
    // must not lower its ports for the milliseconds the dump takes.
    if (stopped_ || !watch_->synced()) return;
    auto view = fabricView(watch_->routes(), hold_.settings().prefixes, fabricPorts_);
    hold_.setPresent(std::move(view.present), view.anyRoute);
    apply(hold_.decide(Clock::now()));
    armTimer();
}

void PortHolder::apply(const HoldDecision& d) {
    if (!d.transition.empty()) {
        if (d.warning) {
            log::warning("host-port hold: ", d.transition);
        } else {
            log::notice("host-port hold: ", d.transition);
        }
    }
    for (const auto& a : d.actions) {
        if (table_) table_->markDirty(a.port);
        if (a.kind == HoldActionKind::Record) {
            log::notice("host port ", a.port, " held (already down): ", a.reason);
            continue;
        }
        bool up = a.kind == HoldActionKind::Raise;
        int error = links_.setLinkUp(a.port, up);
        if (error != 0) {
            ++stats_.writeErrors;
            log::error("host-port hold: cannot set ", a.port,
                       up ? " up: " : " down: ", std::strerror(error));
            // Still up: the next decision (any route or link change) lowers it again.
            if (!up) hold_.portSeen(a.port, true, Clock::now());
            continue;
        }
        if (up) {
            ++stats_.raised;
            log::notice("host port ", a.port, " released (admin up): ", a.reason);
        } else {
            ++stats_.lowered;
            log::warning("host port ", a.port, " held (admin down): ", a.reason);
        }
    }
}

void PortHolder::armTimer() {
    auto due = hold_.nextDeadline();
    if (!due) {
        timer_.cancel();
        return;
    }
    if (timer_.expiry() == *due) return;
    timer_.expires_at(*due);
    timer_.async_wait(
        [this, alive = std::weak_ptr<int>(alive_)](const boost::system::error_code& ec) {
            if (!ec && !alive.expired()) evaluate();
        });
}

void PortHolder::attachStateDb(redis::Connection& client, char separator) {
    stateDb_ = &client;
    separator_ = separator;
    table_ = std::make_unique<redis::StateTable>(
        io_, client, kHoldTable, separator, [this](const std::string& k) { return rowOf(k); },
        [this] {
            std::vector<std::string> keys;
            for (const auto& [port, record] : hold_.records()) keys.push_back(port);
            return keys;
        });
}

void PortHolder::stateDbConnected() {
    if (!table_) return;
    if (adopted_) {
        table_->resyncAll();
        return;
    }
    // The previous run's held rows first: the rewrite below deletes rows nobody owns.
    if (adopting_) return;
    adopting_ = true;
    scanDone_ = false;
    readsPending_ = 0;
    readHeldFrom("0");
}

void PortHolder::readHeldFrom(const std::string& cursor) {
    const std::string pattern = std::string(kHoldTable) + separator_ + "*";
    ++readsPending_;
    bool sent =
        stateDb_->command({"SCAN", cursor, "MATCH", pattern, "COUNT", kScanCount},
                          [this, alive = std::weak_ptr<int>(alive_)](const redis::Value& reply) {
                              if (alive.expired()) return;
                              --readsPending_;
                              if (reply.isError() || reply.elements.size() != 2)
                                  return readFailed(reply);
                              for (const auto& k : reply.elements[1].elements) readHeldRow(k.str);
                              const std::string next = reply.elements[0].str;
                              if (next != "0") return readHeldFrom(next);
                              scanDone_ = true;
                              if (readsPending_ == 0) adoptionDone();
                          });
    if (!sent) readFailed(redis::Value::error(redis::Value::kLost));
}

void PortHolder::readHeldRow(const std::string& key) {
    const std::string port = key.substr(std::strlen(kHoldTable) + 1);
    ++readsPending_;
    bool sent = stateDb_->command({"HGETALL", key}, [this, alive = std::weak_ptr<int>(alive_),
                                                     port](const redis::Value& reply) {
        if (alive.expired()) return;
        --readsPending_;
        if (reply.isError()) return readFailed(reply);
        const auto& f = reply.elements;
        for (size_t i = 0; i + 1 < f.size(); i += 2) {
            if (f[i].str != "state" || f[i + 1].str != "held") continue;
            log::notice("host-port hold: ", port, " was held by the previous run");
            hold_.adopt(port);
        }
        if (scanDone_ && readsPending_ == 0) adoptionDone();
    });
    if (!sent) readFailed(redis::Value::error(redis::Value::kLost));
}

void PortHolder::readFailed(const redis::Value& reply) {
    // Read again from the start on the next connect; replies still due are ignored.
    if (!adopting_) return;
    adopting_ = false;
    if (!reply.connectionLost())
        log::warning("host-port hold: cannot read ", kHoldTable, ": ", reply.str);
}

void PortHolder::adoptionDone() {
    if (!adopting_) return;
    adopting_ = false;
    adopted_ = true;
    table_->resyncAll();
    evaluate();
}

std::optional<redis::Fields> PortHolder::rowOf(const std::string& port) const {
    auto it = hold_.records().find(port);
    if (it == hold_.records().end()) return std::nullopt;
    const HoldRecord& r = it->second;
    // A previous run's hold carries no time of its own here: "" rather than a made-up one.
    std::string since = r.since == TimePoint{}
                            ? ""
                            : wallClock(r.since, Clock::now(), std::chrono::system_clock::now());
    return redis::Fields{
        {"state", r.held ? "held" : "released"}, {"reason", r.reason}, {"since", since}};
}

}  // namespace twinrail::hostrouted
