#include "config.h"

#include <cstring>
#include <set>
#include <string_view>

#include "twinrail/common/names.h"

namespace twinrail::pathqd {
namespace {

using nlohmann::json;
using service::FieldReader;

// Linear matching per datagram stays cheap, and a list this long is a mistake anyway.
constexpr size_t kMaxIntSources = 64;

bool isV4Mapped(const IpAddr& a) {
    static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return a.isV6() && std::memcmp(a.data(), kMapped, sizeof kMapped) == 0;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    return s;
}

// A name read from the config: refused unless it fits the shared grammar, so it can never
// carry a newline or a '!' into a vtysh line, nor a '/' or ".." into a path.
void checkName(FieldReader& r, const std::string& field, const std::string& value,
               names::Kind kind) {
    if (auto why = names::check(value, kind)) {
        r.fail(field, "\"" + value + "\" is not a valid " + std::string(names::kindName(kind)) +
                          ": " + *why);
    }
}

// "10.0.0.0/24, 2001:db8::7" -> prefixes; empty: the default (this host only).
void intSources(FieldReader& r, std::vector<IpPrefix>& out) {
    auto text = r.text("int_sources");
    if (!text || trim(*text).empty()) return;
    std::vector<IpPrefix> list;
    std::string_view rest = *text;
    while (!r.error) {
        auto comma = rest.find(',');
        auto item = trim(rest.substr(0, comma));
        auto prefix = IpPrefix::parse(item);
        if (item.empty()) {
            r.fail("int_sources", "has an empty entry");
        } else if (!prefix) {
            r.fail("int_sources", "\"" + std::string(item) + "\" is not an address or prefix");
        } else if (isV4Mapped(prefix->addr)) {
            // IPv4 senders are matched as IPv4 (a mapped source is unmapped first), so a
            // mapped entry would never match: say so rather than refuse them silently.
            r.fail("int_sources", "\"" + std::string(item) + "\" is IPv4-mapped: write it as IPv4");
        } else if (prefix->length == 0) {
            r.fail("int_sources",
                   "\"" + std::string(item) + "\" accepts every source: list the INT senders");
        } else if (list.size() >= kMaxIntSources) {
            r.fail("int_sources", "more than " + std::to_string(kMaxIntSources) + " entries");
        } else {
            list.push_back(*prefix);
        }
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    if (!r.error) out = std::move(list);
}

void millis(FieldReader& r, const std::string& field, std::chrono::milliseconds& out, long long lo,
            long long hi) {
    long long v = out.count();
    r.integer(field, v, lo, hi);
    out = std::chrono::milliseconds(v);
}

// weight_audit_source and sonic_release. Repair on SONiC is refused: the ASIC forwards by
// APPL_DB/ASIC_DB, which fpmsyncd and orchagent own, and a kernel route delete there
// would withdraw the route from the ASIC through FPM (traffic to the covering route)
// rather than re-push the same weights; the fix is zebra's or orchagent's, not pathqd's.
void weightAuditSource(FieldReader& r, Config& cfg) {
    if (auto s = r.text("weight_audit_source")) {
        if (*s == "kernel") {
            cfg.weightAuditSource = WeightAuditSource::Kernel;
        } else if (*s == "sonic") {
            cfg.weightAuditSource = WeightAuditSource::Sonic;
        } else {
            r.fail("weight_audit_source", "\"" + *s + "\" is not kernel or sonic");
        }
    }
    // "master": SONiC's development branch, newer than every YYYYMM release.
    if (r.text("sonic_release") == "master") {
        cfg.sonicRelease = kSonicMasterRelease;
    } else {
        r.integer("sonic_release", cfg.sonicRelease, 201811, 209912);
        if (!r.error && (cfg.sonicRelease % 100 < 1 || cfg.sonicRelease % 100 > 12))
            r.fail("sonic_release", std::to_string(cfg.sonicRelease) + " is not a YYYYMM month");
    }
    if (!r.error && cfg.weightAuditRepair && cfg.weightAuditSource == WeightAuditSource::Sonic) {
        r.fail("weight_audit_repair",
               "cannot be true with weight_audit_source sonic: the ASIC forwards by APPL_DB and "
               "ASIC_DB, which fpmsyncd and orchagent own; a kernel route delete would withdraw "
               "the route from the ASIC, not correct its weights");
    }
}

std::optional<ConfigError> parseGlobal(const json& row, Config& cfg) {
    const std::string where = "PATHQD|global";
    if (!row.is_object()) return ConfigError{where, "must be an object of fields"};
    FieldReader r{row, where, std::nullopt};
    r.rejectUnknown({"sample_interval_ms",
                     "levels",
                     "reference_mbps",
                     "max_penalty",
                     "util_knee",
                     "queue_ref_us",
                     "latency_ref_us",
                     "drop_ref",
                     "ecn_ref",
                     "pfc_ref_pps",
                     "smoothing_ms",
                     "hysteresis",
                     "confirm_samples",
                     "min_hold_ms",
                     "raise_hold_ms",
                     "fast_drop",
                     "source",
                     "publish",
                     "ipv4",
                     "ipv6",
                     "probe_port",
                     "peer_report_timeout_ms",
                     "int_port",
                     "int_node_id",
                     "int_latency_unit_ns",
                     "int_queue_unit_bytes",
                     "int_util_scale",
                     "int_sources",
                     "int_interface",
                     "weights_interval_ms",
                     "weight_audit_interval",
                     "weight_audit_repair",
                     "weight_audit_source",
                     "sonic_release",
                     "bgp_peers_interval"});
    auto& m = cfg.model;
    millis(r, "sample_interval_ms", cfg.sampleInterval, 10, 10000);
    r.integer("levels", m.levels, 2, 100);
    double refMbps = m.referenceBps / 1e6;
    r.number("reference_mbps", refMbps, 1, 1e9);
    m.referenceBps = refMbps * 1e6;
    r.number("max_penalty", m.maxPenalty, 0, 0.95);
    r.number("util_knee", m.utilKnee, 0, 0.99);
    double queueUs = m.queueRefSeconds * 1e6, latencyUs = m.latencyRefSeconds * 1e6;
    r.number("queue_ref_us", queueUs, 0.1, 1e7);
    r.number("latency_ref_us", latencyUs, 0.1, 1e7);
    m.queueRefSeconds = queueUs / 1e6;
    m.latencyRefSeconds = latencyUs / 1e6;
    r.number("drop_ref", m.dropRefRatio, 1e-6, 1);
    r.number("ecn_ref", m.ecnRefRatio, 0, 1);
    r.number("pfc_ref_pps", m.pauseRefPps, 0, 1e9);
    millis(r, "smoothing_ms", m.smoothing, 0, 600000);
    r.number("hysteresis", m.hysteresis, 0, 10);
    r.integer("confirm_samples", m.confirmSamples, 1, 100);
    millis(r, "min_hold_ms", m.minHold, 0, 3600000);
    millis(r, "raise_hold_ms", m.raiseHold, 0, 3600000);
    r.number("fast_drop", m.fastDrop, 0, 1);
    if (auto s = r.text("source")) {
        if (*s == "linux") {
            cfg.source = CounterKind::Linux;
        } else if (*s == "sonic") {
            cfg.source = CounterKind::Sonic;
        } else {
            r.fail("source", "\"" + *s + "\" is not linux or sonic");
        }
    }
    r.boolean("publish", cfg.publish);
    r.boolean("ipv4", cfg.ipv4);
    r.boolean("ipv6", cfg.ipv6);
    r.integer("probe_port", cfg.probePort, 0, 65535);
    millis(r, "peer_report_timeout_ms", cfg.peerReportTimeout, 100, 3600000);
    r.integer("int_port", cfg.intPort, 0, 65535);
    long long node = -1;
    r.integer("int_node_id", node, 0, 0xffffffffLL);
    if (node >= 0) cfg.intNodeId = static_cast<uint32_t>(node);
    r.number("int_latency_unit_ns", cfg.intLatencyUnitNs, 1e-3, 1e9);
    r.number("int_queue_unit_bytes", cfg.intQueueUnitBytes, 1e-3, 1e6);
    r.number("int_util_scale", cfg.intUtilScale, 1, 1e9);
    intSources(r, cfg.intSources);
    if (auto iface = r.text("int_interface"); iface && !iface->empty()) {
        checkName(r, "int_interface", *iface, names::Kind::Interface);
        cfg.intInterface = *iface;
    }
    millis(r, "weights_interval_ms", cfg.weightsInterval, 100, 3600000);
    long long audit = cfg.weightAuditInterval.count();
    r.integer("weight_audit_interval", audit, 0, 86400);
    cfg.weightAuditInterval = std::chrono::seconds(audit);
    r.boolean("weight_audit_repair", cfg.weightAuditRepair);
    weightAuditSource(r, cfg);
    long long peers =
        std::chrono::duration_cast<std::chrono::seconds>(cfg.bgpPeersInterval).count();
    r.integer("bgp_peers_interval", peers, 0, 3600);
    cfg.bgpPeersInterval = std::chrono::seconds(peers);
    if (!r.error && cfg.probePort != 0 && cfg.probePort == cfg.intPort)
        r.fail("int_port", "must differ from probe_port");
    return r.error;
}

std::optional<ConfigError> parsePort(const std::string& name, const json& row, PortConfig& port) {
    const std::string where = "PATHQD_PORT|" + name;
    // The key becomes a vtysh neighbor and route-map name: checked before anything else.
    if (auto why = names::check(name, names::Kind::Interface)) {
        return ConfigError{where,
                           "port name \"" + name + "\" is not a valid interface name: " + *why};
    }
    if (!row.is_object()) return ConfigError{where, "must be an object of fields"};
    FieldReader r{row, where, std::nullopt};
    r.rejectUnknown({"role", "capacity_mbps", "int_port_id", "neighbor"});
    port.neighbor = r.text("neighbor").value_or("");
    if (!port.neighbor.empty()) checkName(r, "neighbor", port.neighbor, names::Kind::Node);
    auto role = r.text("role");
    if (!role) {
        r.fail("role", "missing (uplink or downlink)");
    } else if (*role == "uplink") {
        port.role = Role::Uplink;
    } else if (*role == "downlink") {
        port.role = Role::Downlink;
    } else {
        r.fail("role", "\"" + *role + "\" is not uplink or downlink");
    }
    double mbps = -1;
    r.number("capacity_mbps", mbps, 0.001, 1e9);
    if (mbps > 0) port.capacityBps = mbps * 1e6;
    long long id = -1;
    r.integer("int_port_id", id, 0, 0xfffe);
    if (id >= 0) port.intPortId = static_cast<uint16_t>(id);
    return r.error;
}

std::variant<Config, ConfigError> parseTables(const nlohmann::json& doc) {
    Config cfg;
    if (!doc.is_object()) return ConfigError{"config", "must be a JSON object of tables"};
    if (auto t = doc.find("PATHQD"); t != doc.end()) {
        if (!t->is_object()) return ConfigError{"PATHQD", "must be an object of keys"};
        for (auto it = t->begin(); it != t->end(); ++it) {
            if (it.key() != "global")
                return ConfigError{"PATHQD|" + it.key(), "unknown key (only \"global\")"};
            if (auto err = parseGlobal(it.value(), cfg)) return *err;
        }
    }
    if (auto t = doc.find("PATHQD_PORT"); t != doc.end()) {
        if (!t->is_object()) return ConfigError{"PATHQD_PORT", "must be an object of ports"};
        std::set<uint16_t> intIds;
        for (auto it = t->begin(); it != t->end(); ++it) {
            PortConfig port;
            if (auto err = parsePort(it.key(), it.value(), port)) return *err;
            if (port.intPortId && !intIds.insert(*port.intPortId).second) {
                return ConfigError{
                    "PATHQD_PORT|" + it.key() + " field int_port_id",
                    "id " + std::to_string(*port.intPortId) + " is used by another port"};
            }
            cfg.ports[it.key()] = port;
        }
    }
    return cfg;
}

}  // namespace

std::vector<IpPrefix> defaultIntSources() {
    return {*IpPrefix::parse("127.0.0.0/8"), *IpPrefix::parse("::1/128")};
}

const char* roleName(Role r) {
    return r == Role::Uplink ? "uplink" : "downlink";
}

bool Config::operator==(const Config& o) const {
    // The model compares whole (quality::Params' own ==): a new field is never missed.
    return model == o.model && sampleInterval == o.sampleInterval && source == o.source &&
           publish == o.publish && ipv4 == o.ipv4 && ipv6 == o.ipv6 && probePort == o.probePort &&
           peerReportTimeout == o.peerReportTimeout && intPort == o.intPort &&
           intNodeId == o.intNodeId && intLatencyUnitNs == o.intLatencyUnitNs &&
           intQueueUnitBytes == o.intQueueUnitBytes && intUtilScale == o.intUtilScale &&
           intSources == o.intSources && intInterface == o.intInterface &&
           weightsInterval == o.weightsInterval && weightAuditInterval == o.weightAuditInterval &&
           weightAuditRepair == o.weightAuditRepair && weightAuditSource == o.weightAuditSource &&
           sonicRelease == o.sonicRelease && bgpPeersInterval == o.bgpPeersInterval &&
           ports == o.ports;
}

std::variant<Config, ConfigError> parseConfig(const nlohmann::json& doc) {
    auto parsed = parseTables(doc);
    // Errors quote keys and values as they were read; shown with their control characters
    // and non-ASCII bytes escaped, so a key cannot forge or break the log line naming it.
    if (auto* err = std::get_if<ConfigError>(&parsed)) {
        err->where = names::printable(err->where, 256);
        err->what = names::printable(err->what, 512);
    }
    return parsed;
}

}  // namespace twinrail::pathqd
