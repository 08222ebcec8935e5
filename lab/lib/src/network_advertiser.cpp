// The lab's stand-in for bgpcfgd's advertise manager (see network_advertiser.h).
#include "twinrail/lab/network_advertiser.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <iostream>

#include "twinrail/common/ip.h"
#include "twinrail/common/names.h"
#include "twinrail/lab/frr_container.h"
#include "twinrail/lab/shell.h"
#include "twinrail/redis/config_db.h"
#include "twinrail/redis/sonic_db.h"

namespace twinrail::lab {
namespace {

using json = nlohmann::json;
constexpr const char* kTable = "ADVERTISE_NETWORK_TABLE";

// The prefix with its host bits cleared, as Python's ip_network(strict=False) gives it.
std::string network(const IpPrefix& p) {
    std::array<uint8_t, 16> bytes{};
    std::copy(p.addr.data(), p.addr.data() + p.addr.size(), bytes.begin());
    for (size_t i = 0; i < p.addr.size(); ++i) {
        const int keep = std::clamp(p.length - static_cast<int>(i) * 8, 0, 8);
        bytes[i] &= static_cast<uint8_t>(0xff00 >> keep);
    }
    IpAddr a = p.addr.isV4() ? IpAddr::v4(bytes.data()) : IpAddr::v6(bytes.data());
    return a.str() + "/" + std::to_string(p.length);
}

bool validAsn(const std::string& asn) {
    if (asn.empty() || asn.size() > 10 || asn.find_first_not_of("0123456789") != std::string::npos)
        return false;
    const unsigned long long v = std::stoull(asn);
    return v >= 1 && v <= 4294967295ULL;
}

std::vector<std::string> importCheck(const std::string& asn, bool on) {
    return {"router bgp " + asn, std::string(on ? " " : " no ") + "bgp network import-check",
            "exit"};
}

std::vector<std::string> networkLine(const std::string& asn, const std::string& prefix, bool add) {
    const bool v6 = prefix.find(':') != std::string::npos;
    return {
        "router bgp " + asn, std::string(" address-family ") + (v6 ? "ipv6" : "ipv4") + " unicast",
        std::string(add ? "  " : "  no ") + "network " + prefix, " exit-address-family", "exit"};
}

}  // namespace

std::optional<std::string> advertisedPrefix(const std::string& key, const json& fields) {
    // A key with a VRF part is bgpcfgd's too, but no lab switch has a VRF (no VRF devices).
    if (key.find('|') != std::string::npos) return std::nullopt;
    if (!(fields.is_object() && fields.size() == 1 && fields.contains("") && fields[""] == ""))
        return std::nullopt;
    auto p = IpPrefix::parse(key);
    if (!p) return std::nullopt;
    return network(*p);
}

std::set<std::string> advertisedPrefixes(const json& tables) {
    std::set<std::string> out;
    auto t = tables.find(kTable);
    if (t == tables.end() || !t->is_object()) return out;
    for (const auto& [key, fields] : t->items())
        if (auto p = advertisedPrefix(key, fields)) out.insert(*p);
    return out;
}

std::vector<NetworkAdvertiser::Step> NetworkAdvertiser::update(const std::string& asn,
                                                               const std::set<std::string>& want) {
    std::vector<Step> steps;
    if (!validAsn(asn)) return steps;   // bgpcfgd waits for DEVICE_METADATA's bgp_asn
    if (asn != asn_) applied_.clear();  // a new AS: everything again (on_bgp_asn_change)
    asn_ = asn;
    for (const auto& p : want) {
        if (applied_.count(p) > 0) continue;
        if (applied_.empty()) steps.push_back(importCheck(asn, false));
        steps.push_back(networkLine(asn, p, true));
        applied_.insert(p);
    }
    for (auto it = applied_.begin(); it != applied_.end();) {
        if (want.count(*it) > 0) {
            ++it;
            continue;
        }
        const std::string p = *it;
        it = applied_.erase(it);
        if (applied_.empty()) steps.push_back(importCheck(asn, true));
        steps.push_back(networkLine(asn, p, false));
    }
    return steps;
}

int runNetworkAdvertiser(const std::string& dbConfig, const std::string& pathspace) {
    if (auto why = names::check(pathspace, names::Kind::Node)) {
        std::cerr << "advertise-networks: pathspace \"" << names::printable(pathspace) << "\" "
                  << *why << "\n";
        return 64;
    }
    redis::DbLocation config, state;
    try {
        config = redis::resolveDb("CONFIG_DB", {}, dbConfig);
        state = redis::resolveDb("STATE_DB", {}, dbConfig);
    } catch (const std::exception& e) {
        std::cerr << "advertise-networks: " << e.what() << "\n";
        return 78;
    }
    boost::asio::io_context io;
    NetworkAdvertiser advertiser;
    std::string asn;
    std::set<std::string> want;
    auto apply = [&] {
        for (const auto& step : advertiser.update(asn, want)) {
            // bgpcfgd runs in the bgp container: vtysh there (the lab's frr_container.h).
            Argv argv = vtyshFor(pathspace);
            argv.insert(argv.end(), {"-c", "configure terminal"});
            for (const auto& line : step) argv.insert(argv.end(), {"-c", line});
            auto r = run(argv);
            std::cout << describe(argv) << " -> " << r.rc << "\n" << std::flush;
            if (r.rc != 0) {
                std::cerr << "advertise-networks: vtysh failed: " << r.out << r.err << "\n";
                advertiser.failed();
                return;
            }
        }
    };
    redis::ConfigDbWatcher metadata(
        io, config.endpoint, config.id, config.separator, {"DEVICE_METADATA"}, [&](const json& db) {
            asn = "";
            const json& row =
                db.value("DEVICE_METADATA", json::object()).value("localhost", json::object());
            if (row.value("bgp_asn", json()).is_string()) asn = row["bgp_asn"].get<std::string>();
            apply();
        });
    redis::ConfigDbWatcher table(io, state.endpoint, state.id, state.separator, {kTable},
                                 [&](const json& db) {
                                     want = advertisedPrefixes(db);
                                     apply();
                                 });
    boost::asio::signal_set signals(io, SIGTERM, SIGINT);
    signals.async_wait([&](const boost::system::error_code&, int) {
        metadata.stop();
        table.stop();
        io.stop();
    });
    metadata.start();
    table.start();
    io.run();
    return 0;
}

}  // namespace twinrail::lab
