// Running commands for the lab and the namespace tests.
//
// The lab runs as root and builds what a plan file says, so it runs no shell at all:
// run()/runOk() take an argument vector, and a generated script (the planner's links.sh)
// is split into argument vectors by scriptCommands(), which refuses anything a shell would
// interpret. Pipes and redirections are C++: output is read from ShellResult::out, files
// are written with std::ofstream. (The name of this header is historical.)
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace twinrail::lab {

struct ShellResult {
    int rc = -1;
    std::string out;
    std::string err;
};

using Argv = std::vector<std::string>;

// argv[0] is looked up in PATH; no shell, so no argument is ever interpreted.
ShellResult run(const Argv& argv, std::chrono::milliseconds timeout = std::chrono::seconds(60));
// Throws std::runtime_error naming the command when it fails.
std::string runOk(const Argv& argv, std::chrono::milliseconds timeout = std::chrono::seconds(60));
// The same command inside network namespace `ns` (`ip netns exec`, which execs it).
Argv inNamespace(const std::string& ns, const Argv& argv);
// Runs `commands` in order; with stopOnError (as `set -e`) the first failure ends it.
// rc is that failure's, else the last command's; out holds every command's output.
ShellResult runAll(const std::vector<Argv>& commands, bool stopOnError = true);
// The command as one line, for messages (not for a shell).
std::string describe(const Argv& argv);

// The words of one line of a generated script, split at spaces. Throws
// std::invalid_argument when the line holds anything but [A-Za-z0-9] and -_./:=,+@%
// (quotes, $, `, ;, |, &, <, >, globs, backslashes, control characters...): such a line
// needs a shell, and the lab has none.
Argv scriptWords(std::string_view line);
// Every command of a generated script, one per line; blank lines, comments ("#...") and
// "set -e" (runAll stops at the first failure anyway) are skipped.
std::vector<Argv> scriptCommands(std::string_view script);

// Starts `argv` detached (its own session, reparented to init, as `setsid -f` does) with
// stdin from /dev/null and stdout and stderr appended to `logPath`; returns its pid, which
// is the daemon's when the command execs it (ip netns exec, env, setpriv all do).
pid_t spawnDetached(const Argv& argv, const std::string& logPath);

// Polls `done` every `step` until it holds or `timeout` passes; returns whether it held.
bool waitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout,
               std::chrono::milliseconds step = std::chrono::milliseconds(50));

// A short prefix unique to this process, for namespace, veth and pathspace names.
std::string uniquePrefix(const std::string& base);

}  // namespace twinrail::lab
