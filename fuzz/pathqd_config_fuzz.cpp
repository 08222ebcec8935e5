// pathqd's config parser on any JSON document (the config_db.json file or CONFIG_DB).
// Checks: nothing throws, a rejection names where and why (in printable ASCII: it goes to
// the log), every name an accepted config holds fits twinrail::names (port keys become
// vtysh lines), the INT source list is never empty nor open to all, and an accepted config
// written back as CONFIG_DB strings parses to the same config. Fields the parser scales (Mbit/s
// to bit/s, us to s) may move by an ulp on the way back, so those compare within 1e-12.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include "fuzz_util.h"
#include "pathqd/config.h"
#include "twinrail/common/names.h"

using nlohmann::json;
using twinrail::fuzz::check;
namespace pq = twinrail::pathqd;
namespace names = twinrail::names;

namespace {

// Shortest text that reads back as the same double (nlohmann dumps round-trip).
std::string num(double v) {
    return json(v).dump();
}

// A scaled field, clamped to the range the parser accepts: the value was inside it before
// scaling, so only rounding can take it out.
std::string scaled(double v, double factor, double lo, double hi) {
    return num(std::clamp(v / factor, lo, hi));
}

bool near(double a, double b) {
    return std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), 1.0);
}

json render(const pq::Config& c) {
    auto flag = [](bool b) { return b ? "true" : "false"; };
    auto ms = [](std::chrono::milliseconds v) { return std::to_string(v.count()); };
    const auto& m = c.model;
    json global = {
        {"sample_interval_ms", ms(c.sampleInterval)},
        {"levels", std::to_string(m.levels)},
        {"reference_mbps", scaled(m.referenceBps, 1e6, 1, 1e9)},
        {"max_penalty", num(m.maxPenalty)},
        {"util_knee", num(m.utilKnee)},
        {"queue_ref_us", scaled(m.queueRefSeconds, 1e-6, 0.1, 1e7)},
        {"latency_ref_us", scaled(m.latencyRefSeconds, 1e-6, 0.1, 1e7)},
        {"drop_ref", num(m.dropRefRatio)},
        {"ecn_ref", num(m.ecnRefRatio)},
        {"pfc_ref_pps", num(m.pauseRefPps)},
        {"smoothing_ms", ms(m.smoothing)},
        {"hysteresis", num(m.hysteresis)},
        {"confirm_samples", std::to_string(m.confirmSamples)},
        {"min_hold_ms", ms(m.minHold)},
        {"raise_hold_ms", ms(m.raiseHold)},
        {"source", c.source == pq::CounterKind::Linux ? "linux" : "sonic"},
        {"publish", flag(c.publish)},
        {"ipv4", flag(c.ipv4)},
        {"ipv6", flag(c.ipv6)},
        {"probe_port", std::to_string(c.probePort)},
        {"peer_report_timeout_ms", ms(c.peerReportTimeout)},
        {"int_port", std::to_string(c.intPort)},
        {"int_latency_unit_ns", num(c.intLatencyUnitNs)},
        {"int_queue_unit_bytes", num(c.intQueueUnitBytes)},
        {"int_util_scale", num(c.intUtilScale)},
        {"weights_interval_ms", ms(c.weightsInterval)},
        {"weight_audit_interval", std::to_string(c.weightAuditInterval.count())},
        {"weight_audit_repair", flag(c.weightAuditRepair)},
        {"weight_audit_source",
         c.weightAuditSource == pq::WeightAuditSource::Sonic ? "sonic" : "kernel"},
        {"sonic_release", std::to_string(c.sonicRelease)},
        {"bgp_peers_interval",
         std::to_string(
             std::chrono::duration_cast<std::chrono::seconds>(c.bgpPeersInterval).count())}};
    if (c.intNodeId) global["int_node_id"] = std::to_string(*c.intNodeId);
    std::string sources;
    for (const auto& p : c.intSources) sources += (sources.empty() ? "" : ",") + p.str();
    global["int_sources"] = sources;
    if (!c.intInterface.empty()) global["int_interface"] = c.intInterface;
    json ports = json::object();
    for (const auto& [name, p] : c.ports) {
        json row = {{"role", pq::roleName(p.role)}};
        if (p.capacityBps) row["capacity_mbps"] = scaled(*p.capacityBps, 1e6, 0.001, 1e9);
        if (p.intPortId) row["int_port_id"] = std::to_string(*p.intPortId);
        if (!p.neighbor.empty()) row["neighbor"] = p.neighbor;
        ports[name] = row;
    }
    json doc = {{"PATHQD", {{"global", global}}}};
    if (!c.ports.empty()) doc["PATHQD_PORT"] = ports;
    return doc;
}

// Checks the scaled fields within rounding, then makes them equal so == covers the rest.
void alignScaled(const pq::Config& want, pq::Config& got) {
    check(near(want.model.referenceBps, got.model.referenceBps), "reference_mbps moved");
    check(near(want.model.queueRefSeconds, got.model.queueRefSeconds), "queue_ref_us moved");
    check(near(want.model.latencyRefSeconds, got.model.latencyRefSeconds), "latency_ref_us moved");
    got.model.referenceBps = want.model.referenceBps;
    got.model.queueRefSeconds = want.model.queueRefSeconds;
    got.model.latencyRefSeconds = want.model.latencyRefSeconds;
    for (auto& [name, port] : got.ports) {
        auto it = want.ports.find(name);
        if (it == want.ports.end() || !port.capacityBps || !it->second.capacityBps) continue;
        check(near(*it->second.capacityBps, *port.capacityBps), "capacity_mbps moved");
        port.capacityBps = it->second.capacityBps;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    json doc = json::parse(data, data + size, nullptr, false);
    if (doc.is_discarded()) return 0;
    auto parsed = pq::parseConfig(doc);
    if (const auto* err = std::get_if<pq::ConfigError>(&parsed)) {
        check(!err->where.empty() && !err->what.empty(), "an error that names nothing");
        for (char ch : err->str())
            check(ch >= 0x20 && ch < 0x7f, "an error with a byte that is not printable ASCII");
        return 0;
    }
    const auto& cfg = std::get<pq::Config>(parsed);
    for (const auto& [name, port] : cfg.ports) {
        check(names::valid(name, names::Kind::Interface), "a port name outside the grammar");
        check(port.neighbor.empty() || names::valid(port.neighbor, names::Kind::Node),
              "a neighbor name outside the grammar");
    }
    check(cfg.intInterface.empty() || names::valid(cfg.intInterface, names::Kind::Interface),
          "an int_interface outside the grammar");
    check(!cfg.intSources.empty(), "an empty INT source list (nothing or everything?)");
    for (const auto& p : cfg.intSources)
        check(p.length > 0 && p.length <= p.addr.maxPrefixLen(), "an INT source open to all");
    check(cfg.probePort == 0 || cfg.probePort != cfg.intPort, "probe_port == int_port accepted");
    check(cfg.model.levels >= 2 && cfg.model.referenceBps > 0, "a model that cannot level");
    auto again = pq::parseConfig(render(cfg));
    auto* cfg2 = std::get_if<pq::Config>(&again);
    check(cfg2 != nullptr, "a config written back from an accepted one is rejected");
    alignScaled(cfg, *cfg2);
    check(*cfg2 == cfg, "a config written back parses differently");
    return 0;
}
