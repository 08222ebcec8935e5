// sd_notify(3) without libsystemd: one datagram to $NOTIFY_SOCKET. A no-op when the
// daemon is not run by systemd, so the same binary runs in tests and the lab.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <string_view>

namespace twinrail {

bool sdNotify(std::string_view state);

// Sends WATCHDOG=1 at half of $WATCHDOG_USEC while the loop is alive; a stuck loop
// stops the pings and systemd restarts the daemon.
class WatchdogPinger {
public:
    explicit WatchdogPinger(boost::asio::io_context& io);
    void start();
    void stop();

private:
    void arm();
    boost::asio::steady_timer timer_;
    std::chrono::microseconds interval_{0};
};

}  // namespace twinrail
