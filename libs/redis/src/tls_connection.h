// A blocking Redis connection over TLS, for SyncReader: hiredis 0.14 has no TLS, so the
// transport is Boost.Asio's ssl::stream (OpenSSL) and hiredis only formats commands
// (redisFormatCommandArgv) and parses replies (redisReader). Every step (resolve,
// connect, handshake, each round trip) runs on a private io_context under the timeout,
// so a stalled server fails the call instead of hanging the CLI.
// The server's certificate is always verified, against the CA file (or the system's
// trust store) and the expected name (TlsOptions::serverName, else the host).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "twinrail/redis/client.h"

struct redisReader;
struct redisReply;

namespace twinrail::redis::detail {

class TlsConnection {
  public:
    TlsConnection();
    ~TlsConnection();
    TlsConnection(const TlsConnection&) = delete;
    TlsConnection& operator=(const TlsConnection&) = delete;

    // Returns the error ("cannot reach ...", "TLS handshake ...: certificate verify failed").
    std::optional<std::string> connect(const Endpoint& endpoint, std::chrono::milliseconds timeout);
    // Sends one command and returns its reply (free with freeReplyObject), or nullptr
    // with error() set; after a failure the connection is unusable.
    redisReply* roundTrip(const std::vector<std::string>& args);
    const std::string& error() const { return error_; }

  private:
    // Runs the io_context until `done` or the timeout; on timeout closes the socket.
    bool runUntil(const bool& done, const char* what);

    boost::asio::io_context io_;
    boost::asio::ssl::context ssl_;
    std::unique_ptr<boost::asio::ssl::stream<boost::asio::ip::tcp::socket>> stream_;
    redisReader* reader_ = nullptr;
    std::chrono::milliseconds timeout_{2000};
    std::string error_;
};

}  // namespace twinrail::redis::detail
