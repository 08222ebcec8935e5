#include "config.h"

#include <set>
#include <sstream>

#include "twinrail/common/names.h"

namespace twinrail::planesteer {
namespace {
// 256 buckets of 4095 pins each (pin_table.h); more peers than that would not fit anyway.
constexpr long long kMaxPeerCap = 1'000'000;

std::vector<std::string> items(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');) out.push_back(item);
    return out;
}

std::optional<uint8_t> planeNumber(const std::string& text) {
    if (text.empty() || text.size() > 2 ||
        text.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    int n = std::stoi(text);
    if (n < 1 || n > 15) return std::nullopt;
    return static_cast<uint8_t>(n);
}

// "1:<hex>,2:<hex>". A refusal names the item's position, never its text: it is a secret.
std::optional<std::string> parseNoticeKeys(const std::string& text,
                                           std::map<uint8_t, fnn::Key>& out) {
    auto list = items(text);
    for (size_t i = 0; i < list.size(); ++i) {
        auto colon = list[i].find(':');
        auto plane = planeNumber(list[i].substr(0, colon));
        auto key =
            colon == std::string::npos ? std::nullopt : fnn::parseKeyHex(list[i].substr(colon + 1));
        if (!plane || !key)
            return "item " + std::to_string(i + 1) + " is not <plane 1..15>:<64 hex digits>";
        if (!out.emplace(*plane, *key).second)
            return "plane " + std::to_string(*plane) + " has two keys";
    }
    return std::nullopt;
}

std::optional<service::ConfigError> parseBondNotices(const nlohmann::json& row,
                                                     const std::string& where, BondConfig& bond) {
    if (auto f = row.find("planes"); f != row.end()) {
        bond.planes.clear();
        for (const auto& item : items(f->get<std::string>())) {
            auto plane = planeNumber(item);
            if (!plane) return service::ConfigError{where + " field planes", "not a plane 1..15"};
            bond.planes.push_back(*plane);
        }
        if (bond.planes.size() != bond.ports.size() || bond.planes[0] == bond.planes[1])
            return service::ConfigError{where + " field planes", "needs two different planes"};
    }
    if (auto f = row.find("notice_keys"); f != row.end()) {
        if (auto why = parseNoticeKeys(f->get<std::string>(), bond.noticeKeys))
            return service::ConfigError{where + " field notice_keys", *why};
    }
    return std::nullopt;
}

std::optional<service::ConfigError> parseNoticeSenders(const nlohmann::json& doc, Config& c) {
    auto t = doc.find("PLANESTEER_NOTICE");
    if (t == doc.end()) return std::nullopt;
    if (!t->is_object()) return service::ConfigError{"PLANESTEER_NOTICE", "must be an object"};
    for (auto it = t->begin(); it != t->end(); ++it) {
        std::string where = "PLANESTEER_NOTICE|" + names::printable(it.key());
        auto plane = planeNumber(it.key());
        if (!plane) return service::ConfigError{where, "not a plane 1..15"};
        if (!it.value().is_object() || !it.value().contains("senders") ||
            !it.value()["senders"].is_string() || it.value().size() != 1)
            return service::ConfigError{where + " field senders", "the only field, a string"};
        auto& senders = c.noticeSenders[*plane];
        for (const auto& item : items(it.value()["senders"].get<std::string>())) {
            auto ip = IpAddr::parse(item);
            if (!ip || ip->isUnspecified() || ip->isMulticast()) {
                return service::ConfigError{where + " field senders",
                                            "\"" + names::printable(item) + "\" is not an address"};
            }
            senders.insert(*ip);
        }
    }
    return std::nullopt;
}

}  // namespace

std::variant<Config, service::ConfigError> parseConfig(const nlohmann::json& doc) {
    Config c;
    if (!doc.is_object()) return service::ConfigError{"config", "must be a JSON object of tables"};
    if (auto t = doc.find("PLANESTEER"); t != doc.end()) {
        for (auto it = t->begin(); it != t->end(); ++it) {
            std::string where = "PLANESTEER|" + names::printable(it.key());
            if (it.key() != "global")
                return service::ConfigError{where, "unknown key (only \"global\")"};
            service::FieldReader r{it.value(), where, std::nullopt};
            if (!it.value().is_object())
                return service::ConfigError{where, "must be an object of fields"};
            r.rejectUnknown({"interval_ms", "misses", "active_interval_ms", "active_window_ms",
                             "max_active_peers", "max_peers", "max_onlink_peers",
                             "max_remote_peers", "remote_idle_s", "sample_one_in", "notice_port"});
            r.integer("notice_port", c.noticePort, 0, 65535);
            long long ms = c.steer.interval.count();
            r.integer("interval_ms", ms, 20, 10000);
            c.steer.interval = std::chrono::milliseconds(ms);
            r.integer("misses", c.steer.misses, 1, 100);
            long long activeMs = c.steer.activeInterval.count();
            r.integer("active_interval_ms", activeMs, 5, 10000);
            c.steer.activeInterval = std::chrono::milliseconds(activeMs);
            long long windowMs = c.activeWindow.count();
            r.integer("active_window_ms", windowMs, 100, 60000);
            c.activeWindow = std::chrono::milliseconds(windowMs);
            r.integer("max_active_peers", c.maxActivePeers, 0, kMaxPeerCap);
            // max_peers, from before the two budgets, caps each kind unless told apart.
            size_t legacyMax = 0;
            r.integer("max_peers", legacyMax, 1, kMaxPeerCap);
            if (legacyMax != 0) c.maxOnlinkPeers = c.maxRemotePeers = legacyMax;
            r.integer("max_onlink_peers", c.maxOnlinkPeers, 1, kMaxPeerCap);
            r.integer("max_remote_peers", c.maxRemotePeers, 1, kMaxPeerCap);
            long long idle = c.remoteIdle.count();
            r.integer("remote_idle_s", idle, 1, 3600);
            c.remoteIdle = std::chrono::seconds(idle);
            r.integer("sample_one_in", c.sampleOneIn, 1, 65536);
            if (r.error) return *r.error;
            if ((c.sampleOneIn & (c.sampleOneIn - 1)) != 0) {
                return service::ConfigError{
                    where + " field sample_one_in",
                    std::to_string(c.sampleOneIn) + " is not a power of two"};
            }
            // Active peers are probed at least as often as idle ones; a config that says
            // otherwise is a typo, not a wish.
            if (c.steer.activeInterval > c.steer.interval) {
                return service::ConfigError{where + " field active_interval_ms",
                                            std::to_string(activeMs) +
                                                " is longer than interval_ms (" +
                                                std::to_string(ms) + ")"};
            }
        }
    }
    auto t = doc.find("PLANESTEER_BOND");
    if (t == doc.end() || !t->is_object() || t->empty())
        return service::ConfigError{"PLANESTEER_BOND", "no bond to steer"};
    for (auto it = t->begin(); it != t->end(); ++it) {
        std::string where = "PLANESTEER_BOND|" + names::printable(it.key());
        // The bond and its ports are kernel names that reach tc and packet sockets.
        if (auto why = names::check(it.key(), names::Kind::Interface))
            return service::ConfigError{where, "interface name " + *why};
        if (!it.value().is_object() || !it.value().contains("ports") ||
            !it.value()["ports"].is_string())
            return service::ConfigError{where + " field ports", "missing: \"port1,port2\""};
        BondConfig bond;
        std::stringstream in(it.value()["ports"].get<std::string>());
        for (std::string p; std::getline(in, p, ',');)
            if (!p.empty()) bond.ports.push_back(p);
        if (bond.ports.size() != 2)
            return service::ConfigError{where + " field ports", "needs exactly two ports"};
        for (const auto& p : bond.ports) {
            if (auto why = names::check(p, names::Kind::Interface)) {
                return service::ConfigError{
                    where + " field ports",
                    "interface name \"" + names::printable(p) + "\" " + *why};
            }
        }
        for (auto f = it.value().begin(); f != it.value().end(); ++f) {
            static const std::set<std::string> kFields{"ports", "gateway", "fabric", "planes",
                                                       "notice_keys"};
            if (kFields.count(f.key()) == 0) {
                return service::ConfigError{
                    where + " field " + names::printable(f.key()),
                    "unknown (ports, gateway, fabric, planes, notice_keys)"};
            }
            if (f.key() != "ports" && !f.value().is_string())
                return service::ConfigError{where + " field " + f.key(), "must be a string"};
        }
        if (auto g = it.value().find("gateway"); g != it.value().end()) {
            bond.gateway = IpAddr::parse(g->get<std::string>());
            if (!bond.gateway || !bond.gateway->isV4()) {
                return service::ConfigError{where + " field gateway",
                                            "\"" + g->get<std::string>() + "\" is not IPv4"};
            }
        }
        if (auto f = it.value().find("fabric"); f != it.value().end()) {
            bond.fabric = IpPrefix::parse(f->get<std::string>());
            if (!bond.fabric || !bond.fabric->addr.isV4()) {
                return service::ConfigError{
                    where + " field fabric",
                    "\"" + f->get<std::string>() + "\" is not an IPv4 prefix"};
            }
        }
        if (bond.gateway.has_value() != bond.fabric.has_value())
            return service::ConfigError{where, "gateway and fabric go together"};
        if (auto err = parseBondNotices(it.value(), where, bond)) return *err;
        c.bonds[it.key()] = bond;
    }
    if (auto err = parseNoticeSenders(doc, c)) return *err;
    return c;
}

}  // namespace twinrail::planesteer
