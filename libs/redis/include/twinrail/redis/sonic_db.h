// SONiC database naming: DBs are looked up by name in database_config.json when the
// switch has one, with the well-known ids as the fallback on plain Linux.
#pragma once

#include <optional>
#include <string>

#include "twinrail/redis/client.h"

namespace twinrail::redis {

inline constexpr const char* kSonicDbConfig = "/var/run/redis/sonic-db/database_config.json";

struct DbLocation {
    int id = 0;
    char separator = '|';
    Endpoint endpoint;
};

// `fallback` is the endpoint given on the command line. Throws std::runtime_error naming
// the file and key when database_config.json exists but is unusable.
DbLocation resolveDb(const std::string& name, const Endpoint& fallback,
                     const std::string& configPath = kSonicDbConfig);

}  // namespace twinrail::redis
