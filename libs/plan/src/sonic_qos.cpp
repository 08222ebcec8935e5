// RoCE QoS as SONiC configures it (issue 21): the maps, PFC, ECN and the schedulers in the
// CONFIG_DB tables swss's qosorch and buffermgrd read. Every port that carries RoCE (host
// and fabric) gets the same PORT_QOS_MAP. The lossless priority group's buffers:
// - traditional model: buffermgrd builds pg_lossless_<speed>_<cable>_profile from
//   pfc_enable, the port's speed and CABLE_LENGTH, but only for a (speed, cable) row of
//   the SKU's pg_profile_lookup.ini ("No PG profile configured for speed ... and cable
//   length ..." otherwise, and PFC without headroom): each port's CABLE_LENGTH is the
//   shortest listed length that covers the plan's;
// - dynamic model (buffermgrd -a): pfc_enable is never read; the lossless PG is a
//   BUFFER_PG row with profile NULL, its headroom computed from speed and cable length.
// BUFFER_POOL and the lossy profiles are the switch's own (`config qos reload`).
#include "sonic_qos.h"

#include <string>

namespace twinrail::plan {
namespace {

using json = nlohmann::json;

constexpr const char* kMap = "TWINRAIL_ROCE";
constexpr const char* kWred = "TWINRAIL_LOSSLESS";
constexpr const char* kBestEffort = "scheduler.0";
constexpr const char* kLossless = "scheduler.1";
constexpr const char* kStrict = "scheduler.strict";

std::string n(int v) {
    return std::to_string(v);
}

void maps(const RoceQos& q, json& db) {
    json dscp = json::object();
    for (int d = 0; d <= 63; ++d) {
        const int tc = d == q.dscp ? q.priority : d == q.cnpDscp ? q.cnpPriority : 0;
        dscp[n(d)] = n(tc);
    }
    db["DSCP_TO_TC_MAP"][kMap] = dscp;
    json same = json::object();
    json pg = json::object();
    for (int tc = 0; tc <= 7; ++tc) {
        same[n(tc)] = n(tc);
        pg[n(tc)] = tc == q.priority ? n(tc) : "0";  // one lossless PG, the rest share PG 0
    }
    db["TC_TO_QUEUE_MAP"][kMap] = same;
    db["MAP_PFC_PRIORITY_TO_QUEUE"][kMap] = same;
    db["TC_TO_PRIORITY_GROUP_MAP"][kMap] = pg;
    // ECN marks from 1 MB of queue, every packet marked at 2 MB (5% on the way): before PFC
    // fires (the headroom's XOFF is further out), so senders slow down before pausing.
    db["WRED_PROFILE"][kWred] = {{"ecn", "ecn_all"},
                                 {"wred_green_enable", "true"},
                                 {"green_min_threshold", "1048576"},
                                 {"green_max_threshold", "2097152"},
                                 {"green_drop_probability", "5"}};
    db["SCHEDULER"][kBestEffort] = {{"type", "DWRR"}, {"weight", "15"}};
    db["SCHEDULER"][kLossless] = {{"type", "DWRR"}, {"weight", "85"}};
    db["SCHEDULER"][kStrict] = {{"type", "STRICT"}};
    db["PFC_WD"]["GLOBAL"] = {{"POLL_INTERVAL", "200"}};
}

// The CABLE_LENGTH a port gets: the plan's length, or with the traditional model the
// shortest one of the SKU's lookup at or above it (more headroom, never less).
std::variant<int, std::string> cableFor(const Sku& sku, const SonicOptions& options,
                                        const std::string& port, long speedMbps, int metres) {
    if (options.bufferModel == SonicBufferModel::Dynamic) return metres;
    const PgProfileLookup& lookup = sku.pgLookup;
    if (!lookup.present) {
        return "HWSKU " + sku.name +
               " has no pg_profile_lookup.ini: buffermgrd (traditional "
               "buffer model) builds no lossless profile without it, so PFC on " +
               port + " would pause with no headroom";
    }
    auto row = lookup.cablesBySpeed.find(speedMbps);
    if (row == lookup.cablesBySpeed.end()) {
        return lookup.file + " has no lossless profile for " + port + "'s speed (" +
               std::to_string(speedMbps) + " Mb/s)" +
               (lookup.cablesBySpeed.empty() ? ": the file lists none at all" : "");
    }
    for (int listed : row->second)
        if (listed >= metres) return listed;
    return lookup.file + " has no lossless profile for " + port + " (" + std::to_string(speedMbps) +
           " Mb/s) at " + std::to_string(metres) + " m or longer: its longest is " +
           std::to_string(row->second.back()) + " m";
}

}  // namespace

std::optional<std::string> sonicQosRows(const Plan& plan, const Switch& sw, const PortMap& ports,
                                        const Sku& sku, const SonicOptions& options, json& db) {
    const RoceQos& q = plan.request.roce;
    maps(q, db);
    for (const auto& p : sw.ports) {
        const std::string& eth = ports.names.at(p.name);
        // pfcwd_sw_enable is written too: qos_config.j2 sets it to its own lossless TCs
        // ("3,4"), which a field-by-field merge would otherwise keep.
        db["PORT_QOS_MAP"][eth] = {
            {"dscp_to_tc_map", kMap},      {"tc_to_queue_map", kMap},
            {"tc_to_pg_map", kMap},        {"pfc_to_queue_map", kMap},
            {"pfc_enable", n(q.priority)}, {"pfcwd_sw_enable", n(q.priority)}};
        for (int queue = 0; queue <= 7; ++queue) {
            json row{{"scheduler", queue == q.priority      ? kLossless
                                   : queue == q.cnpPriority ? kStrict
                                                            : kBestEffort}};
            if (queue == q.priority) row["wred_profile"] = kWred;
            db["QUEUE"][eth + "|" + n(queue)] = row;
        }
        const int metres = p.role == PortRole::Host ? q.hostCableM : q.fabricCableM;
        auto cable = cableFor(sku, options, eth, static_cast<long>(p.speedGbps) * 1000, metres);
        if (auto* why = std::get_if<std::string>(&cable)) return sw.name + ": " + *why;
        db["CABLE_LENGTH"]["AZURE"][eth] = n(std::get<int>(cable)) + "m";
        if (options.bufferModel == SonicBufferModel::Dynamic)
            db["BUFFER_PG"][eth + "|" + n(q.priority)] = {{"profile", "NULL"}};
        // A PFC storm (a port paused for 200 ms) drops that queue's traffic instead of
        // spreading the pause through the fabric; restored after 400 ms quiet.
        db["PFC_WD"][eth] = {
            {"action", "drop"}, {"detection_time", "200"}, {"restoration_time", "400"}};
    }
    return std::nullopt;
}

}  // namespace twinrail::plan
