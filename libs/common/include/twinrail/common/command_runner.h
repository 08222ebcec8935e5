// A helper program (tc) as an edge a daemon's logic is handed: ProcessRunner runs it for
// real, without blocking the loop; unit tests record what would have run and answer it.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "twinrail/common/subprocess.h"

namespace twinrail {

class CommandRunner {
  public:
    virtual ~CommandRunner() = default;
    // Runs argv (no shell) and calls `done` once, later, on the caller's loop. exitCode is
    // -1 when the program could not be started, was killed or timed out; err says why.
    virtual void run(std::vector<std::string> argv,
                     std::function<void(int exitCode, std::string err)> done) = 0;
};

// The real runner: runProcess on the daemon's io_context, with the capabilities in
// `options` (tc needs NetAdmin).
class ProcessRunner final : public CommandRunner {
  public:
    ProcessRunner(boost::asio::io_context& io, ProcessOptions options,
                  std::chrono::milliseconds timeout = std::chrono::seconds(5));
    void run(std::vector<std::string> argv,
             std::function<void(int exitCode, std::string err)> done) override;

  private:
    boost::asio::io_context& io_;
    ProcessOptions options_;
    std::chrono::milliseconds timeout_;
};

}  // namespace twinrail
