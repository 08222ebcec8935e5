#include "uplink_pinner.h"

#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "twinrail/common/log.h"
#include "twinrail/common/time_text.h"

namespace twinrail::hostrouted {
namespace {
// A failed rule dump is taken again after this, doubling up to kRuleRetryMax.
constexpr auto kRuleRetryMin = std::chrono::seconds(1);
constexpr auto kRuleRetryMax = std::chrono::seconds(30);
}  // namespace

UplinkPinner::UplinkPinner(boost::asio::io_context& io, PinSettings settings,
                           netlink::PolicyWriter& writer, const netlink::RouteFeedFactory& feed)
    : io_(io),
      settings_(std::move(settings)),
      tables_(pinTables(settings_)),
      writer_(writer),
      watch_(feed(watchedTables(), [this](const std::vector<netlink::RouteKey>& changed,
                                          bool done) { onRoutes(changed, done); })),
      ruleRetry_(kRuleRetryMin),
      ruleRetryTimer_(io) {
    for (const auto& [down, up] : settings_.pins) pins_[down];
}

std::set<uint32_t> UplinkPinner::watchedTables() const {
    std::set<uint32_t> t{RT_TABLE_MAIN};
    for (const auto& [up, table] : tables_) t.insert(table);
    return t;
}

void UplinkPinner::start() {
    stopped_ = false;
    watch_->start();
    log::notice("uplink pinning: ", settings_.pins.size(), " downlinks over ", tables_.size(),
                " uplinks (tables ", settings_.tableBase, "+, rule priority ",
                settings_.rulePriority, ")");
}

void UplinkPinner::stop() {
    stopped_ = true;  // a rule dump still under way is ignored when it comes
    ruleRetryTimer_.cancel();
    watch_->stop();
}

void UplinkPinner::setSettings(PinSettings next) {
    if (next == settings_) return;
    settings_ = std::move(next);
    tables_ = pinTables(settings_);
    std::map<std::string, Pin> pins;
    for (const auto& [down, up] : settings_.pins) pins[down] = pins_[down];
    for (const auto& [down, pin] : pins_)
        if (pins.count(down) == 0 && table_) table_->markDirty(down);
    pins_ = std::move(pins);
    // Tables no longer used are emptied now, from what the watch holds; new ones are
    // filled once the watch's snapshot of them is done.
    if (ready_) reconcileAll();
}

void UplinkPinner::onLink(const netlink::LinkState& link, bool removed) {
    if (tables_.count(link.name) == 0) return;
    Uplink& u = uplinks_[link.name];
    Uplink before = u;
    u.ifindex = removed ? 0 : link.ifindex;
    u.present = !removed;
    u.operUp = !removed && link.operUp;
    if (!ready_ ||
        (before.present == u.present && before.operUp == u.operUp && before.ifindex == u.ifindex))
        return;
    uint32_t table = tables_.at(link.name);
    if (!u.operUp) {
        log::warning("uplink ", link.name, " down: its downlinks fall back to multipath");
        reconcileRules();  // the rules go first: nothing is sent into a dead table
        flush();
        reconcileTable(link.name, table);
        flush();
        return;
    }
    log::info("uplink ", link.name, " up: pinning again as BGP routes through it return");
    reconcileTable(link.name, table);
    flush();
    reconcileRules();
    flush();
}

std::vector<const netlink::KernelRoute*> UplinkPinner::tableEntries(uint32_t table,
                                                                    const IpPrefix& prefix) const {
    return netlink::entriesOf(watch_->routes(), table, prefix);
}

std::vector<const netlink::KernelRoute*> UplinkPinner::mainRoutes(const IpPrefix& prefix) const {
    return tableEntries(RT_TABLE_MAIN, prefix);
}

void UplinkPinner::reconcilePrefix(const IpPrefix& prefix, const std::string& uplink,
                                   uint32_t table) {
    const Uplink& u = uplinks_[uplink];
    std::optional<netlink::KernelRoute> wanted;
    if (u.present && u.operUp) {
        wanted = pinnedEntry(mainRoutes(prefix), u.ifindex, table, settings_.protocol,
                             settings_.minWeightRatio);
    }
    if (wanted && (prefix.addr.isV4() ? !settings_.ipv4 : !settings_.ipv6)) wanted.reset();
    bool satisfied = false;
    for (const auto* present : tableEntries(table, prefix)) {
        if (wanted && !satisfied && sameEntry(*present, *wanted)) {
            satisfied = true;
            continue;
        }
        if (wanted && present->metric == wanted->metric) continue;  // replaced below
        writer_.submit({netlink::PolicyOp::RemoveRoute, *present, {}, {}});
        ++stats_.routeWrites;
    }
    if (wanted && !satisfied) {
        writer_.submit({netlink::PolicyOp::ReplaceRoute, *wanted, {}, {}});
        ++stats_.routeWrites;
    }
    auto& pinned = pinned_[table];
    auto& count = prefix.addr.isV4() ? pinnedCount_[table].first : pinnedCount_[table].second;
    if (wanted && wanted->type == RTN_UNICAST) {
        count += pinned.insert(prefix).second ? 1 : 0;
    } else {
        count -= pinned.erase(prefix);
    }
}

void UplinkPinner::reconcileTable(const std::string& uplink, uint32_t table) {
    std::set<IpPrefix> prefixes;
    for (const auto& [key, route] : watch_->routes())
        if (key.table == RT_TABLE_MAIN || key.table == table) prefixes.insert(key.dst);
    for (const auto& p : prefixes) reconcilePrefix(p, uplink, table);
}

void UplinkPinner::reconcileAll() {
    for (const auto& [uplink, table] : tables_) reconcileTable(uplink, table);
    // Tables of uplinks no longer pinned: emptied.
    std::set<uint32_t> ours;
    for (const auto& [uplink, table] : tables_) ours.insert(table);
    for (const auto& [key, route] : watch_->routes()) {
        if (key.table == RT_TABLE_MAIN || ours.count(key.table) != 0) continue;
        writer_.submit({netlink::PolicyOp::RemoveRoute, route, {}, {}});
        ++stats_.routeWrites;
    }
    for (auto it = pinned_.begin(); it != pinned_.end();) {
        if (ours.count(it->first) != 0) {
            ++it;
            continue;
        }
        pinnedCount_.erase(it->first);
        it = pinned_.erase(it);
    }
    flush();
    reconcileRules();
    flush();
    watch_->setTables(watchedTables());
}

void UplinkPinner::reconcileRules() {
    std::set<netlink::PolicyRule> wanted;
    auto now = std::chrono::system_clock::now();
    for (const auto& [down, up] : settings_.pins) {
        uint32_t table = tables_.at(up);
        const Uplink& u = uplinks_[up];
        const auto& count = pinnedCount_[table];
        UplinkView view{u.present, u.operUp, count.first, count.second};
        PinDecision d = decidePin(settings_, down, up, table, view);
        wanted.insert(d.rules.begin(), d.rules.end());
        Pin& pin = pins_[down];
        if (!pin.known || pin.state != d.state || pin.reason != d.reason) {
            if (pin.known && pin.state == PinState::Pinned && d.state == PinState::Fallback)
                ++stats_.fallbacks;
            if (d.state == PinState::Pinned) {
                log::info("downlink ", down, " pinned to ", up, " (table ", table, ")");
            } else if (pin.known) {
                log::warning("downlink ", down, " falls back to multipath: ", d.reason);
            }
            pin = Pin{d.state, d.reason, now, true, count};
            if (table_) table_->markDirty(down);
        } else if (pin.counts != count) {
            pin.counts = count;
            if (table_) table_->markDirty(down);
        }
    }
    for (const auto& r : std::set<netlink::PolicyRule>(rules_)) {
        if (wanted.count(r) != 0) continue;
        writer_.submit({netlink::PolicyOp::RemoveRule, {}, r, {}});
        ++stats_.ruleWrites;
        rules_.erase(r);
    }
    for (const auto& r : wanted) {
        if (rules_.count(r) != 0) continue;
        writer_.submit({netlink::PolicyOp::AddRule, {}, r, {}});
        ++stats_.ruleWrites;
        rules_.insert(r);
    }
}

void UplinkPinner::flush() {
    for (const auto& res : writer_.flush()) {
        if (res.error == 0) continue;
        bool removing = res.op.kind == netlink::PolicyOp::RemoveRoute ||
                        res.op.kind == netlink::PolicyOp::RemoveRule;
        if (removing && (res.error == ESRCH || res.error == ENOENT)) continue;  // already gone
        if (res.op.kind == netlink::PolicyOp::AddRule && res.error == EEXIST) continue;
        if (stats_.writeErrors++ % 100 == 0) {
            bool rule = res.op.kind == netlink::PolicyOp::AddRule ||
                        res.op.kind == netlink::PolicyOp::RemoveRule;
            log::error(
                "uplink pinning: kernel refused ",
                rule ? "rule iif " + res.op.rule.iif + " table " + std::to_string(res.op.rule.table)
                     : "route " + res.op.route.dst.str() + " table " +
                           std::to_string(res.op.route.table),
                ": ", std::strerror(res.error));
        }
        if (res.op.kind == netlink::PolicyOp::AddRule) rules_.erase(res.op.rule);
    }
}

void UplinkPinner::onRoutes(const std::vector<netlink::RouteKey>& changed, bool snapshotDone) {
    if (!ready_) {
        // Later changes are in the watch's view when the rules are: reconcileAll reads it.
        if (snapshotDone) readRules();
        return;
    }
    if (snapshotDone) {
        reconcileAll();
        return;
    }
    std::map<uint32_t, std::string> byTable;
    for (const auto& [up, table] : tables_) byTable[table] = up;
    std::set<IpPrefix> mainChanged;
    std::set<std::pair<uint32_t, IpPrefix>> tableChanged;
    for (const auto& key : changed) {
        if (key.table == RT_TABLE_MAIN) {
            mainChanged.insert(key.dst);
        } else if (byTable.count(key.table) != 0) {
            tableChanged.insert({key.table, key.dst});
        }
    }
    for (const auto& p : mainChanged)
        for (const auto& [up, table] : tables_) reconcilePrefix(p, up, table);
    for (const auto& [table, p] : tableChanged)
        if (mainChanged.count(p) == 0) reconcilePrefix(p, byTable[table], table);
    flush();
    reconcileRules();
    flush();
}

void UplinkPinner::readRules() {
    if (readingRules_ || ready_ || stopped_) return;
    readingRules_ = true;
    readRulesOf(AF_INET, std::make_shared<std::set<netlink::PolicyRule>>());
}

void UplinkPinner::readRulesOf(int family,
                               const std::shared_ptr<std::set<netlink::PolicyRule>>& found) {
    writer_.dumpRules(family, settings_.protocol,
                      [this, alive = std::weak_ptr<int>(alive_), family, found](
                          int error, const std::vector<netlink::PolicyRule>& rules) {
                          if (alive.expired()) return;
                          if (stopped_) {
                              readingRules_ = false;
                              return;
                          }
                          if (error != 0) return ruleDumpFailed(family, error);
                          for (const auto& r : rules)
                              if (r.priority == settings_.rulePriority) found->insert(r);
                          if (family == AF_INET) return readRulesOf(AF_INET6, found);
                          rulesRead(std::move(*found));
                      });
}

void UplinkPinner::ruleDumpFailed(int family, int error) {
    readingRules_ = false;
    ++stats_.ruleDumpErrors;
    log::warning("uplink pinning: cannot read the kernel's ", family == AF_INET ? "IPv4" : "IPv6",
                 " rules: ", std::strerror(error), "; nothing is pinned until they are read, ",
                 "reading them again in ", ruleRetry_.count(), " s");
    ruleRetryTimer_.expires_after(ruleRetry_);
    ruleRetry_ = std::min(ruleRetry_ * 2, kRuleRetryMax);
    ruleRetryTimer_.async_wait(
        [this, alive = std::weak_ptr<int>(alive_)](const boost::system::error_code& ec) {
            if (!ec && !alive.expired()) readRules();
        });
}

void UplinkPinner::rulesRead(std::set<netlink::PolicyRule> found) {
    readingRules_ = false;
    ruleRetry_ = kRuleRetryMin;
    rules_ = std::move(found);
    ready_ = true;
    auto routes = stats_.routeWrites, rules = stats_.ruleWrites;
    size_t inPlace = rules_.size();
    reconcileAll();
    log::notice("uplink pinning: ", watch_->routes().size(), " routes and ", inPlace,
                " rules in place; reconciled with ", stats_.routeWrites - routes,
                " route writes and ", stats_.ruleWrites - rules, " rule writes");
}

void UplinkPinner::attachStateDb(redis::Connection& client, char separator) {
    table_ = std::make_unique<redis::StateTable>(
        io_, client, kPinTable, separator, [this](const std::string& k) { return rowOf(k); },
        [this] {
            std::vector<std::string> keys;
            for (const auto& [down, pin] : pins_) keys.push_back(down);
            return keys;
        });
}

void UplinkPinner::resyncState() {
    if (table_) table_->resyncAll();
}

std::optional<redis::Fields> UplinkPinner::rowOf(const std::string& downlink) const {
    auto it = pins_.find(downlink);
    auto pin = settings_.pins.find(downlink);
    if (it == pins_.end() || pin == settings_.pins.end()) return std::nullopt;
    uint32_t table = tables_.at(pin->second);
    auto [v4, v6] = it->second.counts;
    return redis::Fields{{"uplink", pin->second},
                         {"table", std::to_string(table)},
                         {"state", pinStateName(it->second.state)},
                         {"reason", it->second.reason},
                         {"routes_v4", std::to_string(v4)},
                         {"routes_v6", std::to_string(v6)},
                         {"since", isoTime(it->second.since)}};
}

}  // namespace twinrail::hostrouted
