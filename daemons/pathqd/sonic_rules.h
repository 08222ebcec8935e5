// How SONiC's own tools read COUNTERS_DB, APPL_DB and STATE_DB, as pure functions, so
// the SONiC counter source only does I/O (see ../shared/fixtures/sonic-counters/SOURCES.md
// for where each rule comes from in sonic-utilities and sonic-gnmi).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "twinrail/quality/quality.h"
#include "twinrail/redis/client.h"

namespace twinrail::pathqd::sonic {

using Hash = std::map<std::string, std::string>;

// HGETALL reply -> hash; anything else (nil, an error, an odd-length array) -> empty.
Hash toHash(const redis::Value& v);

// A value as SONiC writes it: decimal strings, but also float strings ("2.e9",
// "400000.0"), JSON numbers stored as strings, surrounding blanks. Nothing for "",
// "N/A", negative, NaN or infinite values.
std::optional<double> parseNumber(const std::string& s);
// Cumulative counters: integers, or a float string of one (truncated).
std::optional<uint64_t> parseCounter(const redis::Value& v);

// Rows in COUNTERS_PORT_NAME_MAP / APPL_DB PORT_TABLE that are not front-panel ports.
bool isPseudoPort(const std::string& name);

// portstat's get_port_speed(): STATE_DB PORT_TABLE|<port> speed when it is there and
// APPL_DB says the port is oper up, else APPL_DB PORT_TABLE:<port> speed. Mb/s; nothing
// when neither gives a usable value (portstat prints N/A).
struct Speed {
    std::optional<double> mbps;
    std::string from;  // "state_db", "appl_db" or ""
};
Speed portSpeed(const std::optional<std::string>& applOperStatus,
                const std::optional<std::string>& applSpeed,
                const std::optional<std::string>& stateSpeed);

// Egress queues that carry unicast traffic: SAI_QUEUE_TYPE_UNICAST and _ALL (one queue
// for both). Multicast queues and VOQs (ingress-side, on chassis) do not. A queue the type
// map does not know (or a box with no type map at all) counts: most of its bytes are then
// unicast anyway, and leaving it out could hide the only queue that fills.
bool isUnicastQueue(const std::optional<std::string>& type);

struct QueueRef {
    std::string oid;
    int index = -1;  // from the name (`Ethernet0:3`), -1 when it has none
};

// Port name -> port oid, and port name -> its egress unicast queues, the way queuestat
// and watermarkstat map them: COUNTERS_QUEUE_NAME_MAP `Ethernet0:3` -> oid, the port
// taken from COUNTERS_QUEUE_PORT_MAP (queue oid -> port oid) when it has the queue, else
// from the name; the type from COUNTERS_QUEUE_TYPE_MAP when present.
struct PortMaps {
    std::map<std::string, std::string> portOid;
    std::map<std::string, std::vector<QueueRef>> queues;  // sorted by index
};
PortMaps buildMaps(const Hash& portNameMap, const Hash& queueNameMap, const Hash& queueTypeMap,
                   const Hash& queuePortMap);

// Where a port's queue occupancy comes from, best first. Current occupancy is a level
// (only on lossless queues under the PFC watchdog, on most platforms); the watermarks are
// peaks: COUNTERS' since the last read-and-clear watermark poll (10-60 s), PERIODIC's over
// the telemetry interval (120 s). USER_ and PERSISTENT_WATERMARKS only rise until an
// operator clears them, so they are never used.
enum class QueueSource { None, CurrOccupancy, Watermark, PeriodicWatermark };
const char* queueSourceName(QueueSource s);

struct QueueReading {
    std::optional<double> currOccupancy;      // COUNTERS SAI_QUEUE_STAT_CURR_OCCUPANCY_BYTES
    std::optional<double> watermark;          // COUNTERS SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES
    std::optional<double> periodicWatermark;  // PERIODIC_WATERMARKS ..._SHARED_WATERMARK_BYTES
    std::optional<uint64_t> packets;          // COUNTERS SAI_QUEUE_STAT_PACKETS
    std::optional<uint64_t> ecnMarked;        // COUNTERS SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS
    bool stormed = false;                     // COUNTERS PFC_WD_STATUS "stormed"
};
// The port's ECN marks and the packets they are a share of: the sums over the queues
// that publish both (a queue without WRED publishes no mark counter, and its packets
// could never be marked). Unset when no queue does.
std::optional<quality::MarkCounters> queueMarks(const std::vector<QueueReading>& queues);
struct QueueChoice {
    QueueSource source = QueueSource::None;
    double bytes = 0;  // the sum over the queues that have that source
    int queues = 0;    // how many queues carried it
};
// The best source any of the port's queues has; the port's backlog is the sum of that
// value over those queues (for watermarks: an upper bound of the port's peak).
QueueChoice chooseQueueSource(const std::vector<QueueReading>& queues);

}  // namespace twinrail::pathqd::sonic
