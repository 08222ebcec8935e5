// The receiving end of sd_notify: a datagram socket at a path, handed to a child as
// NOTIFY_SOCKET, as systemd does for a Type=notify unit. A path (not an abstract name)
// reaches daemons inside other network namespaces too.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace twinrail::lab {

class NotifyListener {
  public:
    explicit NotifyListener(std::string path);  // binds; throws std::runtime_error
    ~NotifyListener();
    NotifyListener(NotifyListener&& other) noexcept;
    NotifyListener& operator=(NotifyListener&& other) noexcept;
    NotifyListener(const NotifyListener&) = delete;
    NotifyListener& operator=(const NotifyListener&) = delete;

    const std::string& path() const { return path_; }
    // Waits until READY=1 arrives; false on timeout or as soon as `alive` says the
    // sender is gone. Remembers the last STATUS= line.
    bool waitReady(std::chrono::milliseconds timeout, const std::function<bool()>& alive);
    bool ready() const { return ready_; }
    const std::string& status() const { return status_; }

  private:
    void close();
    int fd_ = -1;
    std::string path_;
    bool ready_ = false;
    std::string status_;
};

}  // namespace twinrail::lab
