// Shell helpers for the lab and the namespace tests: run a command line, capture its
// output, and fail loudly with the command and its stderr.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace twinrail::lab {

struct ShellResult {
    int rc = -1;
    std::string out;
    std::string err;
};

ShellResult sh(const std::string& command,
               std::chrono::milliseconds timeout = std::chrono::seconds(60));
// Throws std::runtime_error naming the command when it fails.
std::string shOk(const std::string& command,
                 std::chrono::milliseconds timeout = std::chrono::seconds(60));

// Polls `done` every `step` until it holds or `timeout` passes; returns whether it held.
bool waitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout,
               std::chrono::milliseconds step = std::chrono::milliseconds(50));

// A short prefix unique to this process, for namespace, veth and pathspace names.
std::string uniquePrefix(const std::string& base);

}  // namespace twinrail::lab
