// The lab's stand-in for SONiC bgpcfgd's advertise manager (AdvertiseRouteMgr,
// src/sonic-bgpcfgd/bgpcfgd/managers_advertise_rt.py). NOT part of the product: on a SONiC
// switch bgpcfgd does this; it cannot run here (no swsscommon), and before 202411 it is
// how hostrouted's host routes reach BGP (HOSTROUTED|global advertise network-table).
//
// It watches STATE_DB ADVERTISE_NETWORK_TABLE (keyspace notifications) and CONFIG_DB
// DEVICE_METADATA|localhost bgp_asn, and configures FRR as bgpcfgd renders it:
//   first prefix     router bgp ASN / no bgp network import-check / exit
//   each prefix      router bgp ASN / address-family ipv4|ipv6 unicast / network P /
//                    exit-address-family / exit          (`no network P` when it goes)
//   last one gone    router bgp ASN / bgp network import-check / exit
// Only rows bgpcfgd accepts without a route-map profile: default VRF, value {"": ""}.
// FRR is configured through vtysh with an argument vector, never a shell; every prefix
// is parsed and re-formatted before it reaches vtysh.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace twinrail::lab {

// The prefix an ADVERTISE_NETWORK_TABLE row asks for (`key` without the table name),
// as bgpcfgd normalises it (ipaddress.ip_network(strict=False): host bits cleared), or
// nullopt for a row bgpcfgd would not advertise as a plain network (a VRF key, a
// profile, a bad prefix).
std::optional<std::string> advertisedPrefix(const std::string& key, const nlohmann::json& fields);

// Every prefix of an ADVERTISE_NETWORK_TABLE snapshot ({"ADVERTISE_NETWORK_TABLE":
// {key: fields}}) that advertisedPrefix() accepts.
std::set<std::string> advertisedPrefixes(const nlohmann::json& stateDbTables);

// What bgpcfgd would push, step by step; no I/O. Each step is one vtysh session of
// configuration lines (after `configure terminal`).
class NetworkAdvertiser {
  public:
    using Step = std::vector<std::string>;
    // The next desired state: the AS (empty: DEVICE_METADATA has none yet, so nothing is
    // configured) and the prefixes. Returns the steps to get there from what it applied.
    std::vector<Step> update(const std::string& asn, const std::set<std::string>& want);
    // A step failed: forget what it would have applied, so the next update retries it.
    void failed() { applied_.clear(), asn_.clear(); }
    const std::set<std::string>& applied() const { return applied_; }

  private:
    std::string asn_;
    std::set<std::string> applied_;
};

// Runs the advertiser until SIGTERM: Redis found through `dbConfig` (database_config
// .json), FRR through `vtysh -N pathspace`. Returns an exit code.
int runNetworkAdvertiser(const std::string& dbConfig, const std::string& pathspace);

}  // namespace twinrail::lab
