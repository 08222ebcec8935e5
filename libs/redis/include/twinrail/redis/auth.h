// Redis credentials: the password file an operator gives (--redis-password-file) and the
// AUTH command built from an Endpoint. The password is read once, at start, from a file
// (never argv, where `ps` shows it) and is never put into a log line or a message.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "twinrail/redis/client.h"

namespace twinrail::redis {

// Reads the password (one line; a trailing newline is dropped) into `password`. Refuses a
// file that group or others can read, as ssh does with a private key. Returns the error.
std::optional<std::string> readPasswordFile(const std::string& path, std::string& password);

// {"AUTH", user, password}, or {"AUTH", password} for the default user; empty when the
// endpoint has no password.
std::vector<std::string> authCommand(const Endpoint& endpoint);

// "redis at X: AUTH failed for user Y: <server text>"
std::string authFailure(const Endpoint& endpoint, const std::string& serverText);

// True for replies that mean "these credentials may not do this": NOAUTH, WRONGPASS,
// NOPERM (and the plain ERR of an AUTH Redis < 6 refuses).
bool isAuthError(const std::string& serverText);

// Checks the TLS options hang together (a key needs a certificate, TLS needs TCP);
// returns the error.
std::optional<std::string> checkTls(const Endpoint& endpoint);

}  // namespace twinrail::redis
