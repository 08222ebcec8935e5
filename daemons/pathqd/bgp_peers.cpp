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
    for (const auto& [peer, n] : doc.items()) {
        if (!n.is_object() || !n.contains("bgpState")) continue;  // not a neighbor entry
        std::string state = n.value("bgpState", "");
        auto num = [&n](const char* key) {
            auto it = n.find(key);
            return it != n.end() && it->is_number_integer() ? std::to_string(it->get<long long>())
                                                            : std::string();
        };
        rows[peer] = {
            {"state", state},
            {"remote_as", num("remoteAs")},
            {"remote_router_id", n.value("remoteRouterId", "")},
            {"up_since", state == "Established" ? num("bgpTimerUpEstablishedEpoch") : ""}};
    }
    return rows;
}

BgpPeerMonitor::BgpPeerMonitor(boost::asio::io_context& io, const frr::VtyshOptions& vtysh,
                               redis::Client& stateDb, char separator,
                               std::chrono::seconds interval)
    : vtysh_(io, vtysh),
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
      interval_(interval) {}

void BgpPeerMonitor::start() {
    if (interval_.count() > 0) arm(std::chrono::seconds(1));  // the first read soon
}

void BgpPeerMonitor::stop() {
    timer_.cancel();
}

void BgpPeerMonitor::arm(std::chrono::seconds after) {
    timer_.expires_after(after);
    timer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        if (reading_) return arm(interval_);  // one read at a time
        reading_ = true;
        vtysh_.show("show bgp neighbors json", [this](bool ok, const std::string& text) {
            reading_ = false;
            onNeighbors(ok, text);
            // While a session is not up, look again soon: it usually is within seconds.
            bool allUp = !rows_.empty();
            for (const auto& [peer, f] : rows_)
                for (const auto& [k, v] : f) allUp = allUp && (k != "state" || v == "Established");
            arm(allUp ? interval_ : std::min(interval_, std::chrono::seconds(2)));
        });
    });
}

void BgpPeerMonitor::onNeighbors(bool ok, const std::string& text) {
    std::string error = ok ? "" : text;
    auto rows = ok ? parseBgpNeighbors(text, error) : std::nullopt;
    if (!rows) {
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
