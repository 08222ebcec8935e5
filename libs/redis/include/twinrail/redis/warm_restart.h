// SONiC's warm-restart bookkeeping: every process that reconciles after a warm restart
// sets STATE_DB `WARM_RESTART_TABLE|<process>` `state` (swss-common's WarmStart names:
// initialized, restored, replayed, reconciled, disabled), and SONiC's warm-boot finalizer
// waits for each process the package manifest lists with `reconciles: true` to say
// `reconciled`. hostrouted and pathqd say it once their start-up reconcile is done (routes
// adopted, FRR's lines checked), and again after each reconnect, since a Redis that came
// back empty has forgotten it. Only that row is written; other processes' rows stay.
#pragma once

#include <string>

#include "twinrail/redis/client.h"

namespace twinrail::redis {

inline constexpr const char* kWarmRestartTable = "WARM_RESTART_TABLE";

// HSET WARM_RESTART_TABLE<separator><process> state reconciled; a refusal is logged.
void announceReconciled(Connection& stateDb, const std::string& process, char separator);

}  // namespace twinrail::redis
