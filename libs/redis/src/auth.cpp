#include "twinrail/redis/auth.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace twinrail::redis {

std::optional<std::string> readPasswordFile(const std::string& path, std::string& password) {
    // fstat on the opened file, not stat on the path: what is checked is what is read.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return "password file " + path + ": " + std::strerror(errno);
    struct stat st {};
    std::string text;
    std::optional<std::string> error;
    if (::fstat(fd, &st) != 0) {
        error = "password file " + path + ": " + std::strerror(errno);
    } else if (!S_ISREG(st.st_mode)) {
        error = "password file " + path + ": not a regular file";
    } else if ((st.st_mode & (S_IRGRP | S_IROTH)) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        error = "password file " + path + " is readable by group or others (mode " + mode +
                "); refusing it: chmod 600 " + path;
    } else {
        char buf[4096];
        ssize_t n = 0;
        while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
        if (n < 0) error = "password file " + path + ": " + std::strerror(errno);
    }
    ::close(fd);
    if (error) return error;
    if (!text.empty() && text.back() == '\n') text.pop_back();
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.empty()) return "password file " + path + " is empty";
    if (text.find('\n') != std::string::npos)
        return "password file " + path + " has more than one line";
    password = std::move(text);
    return std::nullopt;
}

std::vector<std::string> authCommand(const Endpoint& endpoint) {
    if (endpoint.password.empty()) return {};
    if (endpoint.user.empty()) return {"AUTH", endpoint.password};
    return {"AUTH", endpoint.user, endpoint.password};
}

std::string authFailure(const Endpoint& endpoint, const std::string& serverText) {
    return "redis at " + endpoint.describe() + ": AUTH failed for user " + endpoint.userName() +
           ": " + serverText;
}

bool isAuthError(const std::string& serverText) {
    for (const char* prefix : {"NOAUTH", "WRONGPASS", "NOPERM"})
        if (serverText.rfind(prefix, 0) == 0) return true;
    return false;
}

std::optional<std::string> checkTls(const Endpoint& endpoint) {
    const TlsOptions& t = endpoint.tls;
    if (!t.enabled) {
        if (!t.caFile.empty() || !t.certFile.empty() || !t.keyFile.empty() || !t.serverName.empty())
            return "TLS options given without TLS (add --redis-tls)";
        return std::nullopt;
    }
    if (!endpoint.unixSocket.empty())
        return "TLS needs --redis-host/--redis-port: Redis has no TLS on its unix socket";
    if (t.certFile.empty() != t.keyFile.empty())
        return "a client certificate needs both --redis-cert and --redis-key";
    return std::nullopt;
}

}  // namespace twinrail::redis
