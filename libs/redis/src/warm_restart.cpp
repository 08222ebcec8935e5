#include "twinrail/redis/warm_restart.h"

#include "twinrail/common/log.h"

namespace twinrail::redis {

void announceReconciled(Connection& stateDb, const std::string& process, char separator) {
    const std::string key = std::string(kWarmRestartTable) + separator + process;
    stateDb.command({"HSET", key, "state", "reconciled"}, [key](const Value& reply) {
        if (reply.isError()) log::warning("redis: cannot set ", key, ": ", reply.str);
    });
}

}  // namespace twinrail::redis
