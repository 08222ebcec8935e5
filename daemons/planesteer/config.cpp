#include "config.h"

#include <sstream>

#include "twinrail/common/names.h"

namespace twinrail::planesteer {
namespace {
// 256 buckets of 4095 pins each (pin_table.h); more peers than that would not fit anyway.
constexpr long long kMaxPeerCap = 1'000'000;
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
                             "max_remote_peers", "remote_idle_s", "sample_one_in"});
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
            if (f.key() != "ports" && f.key() != "gateway" && f.key() != "fabric") {
                return service::ConfigError{where + " field " + names::printable(f.key()),
                                            "unknown (ports, gateway, fabric)"};
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
        c.bonds[it.key()] = bond;
    }
    return c;
}

}  // namespace twinrail::planesteer
