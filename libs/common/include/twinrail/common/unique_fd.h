// A file descriptor closed when its owner goes: sockets of one-shot reads (netlink dumps,
// bpf objects) that must not leak on any of their error paths.
#pragma once

#include <unistd.h>

#include <utility>

namespace twinrail {

class UniqueFd {
  public:
    explicit UniqueFd(long fd = -1) : fd_(static_cast<int>(fd)) {}
    ~UniqueFd() {
        if (fd_ >= 0) ::close(fd_);
    }
    UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept {
        if (this != &other) {
            if (fd_ >= 0) ::close(fd_);
            fd_ = std::exchange(other.fd_, -1);
        }
        return *this;
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    int get() const { return fd_; }

  private:
    int fd_;
};

}  // namespace twinrail
