#include "twinrail/common/notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace twinrail {

bool sdNotify(std::string_view state) {
    const char* path = std::getenv("NOTIFY_SOCKET");
    if (path == nullptr || path[0] == '\0') return false;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    size_t len = std::strlen(path);
    if (len >= sizeof(addr.sun_path)) return false;
    std::memcpy(addr.sun_path, path, len);
    if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';  // abstract namespace socket
    int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    auto addrLen = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len);
    // Never wait for the receiver: a unix datagram queue holds only max_dgram_qlen (10)
    // messages, and a blocking send to a busy or stuck reader would freeze the event loop
    // (and with it routing). A watchdog ping dropped here is sent again next period.
    ssize_t sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL | MSG_DONTWAIT,
                            reinterpret_cast<sockaddr*>(&addr), addrLen);
    ::close(fd);
    return sent == static_cast<ssize_t>(state.size());
}

WatchdogPinger::WatchdogPinger(boost::asio::io_context& io) : timer_(io) {
    if (const char* usec = std::getenv("WATCHDOG_USEC")) {
        long long value = std::atoll(usec);
        if (value > 0) interval_ = std::chrono::microseconds(value / 2);
    }
}

void WatchdogPinger::start() {
    if (interval_.count() > 0) arm();
}

void WatchdogPinger::stop() {
    timer_.cancel();
}

void WatchdogPinger::arm() {
    timer_.expires_after(interval_);
    timer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        sdNotify("WATCHDOG=1");
        arm();
    });
}

}  // namespace twinrail
