// One FRR daemon's vty over TCP (zebra 2601, bgpd 2605 on 127.0.0.1): connect, log in
// (password, `enable` with or without an enable password, `terminal length 0`), then run
// scripts of commands, one command at a time and one script at a time, in order
// (vty_protocol.h says how an answer's end is found). Everything is asynchronous on the
// caller's io_context; handlers hold a weak_ptr, so nothing outlives the owner, which calls
// shutdown() before dropping the session.
//
// The connection stays open between scripts. While idle it sends an empty line every
// `keepalive` (FRR closes a vty idle for 10 minutes, and a drop must not look like a
// restart), and a pending read sees the connection drop at once. When watching, a lost
// connection is re-opened with a growing delay, and a login after a loss (or after failed
// attempts) is reported: zebra or bgpd restarted, as a bgp container restart does.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "twinrail/frr/vty_protocol.h"

namespace twinrail::frr {

struct VtySessionSettings {
    std::string name;  // "zebra", "bgpd": in messages and restart reports
    boost::asio::ip::tcp::endpoint endpoint;
    std::string password;                      // never logged, never in a message
    std::string enablePassword;                // asked for only when FRR asks; empty = `password`
    std::chrono::milliseconds timeout{20000};  // connect + login, and each command
    std::chrono::milliseconds keepalive{60000};
    std::chrono::milliseconds reconnectMin{500};
    std::chrono::milliseconds reconnectMax{5000};
    size_t maxReply = size_t{64} * 1024 * 1024;
};

struct VtyResult {
    bool ok = false;
    std::string output;  // every command's output, in order
    std::string error;   // why not ok: FRR's error line, a timeout, the connection
    bool timedOut = false;
};

class VtySession : public std::enable_shared_from_this<VtySession> {
  public:
    using Done = std::function<void(VtyResult)>;

    static std::shared_ptr<VtySession> create(boost::asio::io_context& io,
                                              VtySessionSettings settings);
    ~VtySession();
    VtySession(const VtySession&) = delete;
    VtySession& operator=(const VtySession&) = delete;

    // Lines must have passed checkVtyLine. A script stops at its first failing command;
    // one that leaves FRR in a config node is followed by `end`.
    void run(std::vector<std::string> lines, Done done);
    void watch(std::function<void()> onRestart);
    void unwatch();
    // Closes the connection and forgets queued scripts without calling them back.
    void shutdown();
    std::string describe() const;

  private:
    VtySession(boost::asio::io_context& io, VtySessionSettings settings);
    enum class Phase : uint8_t {
        Down,
        Connecting,
        Banner,
        Password,
        Enable,
        EnablePassword,
        TerminalLength,
        Ready,
        Command
    };
    struct Script {
        std::vector<std::string> lines;
        Done done;  // empty for the keepalive
        size_t next = 0;
        bool ending = false;  // the `end` after the last line or a failure is on its way
        VtyResult result;
    };

    void connect();
    void startRead();
    void onBytes(const std::string& text);
    void onLogin(VtyReplyReader::Status status);
    void afterPassword(const std::string& prompt);
    void loggedIn();
    void onCommand(VtyReplyReader::Status status);
    void startTerminalLength();
    void sendLine(const std::string& line, bool secret);
    void sendCommand(const std::string& line);
    void armDeadline();
    void armKeepalive();
    void startNext();
    void finishScript();
    void lose(const std::string& why, bool timedOut);
    void scheduleReconnect();

    VtySessionSettings settings_;
    boost::asio::ip::tcp::socket socket_;
    boost::asio::steady_timer deadline_;
    boost::asio::steady_timer keepalive_;
    boost::asio::steady_timer reconnect_;
    TelnetFilter telnet_;
    VtyReplyReader reader_;
    std::mt19937_64 random_;
    Phase phase_ = Phase::Down;
    std::string prompt_;
    std::string out_;  // the bytes being written
    std::deque<Script> queue_;
    uint64_t generation_ = 0;   // tells a stale handler from the current connection's
    uint64_t deadlineSeq_ = 0;  // tells a stale deadline from the current step's
    std::string lastProblem_;   // logged once, not at every reconnect attempt
    std::function<void()> onRestart_;
    bool watching_ = false;
    bool unreported_ = false;  // lost or failed while watching: the next login is news
    bool stopped_ = false;
    std::chrono::milliseconds reconnectDelay_;
};

}  // namespace twinrail::frr
