// RoCE QoS as SONiC configures it (issue 21): the maps, PFC, ECN and the schedulers in the
// CONFIG_DB tables swss's qosorch and buffermgrd read. Every port that carries RoCE (host
// and fabric) gets the same PORT_QOS_MAP; buffermgrd derives the lossless priority group's
// buffers from pfc_enable, the port's speed and CABLE_LENGTH, so no BUFFER_* rows here.
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

}  // namespace

void sonicQosRows(const Plan& plan, const Switch& sw, const PortMap& ports, json& db) {
    const RoceQos& q = plan.request.roce;
    maps(q, db);
    for (const auto& p : sw.ports) {
        const std::string& eth = ports.names.at(p.name);
        db["PORT_QOS_MAP"][eth] = {{"dscp_to_tc_map", kMap},
                                   {"tc_to_queue_map", kMap},
                                   {"tc_to_pg_map", kMap},
                                   {"pfc_to_queue_map", kMap},
                                   {"pfc_enable", n(q.priority)}};
        for (int queue = 0; queue <= 7; ++queue) {
            json row{{"scheduler", queue == q.priority      ? kLossless
                                   : queue == q.cnpPriority ? kStrict
                                                            : kBestEffort}};
            if (queue == q.priority) row["wred_profile"] = kWred;
            db["QUEUE"][eth + "|" + n(queue)] = row;
        }
        const int metres = p.role == PortRole::Host ? q.hostCableM : q.fabricCableM;
        db["CABLE_LENGTH"]["AZURE"][eth] = n(metres) + "m";
        // A PFC storm (a port paused for 200 ms) drops that queue's traffic instead of
        // spreading the pause through the fabric; restored after 400 ms quiet.
        db["PFC_WD"][eth] = {
            {"action", "drop"}, {"detection_time", "200"}, {"restoration_time", "400"}};
    }
}

}  // namespace twinrail::plan
