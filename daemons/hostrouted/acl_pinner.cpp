#include "acl_pinner.h"

#include <linux/rtnetlink.h>

#include <boost/asio/post.hpp>

#include "twinrail/common/log.h"
#include "twinrail/redis/producer_table.h"
#include "uplink_pinner.h"  // kPinTable

namespace twinrail::hostrouted {
namespace {

constexpr const char* kAclRuleTable = "ACL_RULE_TABLE";

class ApplDbSink final : public AclRuleSink {
  public:
    ApplDbSink(std::unique_ptr<redis::Connection> db, int id)
        : db_(std::move(db)), producer_(*db_, kAclRuleTable, id) {}
    void start() override { db_->start(); }
    bool ready() const override { return db_->connected(); }
    void onReady(std::function<void()> fn) override { db_->onConnected(std::move(fn)); }
    void set(const std::string& rule, const redis::Fields& fields) override {
        producer_.set(keyOf(rule), fields);
    }
    void del(const std::string& rule) override { producer_.del(keyOf(rule)); }
    void readRules(std::function<void(bool, std::vector<std::string>)> done) override {
        const std::string prefix = std::string(kPinAclTable) + ":";
        producer_.keysWithPrefix(
            prefix, [done = std::move(done), prefix](bool ok, std::vector<std::string> keys) {
                for (auto& k : keys) k = k.substr(prefix.size());
                done(ok, std::move(keys));
            });
    }

