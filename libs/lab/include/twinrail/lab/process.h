// A child process (daemon under test, redis-server, `ip monitor`) that is always ended:
// the destructor sends SIGTERM, then SIGKILL, and reaps it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace twinrail::lab {

class ChildProcess {
  public:
    ChildProcess() = default;
    ChildProcess(std::vector<std::string> argv, std::string logPath);
    ~ChildProcess();
    ChildProcess(ChildProcess&& other) noexcept;
    ChildProcess& operator=(ChildProcess&& other) noexcept;
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    pid_t pid() const { return pid_; }
    bool running();
    void signal(int sig) const;
    // Waits for exit; returns the exit code, or nullopt on timeout.
    std::optional<int> wait(std::chrono::milliseconds timeout);
    void stop();  // SIGTERM, then SIGKILL after 5 s
    const std::string& logPath() const { return log_; }
    std::string log() const;

  private:
    pid_t pid_ = -1;
    std::optional<int> exitCode_;
    std::string log_;
};

}  // namespace twinrail::lab
