// Runs a helper program (vtysh, tc) without blocking the event loop: the exit is observed
// through a pidfd (no SIGCHLD handler, no waitpid() polling), and the output, written to
// anonymous files, is read once it has exited. A child outlives its parent's death
// (there is no pipe to die of), so a vtysh batch is never cut in half.
//
// A child gets none of the daemon's capabilities unless the caller names them: the units
// hand the daemons ambient capabilities, which exec would otherwise pass on to every
// program they run (vtysh needs none: group frrvty is what opens FRR's sockets).
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

// The capabilities a child may be given; only those some helper needs (tc: NetAdmin).
enum class Capability {
    NetAdmin,  // CAP_NET_ADMIN
    NetRaw,    // CAP_NET_RAW
};

struct ProcessOptions {
    // Capabilities the program runs with (handed over as ambient capabilities, the only
    // way an unprivileged user's program keeps one across exec), among those the parent
    // holds; one it lacks is left out and the program fails as it would without it.
    // Default, none: before exec the child clears its ambient and inheritable sets, and a
    // child that cannot is not started. A parent running as root is the exception the
    // kernel makes: exec gives a uid-0 program its bounding set whatever these are.
    std::vector<Capability> keepCapabilities;
};

// argv[0] is the program path (searched in PATH when it has no '/'). The callback runs on
// the io_context.
void runProcess(boost::asio::io_context& io, std::vector<std::string> argv,
                std::chrono::milliseconds timeout, const ProcessOptions& options,
                ProcessCallback done);
// With the default options: no capabilities.
void runProcess(boost::asio::io_context& io, std::vector<std::string> argv,
                std::chrono::milliseconds timeout, ProcessCallback done);

// Blocking variant for start-up paths and tools that have no loop yet.
ProcessResult runProcessSync(const std::vector<std::string>& argv,
                             std::chrono::milliseconds timeout, const ProcessOptions& options = {});

}  // namespace twinrail