  private:
    static std::string keyOf(const std::string& rule) {
        return std::string(kPinAclTable) + ":" + rule;
    }
    std::unique_ptr<redis::Connection> db_;
    redis::ProducerTable producer_;
};

}  // namespace

std::unique_ptr<AclRuleSink> makeApplDbAclSink(std::unique_ptr<redis::Connection> applDb,
                                               int applDbId) {
    return std::make_unique<ApplDbSink>(std::move(applDb), applDbId);
}

AclPinner::AclPinner(boost::asio::io_context& io, PinSettings settings,
                     std::unique_ptr<AclRuleSink> sink, const netlink::RouteFeedFactory& feed)
    : io_(io), settings_(std::move(settings)), sink_(std::move(sink)) {
    feed_ = feed({RT_TABLE_MAIN}, [this](const std::vector<netlink::RouteKey>& keys,
                                         bool snapshotDone) { onRoutes(keys, snapshotDone); });
}

void AclPinner::start() {
    sink_->onReady([this, alive = std::weak_ptr<int>(alive_)] {
        if (alive.expired()) return;
        known_ = false;
        sink_->readRules([this, alive](bool ok, std::vector<std::string> present) {
            if (alive.expired()) return;
            if (!ok) {
                ++stats_.readErrors;
                log::warning("uplink pins (ACL): cannot read APPL_DB's ", kPinAclTable,
                             " rules; writing all of them");
            }
            reconcile(ok ? std::move(present) : std::vector<std::string>{});
        });
    });
    feed_->start();
    sink_->start();
    changed();
}

void AclPinner::stop() {
    feed_->stop();
}

void AclPinner::setSettings(PinSettings settings) {
    if (settings == settings_) return;
    settings_ = std::move(settings);
    allRoutes();
    changed();
}

void AclPinner::setLocal(std::vector<IpPrefix> local) {
    if (local == local_) return;
    local_ = std::move(local);
    changed();
}

void AclPinner::onLink(const netlink::LinkState& link, bool removed) {
    const auto before = uplinkIfindexes();
    if (removed) {
        names_.erase(link.ifindex);
        operUp_.erase(link.name);
        neighbors_.erase(link.ifindex);
    } else {
        names_[link.ifindex] = link.name;
        operUp_[link.name] = link.operUp;
    }
    if (uplinkIfindexes() != before) allRoutes();
    changed();
}

void AclPinner::onNeighbor(const netlink::NeighborEntry& neigh, bool removed) {
    if (!neigh.ip.isV6() || !neigh.ip.isLinkLocal()) return;
    auto& on = neighbors_[neigh.ifindex];
    if (removed) {
        on.erase(neigh.ip);
    } else {
        on[neigh.ip] = neigh.state;
    }
    changed();
}

void AclPinner::onRoutes(const std::vector<netlink::RouteKey>& keys, bool snapshotDone) {
    if (snapshotDone) {
        allRoutes();
    } else {
        for (const auto& k : keys) routeOf(k.dst);
    }
    changed();
}

// The pinned uplinks that exist, by name.
std::map<std::string, int> AclPinner::uplinkIfindexes() const {
    std::map<std::string, int> out;
    for (const auto& [downlink, uplink] : settings_.pins) {
        for (const auto& [ifindex, name] : names_)
            if (name == uplink) out[uplink] = ifindex;
    }
    return out;
}

// Which pinned uplinks main routes `prefix` through now (the kernel pins' rule).
void AclPinner::routeOf(const IpPrefix& prefix) {
    const auto main = netlink::entriesOf(feed_->routes(), RT_TABLE_MAIN, prefix);
    std::set<std::string> through;
    bool forwarded = false;
    for (const auto& [uplink, ifindex] : uplinkIfindexes()) {
        auto entry = pinnedEntry(main, ifindex, 0, 0, settings_.minWeightRatio);
        forwarded = forwarded || entry.has_value();
        if (entry && entry->type == RTN_UNICAST) through.insert(uplink);
    }
    if (forwarded) {
        routes_[prefix] = std::move(through);
    } else {
        routes_.erase(prefix);
    }
}

void AclPinner::allRoutes() {
    routes_.clear();
    for (const auto& [key, route] : feed_->routes())
        if (key.table == RT_TABLE_MAIN && routes_.count(key.dst) == 0) routeOf(key.dst);
}

// One pass per burst of events: the plan, then the writes.
void AclPinner::changed() {
    if (flushQueued_) return;
    flushQueued_ = true;
    boost::asio::post(io_, [this, alive = std::weak_ptr<int>(alive_)] {
        if (alive.expired()) return;
        flushQueued_ = false;
        replan();
        flush();
    });
}

void AclPinner::replan() {
    std::map<std::string, AclUplink> uplinks;
    for (const auto& [uplink, ifindex] : uplinkIfindexes()) {
        std::vector<UplinkNeighbor> seen;
        for (const auto& [ip, state] : neighbors_[ifindex]) seen.push_back({ip, state});
        uplinks[uplink] = {operUp_[uplink], aclNextHop(seen)};
    }
    AclPinPlan next = aclPinPlan(settings_.pins, uplinks, local_, routes_);
    if (table_) {
        for (const auto& [downlink, view] : next.pins) {
            auto was = plan_.pins.find(downlink);
            if (was == plan_.pins.end() || was->second.state != view.state ||
                was->second.reason != view.reason || was->second.redirect != view.redirect)
                table_->markDirty(downlink);
        }
        for (const auto& [downlink, view] : plan_.pins)
            if (next.pins.count(downlink) == 0) table_->markDirty(downlink);
    }
    plan_ = std::move(next);
}

void AclPinner::reconcile(const std::vector<std::string>& present) {
    written_.clear();
    // Rules of ours that APPL_DB has and we do not want: deleted by flush (written_ says
    // they are there, with fields we never write, so each is either rewritten or gone).
    for (const auto& rule : present) written_[rule] = {};
    known_ = true;
    replan();
    flush();
}

void AclPinner::flush() {
    // After the next connect's read, and once main is known (a pin without its prefix
    // rules would send what the spine lost to it).
    if (!known_ || !sink_->ready() || !feed_->synced()) return;
    for (auto it = written_.begin(); it != written_.end();) {
        if (plan_.rules.count(it->first) > 0) {
            ++it;
            continue;
        }
        sink_->del(it->first);
        ++stats_.ruleDeletes;
        it = written_.erase(it);
    }
    for (const auto& [rule, fields] : plan_.rules) {
        auto& have = written_[rule];
        if (have == fields) continue;
        // A rule whose fields change is deleted first: the consumer merges fields into
        // the rule, it never drops one.
        if (!have.empty()) sink_->del(rule);
        sink_->set(rule, fields);
        ++stats_.ruleWrites;
        have = fields;
    }
}

void AclPinner::attachStateDb(redis::Connection& client, char separator) {
    table_ = std::make_unique<redis::StateTable>(
        io_, client, kPinTable, separator, [this](const std::string& key) { return rowOf(key); },
        [this] {
            std::vector<std::string> keys;
            for (const auto& [downlink, view] : plan_.pins) keys.push_back(downlink);
            return keys;
        });
}

void AclPinner::resyncState() {
    if (table_) table_->resyncAll();
}

std::optional<redis::Fields> AclPinner::rowOf(const std::string& downlink) const {
    auto it = plan_.pins.find(downlink);
    if (it == plan_.pins.end()) return std::nullopt;
    return redis::Fields{
        {"uplink", settings_.pins.count(downlink) ? settings_.pins.at(downlink) : ""},
        {"state", pinStateName(it->second.state)},
        {"reason", it->second.reason},
        {"mechanism", "acl"},
        {"redirect", it->second.redirect}};
}

}  // namespace twinrail::hostrouted
