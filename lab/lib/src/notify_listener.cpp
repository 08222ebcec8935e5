#include "twinrail/lab/notify_listener.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace twinrail::lab {

NotifyListener::NotifyListener(std::string path) : path_(std::move(path)) {
    ::unlink(path_.c_str());
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) throw std::runtime_error("notify socket: " + std::string(std::strerror(errno)));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path_.size() >= sizeof(addr.sun_path)) {
        close();
        throw std::runtime_error("notify socket path too long: " + path_);
    }
    std::memcpy(addr.sun_path, path_.c_str(), path_.size());
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        std::string why = std::strerror(errno);
        close();
        throw std::runtime_error("notify socket " + path_ + ": " + why);
    }
    ::chmod(path_.c_str(), 0777);  // daemons may run as an unprivileged user
}

NotifyListener::~NotifyListener() {
    close();
}

NotifyListener::NotifyListener(NotifyListener&& other) noexcept
    : fd_(other.fd_),
      path_(std::move(other.path_)),
      ready_(other.ready_),
      status_(std::move(other.status_)) {
    other.fd_ = -1;
    other.path_.clear();
}

NotifyListener& NotifyListener::operator=(NotifyListener&& other) noexcept {
    if (this != &other) {
        close();
        fd_ = other.fd_;
        path_ = std::move(other.path_);
        ready_ = other.ready_;
        status_ = std::move(other.status_);
        other.fd_ = -1;
        other.path_.clear();
    }
    return *this;
}

void NotifyListener::close() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
    fd_ = -1;
}

bool NotifyListener::waitReady(std::chrono::milliseconds timeout,
                               const std::function<bool()>& alive) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    char buf[4096];
    while (!ready_ && fd_ >= 0) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0 || (alive && !alive())) return false;
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 100))) <= 0) continue;
        ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
        if (n <= 0) continue;
        std::istringstream lines(std::string(buf, static_cast<size_t>(n)));
        for (std::string line; std::getline(lines, line);) {
            if (line == "READY=1") ready_ = true;
            if (line.rfind("STATUS=", 0) == 0) status_ = line.substr(7);
        }
    }
    return ready_;
}

}  // namespace twinrail::lab
