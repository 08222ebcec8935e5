#include "network_table.h"

#include "twinrail/common/log.h"

namespace twinrail::hostrouted {
namespace {
constexpr auto kCoalesce = std::chrono::milliseconds(20);
}  // namespace

std::string networkKey(const IpAddr& ip, char separator) {
    return std::string(kNetworkTable) + separator + ip.str() + "/" +
           std::to_string(ip.maxPrefixLen());
}

std::optional<IpAddr> ownedNetworkKey(const std::string& redisKey, char separator,
                                      const std::function<bool(const IpAddr&)>& isOurs) {
    const std::string prefix = std::string(kNetworkTable) + separator;
    if (!redisKey.starts_with(prefix)) return std::nullopt;
    std::string rest = redisKey.substr(prefix.size());
    if (rest.find(separator) != std::string::npos) return std::nullopt;  // a VRF's row
    auto p = IpPrefix::parse(rest);
    if (!p || p->length != p->addr.maxPrefixLen()) return std::nullopt;
    if (rest != p->addr.str() + "/" + std::to_string(p->length)) return std::nullopt;
    if (!isOurs(p->addr)) return std::nullopt;
    return p->addr;
}

NetworkTable::NetworkTable(boost::asio::io_context& io, redis::Connection& db, char separator,
                           Sources sources)
    : db_(db), separator_(separator), sources_(std::move(sources)), flushTimer_(io) {}

void NetworkTable::markDirty(const IpAddr& ip) {
    if (!db_.connected()) return;  // the reconnect reconciles everything
    dirty_.insert(ip);
    scheduleFlush();
}

void NetworkTable::scheduleFlush() {
    if (flushArmed_) return;
    flushArmed_ = true;
    flushTimer_.expires_after(kCoalesce);
    flushTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        flushArmed_ = false;
        flush();
    });
}

void NetworkTable::republish(const std::vector<IpAddr>& ips) {
    for (const auto& ip : ips) {
        advertised_.erase(ip);
        markDirty(ip);
    }
}

void NetworkTable::written(const redis::Value& reply, const std::string& key, const IpAddr& ip) {
    if (!reply.isError() || reply.connectionLost()) return;
    advertised_.erase(ip);  // not known to be there: the next change or audit writes it again
    if (errors_++ == 0)
        log::warning("redis: ", key, " refused: ", reply.str, " (further errors only counted)");
}

void NetworkTable::flush() {
    if (!db_.connected() || resyncing_) return;
    for (const auto& ip : std::exchange(dirty_, {})) {
        const std::string key = networkKey(ip, separator_);
        if (sources_.isLive(ip)) {
            if (!advertised_.insert(ip).second) continue;  // already there
            db_.command({"HSET", key, "", ""},
                        [this, key, ip](const redis::Value& r) { written(r, key, ip); });
        } else if (advertised_.erase(ip) > 0 && sources_.isOurs(ip)) {
            db_.command({"DEL", key},
                        [this, key, ip](const redis::Value& r) { written(r, key, ip); });
        }
    }
}

void NetworkTable::resyncAll() {
    dirty_.clear();
    advertised_.clear();
    resyncing_ = true;
    scanFrom("0", std::make_shared<std::vector<std::string>>());
}

void NetworkTable::scanFrom(const std::string& cursor,
                            const std::shared_ptr<std::vector<std::string>>& found) {
    bool sent = db_.command(
        {"SCAN", cursor, "MATCH", std::string(kNetworkTable) + separator_ + "*", "COUNT", "2000"},
        [this, found](const redis::Value& reply) {
            if (reply.type != redis::Value::Type::Array || reply.elements.size() != 2) {
                if (!reply.connectionLost()) {
                    log::warning("redis: unexpected SCAN reply for ", kNetworkTable, ": ",
                                 reply.str);
                }
                resyncing_ = false;  // the next reconnect tries again
                return;
            }
            for (const auto& k : reply.elements[1].elements) found->push_back(k.str);
            if (reply.elements[0].str == "0") return finishResync(*found);
            scanFrom(reply.elements[0].str, found);
        });
    if (!sent) resyncing_ = false;
}

void NetworkTable::finishResync(const std::vector<std::string>& existing) {
    resyncing_ = false;
    // Live rows first: bgpcfgd sees no gap for a host that is still there.
    size_t live = 0;
    for (const auto& ip : sources_.live()) {
        const std::string key = networkKey(ip, separator_);
        advertised_.insert(ip);
        db_.command({"HSET", key, "", ""},
                    [this, key, ip = ip](const redis::Value& r) { written(r, key, ip); });
        ++live;
    }
    size_t removed = 0;
    for (const auto& key : existing) {
        auto ip = ownedNetworkKey(key, separator_, sources_.isOurs);
        if (!ip || sources_.isLive(*ip)) continue;
        db_.command({"DEL", key},
                    [this, key, ip = *ip](const redis::Value& r) { written(r, key, ip); });
        ++removed;
    }
    removedStale_ += removed;
    log::info("redis: ", kNetworkTable, ": ", live, " host routes advertised, ", removed,
              " stale rows of ours removed, ", existing.size() - removed,
              " rows left (live or not ours)");
    flush();
}

}  // namespace twinrail::hostrouted
