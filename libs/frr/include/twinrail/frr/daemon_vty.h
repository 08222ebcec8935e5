// One FRR daemon's own vty socket (zebra.vty in FRR's run directory), spoken as vtysh
// speaks it: a command goes out with its terminating NUL, and the answer ends with three
// NULs and a status byte (0 = CMD_SUCCESS). No process per command and nothing blocking:
// this is the channel for state that is read often (hostrouted's EVPN view several times
// a second), where spawning vtysh would cost a fork and exec each time.
//
// Commands run one at a time, in order, each bounded by a timeout. After an error or a
// timeout the connection is closed, and the next command opens it again (a restarted
// zebra has a new socket).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <string>

namespace twinrail::frr {

class DaemonVty {
  public:
    // ok is false when the daemon could not be reached, timed out or refused the command;
    // text then says why.
    using Done = std::function<void(bool ok, std::string text)>;

    DaemonVty(boost::asio::io_context& io, std::string socketPath,
              std::chrono::milliseconds timeout);
    ~DaemonVty();
    DaemonVty(const DaemonVty&) = delete;
    DaemonVty& operator=(const DaemonVty&) = delete;

    // A command with a control character in it fails (asynchronously) without being sent.
    void command(std::string text, Done done);
    const std::string& socketPath() const { return path_; }
    size_t queued() const { return queue_.size(); }

  private:
    struct Request {
        std::string text;
        Done done;
    };
    void startNext();
    void send();
    void readMore();
    void finish(bool ok, std::string text);
    void fail(const std::string& why);

    std::string path_;
    std::chrono::milliseconds timeout_;
    boost::asio::local::stream_protocol::socket socket_;
    boost::asio::steady_timer timer_;
    std::deque<Request> queue_;
    std::string reply_;
    std::string chunk_;
    bool busy_ = false;
    bool connected_ = false;
    uint64_t generation_ = 0;  // tells a stale handler from the current request's
};

}  // namespace twinrail::frr
