// `twinrail verify ...`: see verify.h. Exit 0 healthy, 69 degraded, 66 cannot read,
// 77 a switch's Redis refused the credentials (the verdict cannot be trusted).
#pragma once

#include <string>
#include <vector>

#include "twinrail/redis/client.h"

namespace twinrail::cli {

// EX_NOPERM: Redis refused our credentials. Not 69 (EX_UNAVAILABLE, which `show` and
// `verify` use for "unreachable" and "degraded"): a retry or a fabric fix does not help,
// the operator has to fix the password file or the ACL.
inline constexpr int kAuthRefused = 77;

// The CLI's Redis options, for every switch: credentials and TLS settings. The *Given
// flags say which of them override the inventory's per-switch entries.
struct VerifyCredentials {
    redis::Endpoint base;
    bool userGiven = false, tlsGiven = false, sniGiven = false;
};

int verifyCommand(const std::vector<std::string>& args, bool asJson,
                  const VerifyCredentials& creds = {});

}  // namespace twinrail::cli
