// A private redis-server on a unix socket (no TCP port), for tests and the lab.
#pragma once

#include <string>

#include "twinrail/lab/process.h"
#include "twinrail/lab/shell.h"

namespace twinrail::lab {

class RedisServer {
  public:
    explicit RedisServer(std::string dir);
    ~RedisServer();
    void start();
    void stop();
    const std::string& socket() const { return socket_; }
    // redis-cli against database `db` with `args` (one argument each, no shell: a key
    // with "|" or "*" in it is passed as it is); returns stdout.
    std::string cli(int db, const Argv& args) const;

  private:
    std::string dir_;
    std::string socket_;
    ChildProcess process_;
};

}  // namespace twinrail::lab
