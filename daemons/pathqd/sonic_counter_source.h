// pathqd's counters on a SONiC switch: COUNTERS_DB, APPL_DB and STATE_DB read the way
// SONiC's own tools read them (rules in sonic_rules.h), through the async redis::Client.
//
// Why it reads what it reads (docs/pathqd.md, "The SONiC source"):
//  * Utilisation from COUNTERS:<port oid> SAI_PORT_STAT_IF_OUT_OCTETS, read every period,
//    with the rate taken between the flex-counter polls that wrote them (PollClock infers
//    when that was), not over the read interval: the rows move once per poll (1 s by
//    default) and carry no timestamp. RATES:<oid> TX_BPS is not used: older images do not
//    have it, it is an EMA whose smoothing the operator sets (so it lags by several polls
//    and the quality filter would smooth twice), and it is computed at the same poll
//    cadence anyway, so it is neither fresher nor more exact than the octets.
//  * Queue occupancy from what the platform publishes (sonic_rules.h QueueSource).
//  * Oper status from APPL_DB PORT_TABLE; speed as portstat takes it.
//
// Robustness: every period ends, by its last reply, a lost connection (every accepted
// command completes with an error), or a deadline; a client whose replies stopped coming
// is reconnected. Slow-changing rows (status, speed, queue rows) are read once per
// `slowRefresh` per port, spread over the periods; the name maps every `mapRefresh`, on
// reconnect, and when a port's COUNTERS row disappears (oids change when syncd restarts).
// Commands per period: one HMGET per port, one HGET per current-occupancy queue, plus
// the due ports' slow reads (2 + 1 or 2 per unicast queue) and up to 4 map reads.
#pragma once

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>

#include "counter_source.h"
#include "sonic_rules.h"
#include "twinrail/quality/poll_clock.h"
#include "twinrail/redis/client.h"
#include "twinrail/redis/sonic_db.h"

namespace twinrail::pathqd {

struct SonicOptions {
    std::chrono::milliseconds slowRefresh{1000};   // status, speed, queue rows: per port
    std::chrono::milliseconds mapRefresh{30000};   // the name maps
    std::chrono::milliseconds mapRetry{1000};      // at most one map load this often
    std::chrono::milliseconds readDeadline{1000};  // a period not answered by then fails
    quality::PollClockParams clock;
};

// What the source made of one port: for tests, benchmarks and logs.
struct SonicPortInfo {
    std::string oid;   // empty: not in COUNTERS_PORT_NAME_MAP
    std::string skip;  // why the port is not reported; empty when it is
    bool up = false;
    std::optional<double> speedMbps;
    std::string speedFrom;  // "state_db" or "appl_db"
    std::string queueSource = "none";
    int unicastQueues = 0;  // mapped to the port
    int sourceQueues = 0;   // of those, the ones carrying queueSource
    double queueBytes = 0;
    std::optional<quality::Clock::duration> pollPeriod;  // learned from the counters
};

struct SonicStats {
    uint64_t periods = 0;     // poll() calls
    uint64_t failed = 0;      // periods that ended with an error (any cause)
    uint64_t timeouts = 0;    // of those: the deadline passed first
    uint64_t reconnects = 0;  // clients restarted because replies stopped coming
    uint64_t mapLoads = 0;
    uint64_t commands = 0;  // sent since start
    size_t lastPeriodCommands = 0;
    size_t maxPeriodCommands = 0;
};

class SonicCounterSource final : public CounterSource {
  public:
    SonicCounterSource(boost::asio::io_context& io, const redis::DbLocation& counters,
                       const redis::DbLocation& appl, const redis::DbLocation& state,
                       SonicOptions options = {});
    SonicCounterSource(const SonicCounterSource&) = delete;
    SonicCounterSource& operator=(const SonicCounterSource&) = delete;

    void poll(const std::vector<std::string>& ports,
              std::function<void(CounterMap, std::string)> done) override;

    const SonicStats& stats() const { return stats_; }
    std::optional<SonicPortInfo> info(const std::string& port) const;

  private:
    using Values = std::array<uint64_t, 24>;  // see kPortFields
    using Clock = quality::Clock;
    struct Queue {
        std::string oid;
        sonic::QueueReading reading;
    };
    struct Port {
        std::string oid;
        std::vector<Queue> queues;
        bool slowDone = false;  // APPL_DB answered at least once
        Clock::time_point slowDue{};
        std::optional<std::string> applOper, applSpeed, stateSpeed;
        std::optional<Values> last;
        quality::PollClock clock;
        SonicPortInfo info;
    };
    struct PortRead {
        bool answered = false;
        bool rowMissing = false;
        Values values{};
        std::optional<Clock::time_point> sampledAt;
    };
    struct Period {
        uint64_t id = 0;
        std::function<void(CounterMap, std::string)> done;
        std::vector<std::string> ports;
        std::map<std::string, PortRead> reads;
        int outstanding = 0;
        bool sent = false;
        bool finished = false;
        bool lost = false;
        size_t commands = 0;
    };
    struct MapLoad {
        std::array<sonic::Hash, 4> hashes;
        int outstanding = 4;
        bool failed = false;
    };
    using Handler = std::function<void(Period&, const redis::Value&)>;

    bool send(const std::shared_ptr<Period>& p, redis::Client& client,
              const std::vector<std::string>& args, const Handler& handler);
    void onReply(const std::shared_ptr<Period>& p, const Handler& handler, const redis::Value& v);
    void fail(std::function<void(CounterMap, std::string)>& done, const std::string& error);
    bool stalled(Clock::time_point now);
    void restartClients();
    void startPeriod(const std::shared_ptr<Period>& p, Clock::time_point now);
    void readPort(const std::shared_ptr<Period>& p, const std::string& name, size_t index,
                  size_t count, Clock::time_point now);
    void readSlow(const std::shared_ptr<Period>& p, const std::string& name, Port& st);
    void onPortCounters(Period& p, const std::string& name, const std::string& oid,
                        const redis::Value& v);
    void onAppl(const std::string& name, const std::string& oid, const redis::Value& v);
    void onDeadline(uint64_t id);
    void finish(const std::shared_ptr<Period>& p);
    std::optional<PortCounters> report(Port& st, const PortRead* r);
    void loadMaps(Clock::time_point now);
    void onMaps(const MapLoad& load);
    void assignQueues(const std::string& name, Port& st);
    Queue* findQueue(const std::string& port, const std::string& portOid,
                     const std::string& queueOid);
    std::string countersKey(const std::string& table, const std::string& oid) const;

    redis::DbLocation countersLoc_, applLoc_, stateLoc_;
    SonicOptions opt_;
    redis::Client counters_, appl_, state_;
    boost::asio::steady_timer deadline_;
    std::optional<sonic::PortMaps> maps_;
    std::weak_ptr<MapLoad> mapLoad_;  // set while a load is outstanding
    bool mapsDue_ = true;
    Clock::time_point nextMapLoad_{}, lastMapLoad_{};
    std::map<std::string, Port> ports_;
    std::shared_ptr<Period> current_;
    std::weak_ptr<Period> abandoned_;  // timed out with replies still outstanding
    Clock::time_point stalledSince_{};
    uint64_t nextId_ = 1;
    size_t pendingMapCommands_ = 0;  // map reads sent since the last period started
    SonicStats stats_;
};

}  // namespace twinrail::pathqd
