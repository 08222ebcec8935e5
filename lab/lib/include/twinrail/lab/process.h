// A child process (daemon under test, redis-server, `ip monitor`) that is always ended:
// the destructor sends SIGTERM, then SIGKILL, and reaps it.
//
// With `notify`, the child gets a NOTIFY_SOCKET as systemd gives a Type=notify unit, and
// waitReady() waits for its READY=1: readiness as systemd sees it, not a log line.
// The socket is a path (not abstract), so a child inside another network namespace
// (`ip netns exec`) reaches it too.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "twinrail/lab/notify_listener.h"

namespace twinrail::lab {

struct ChildOptions {
    bool notify = false;
};

class ChildProcess {
  public:
    ChildProcess() = default;
    ChildProcess(std::vector<std::string> argv, std::string logPath, ChildOptions options = {});
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
    // READY=1 received (notify only); false on timeout or when the child exited first.
    bool waitReady(std::chrono::milliseconds timeout);
    std::string notifyStatus() const;  // the last STATUS= it sent
    const std::string& logPath() const { return log_; }
    std::string log() const;

  private:
    pid_t pid_ = -1;
    std::optional<int> exitCode_;
    std::string log_;
    std::unique_ptr<NotifyListener> notify_;
};

}  // namespace twinrail::lab
