#include "bgp_peers.h"

#include <nlohmann/json.hpp>

#include "twinrail/common/log.h"

namespace twinrail::pathqd {

std::optional<std::map<std::string, redis::Fields>> parseBgpNeighbors(const std::string& json,
                                                                      std::string& error) {
    auto doc = nlohmann::json::parse(json, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        error = "BGP neighbors: not the JSON bgpd writes";
        return std::nullopt;
    }
    std::map<std::string, redis::Fields> rows;
    try {  // value() throws when a field has another type than bgpd gives it
        for (const auto& item : doc.items()) {
            const auto& n = item.value();
            if (!n.is_object() || !n.contains("bgpState")) continue;  // not a neighbor entry
            std::string state = n.value("bgpState", "");
            auto num = [&n](const char* key) {
                auto it = n.find(key);
                return it != n.end() && it->is_number_integer()
                           ? std::to_string(it->get<long long>())
                           : std::string();
            };
            rows[item.key()] = {
                {"state", state},
                {"remote_as", num("remoteAs")},
                {"remote_router_id", n.value("remoteRouterId", "")},
                {"up_since", state == "Established" ? num("bgpTimerUpEstablishedEpoch") : ""}};
        }
    } catch (const nlohmann::json::exception& e) {
        error = std::string("BGP neighbors: unexpected JSON: ") + e.what();
        return std::nullopt;
    }
    return rows;
}

BgpPeerMonitor::BgpPeerMonitor(boost::asio::io_context& io, frr::Channel& frr,
                               redis::Connection& stateDb, char separator,
                               std::chrono::milliseconds interval,
                               std::chrono::milliseconds firstRead)
    : frr_(frr),
      table_(
          io, stateDb, kBgpPeerTable, separator,
          [this](const std::string& key) -> std::optional<redis::Fields> {
              auto it = rows_.find(key);
              if (it == rows_.end()) return std::nullopt;
              return it->second;
          },
          [this] {
              std::vector<std::string> keys;
              for (const auto& [k, v] : rows_) keys.push_back(k);
              return keys;
          }),
      timer_(io),
      interval_(interval),
      firstRead_(firstRead) {}

void BgpPeerMonitor::start() {
    if (interval_.count() > 0) arm(firstRead_);  // the first read soon
}

void BgpPeerMonitor::stop() {
    timer_.cancel();
}

void BgpPeerMonitor::arm(std::chrono::milliseconds after) {
    timer_.expires_after(after);
    timer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        if (reading_) return arm(interval_);  // one read at a time
        reading_ = true;
        std::weak_ptr<int> alive = alive_;
        frr_.show("show bgp neighbors json", [this, alive](bool ok, const std::string& text) {
            if (alive.expired()) return;
            reading_ = false;
            onNeighbors(ok, text);
            // While a session is not up, look again soon: it usually is within seconds.
            bool allUp = !rows_.empty();
            for (const auto& [peer, f] : rows_)
                for (const auto& [k, v] : f) allUp = allUp && (k != "state" || v == "Established");
            arm(allUp ? interval_
                      : std::min<std::chrono::milliseconds>(interval_, std::chrono::seconds(2)));
        });
    });
}

void BgpPeerMonitor::onNeighbors(bool ok, const std::string& text) {
    std::string error = ok ? "" : text;
    auto rows = ok ? parseBgpNeighbors(text, error) : std::nullopt;
    if (!rows) {
        ++readErrors_;
        if (!loggedError_) log::warning("cannot read BGP sessions: ", error);
        loggedError_ = true;
        return;
    }
    loggedError_ = false;
    for (const auto& [k, v] : *rows)
        if (auto it = rows_.find(k); it == rows_.end() || it->second != v) table_.markDirty(k);
    for (const auto& [k, v] : rows_)
        if (rows->count(k) == 0) table_.markDirty(k);
    rows_ = std::move(*rows);
}

}  // namespace twinrail::pathqd
