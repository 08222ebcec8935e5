// The weights in force on a SONiC switch, read for the weight audit: APPL_DB ROUTE_TABLE
// and NEXTHOP_GROUP_TABLE, and (when given) ASIC_DB's route entries, next-hop groups,
// next hops and router interfaces with COUNTERS_DB's port and LAG name maps, all through
// the daemon's async redis connections; what they mean is sonic_weights.h's (pure).
//
// One read is a SCAN per table and an HGETALL per key: on a switch with R routes about
// 2R commands per audit round (every weight_audit_interval, 30 s by default), pipelined
// on the unix socket. A read that loses a connection fails whole ("unreachable"); ASIC_DB
// or COUNTERS_DB down: APPL_DB alone is audited. Turning the rows into weights (about a
// second of CPU at 100k routes) runs on a worker thread, not on the event loop.
#pragma once

#include <memory>

#include "forwarding_weights.h"
#include "sonic_weights.h"
#include "twinrail/common/worker.h"
#include "twinrail/redis/client.h"

namespace twinrail::pathqd {

class SonicWeightReader final : public ForwardingWeights {
  public:
    // asicDb and countersDb may be null (APPL_DB only). All must outlive the reader's reads.
    SonicWeightReader(boost::asio::io_context& io, redis::Connection& applDb,
                      redis::Connection* asicDb, redis::Connection* countersDb, int sonicRelease);
    void read(Done done) override;
    PortWeights frrWeightsOf(const std::vector<BgpPath>& paths) const override;
    bool kernelRepairable() const override { return false; }
    const char* name() const override { return "sonic"; }

  private:
    struct Read;
    void scan(const std::shared_ptr<Read>& r, redis::Connection& db, const std::string& pattern,
              sonic_weights::Rows& into, const std::string& cursor);
    void hash(const std::shared_ptr<Read>& r, redis::Connection& db, const std::string& key,
              sonic_weights::Row& into);
    void finishOne(const std::shared_ptr<Read>& r);

    redis::Connection& appl_;
    redis::Connection* asic_;
    redis::Connection* counters_;
    int release_;
    Worker worker_;  // last: its results reach nothing destroyed before it
};

}  // namespace twinrail::pathqd
