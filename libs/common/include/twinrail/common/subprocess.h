// Runs a helper program (vtysh) without blocking the event loop: the exit is observed
// through a pidfd (no SIGCHLD handler, no waitpid() polling), and the output, written to
// anonymous files, is read once it has exited. A child outlives its parent's death
// (there is no pipe to die of), so a vtysh batch is never cut in half.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace twinrail {

struct ProcessResult {
    int exitCode = -1;  // -1 when the program could not be started or was killed
    std::string out;
    std::string err;
    bool timedOut = false;
};

using ProcessCallback = std::function<void(ProcessResult)>;

// argv[0] is the program path. The callback runs on the io_context.
void runProcess(boost::asio::io_context& io, std::vector<std::string> argv,
                std::chrono::milliseconds timeout, ProcessCallback done);

// Blocking variant for start-up paths and tools that have no loop yet.
ProcessResult runProcessSync(const std::vector<std::string>& argv,
                             std::chrono::milliseconds timeout);

}  // namespace twinrail
