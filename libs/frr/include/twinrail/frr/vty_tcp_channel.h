// FRR reached over its daemons' vty TCP ports, for a daemon that runs outside the FRR
// process's container: on SONiC, FRR lives in the `bgp` container (host network), and its
// vty unix sockets, which vtysh and makeLocalFrr use, are inside that container.
//
// Why TCP vty, and not the other two ways in:
// - The Docker socket (/var/run/docker.sock mounted in) is root on the host: whoever
//   speaks it can start a privileged container with / mounted. A routing agent that needs
//   to change route-maps would carry the whole switch's root with it.
// - `docker exec bgp vtysh` needs that same socket (SONiC's host `vtysh` is a wrapper
//   around it), plus a docker CLI in our image and a process per command.
// - The vty ports are FRR's own interface for this: zebra (-A 127.0.0.1 on SONiC) and bgpd
//   listen on 127.0.0.1:2601 and :2605, SONiC's rendered configs set `password zebra`,
//   and what a vty login can do is exactly what FRR's CLI can do. The password comes from
//   a file (refused when group or others can read it), never from argv, and is never
//   logged.
// What it costs: one TCP connection per daemon, kept open; commands go to zebra or bgpd by
// the rules in vty_routing.h (vtysh would send each to every daemon that knows it);
// staticd and the other daemons are not reached.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "twinrail/frr/channel.h"

namespace twinrail::frr {

struct VtyTcpOptions {
    std::string address = "127.0.0.1";  // an IP address: no name lookups
    uint16_t zebraPort = 2601;
    uint16_t bgpdPort = 2605;
    std::string password;                      // readVtyPasswordFile; never logged
    std::string enablePassword;                // used only if FRR asks; empty = `password`
    std::chrono::milliseconds timeout{20000};  // login, and each command (as vtysh's 20 s)
    std::chrono::milliseconds keepalive{60000};
    std::chrono::milliseconds reconnectMin{500};
    std::chrono::milliseconds reconnectMax{5000};
    size_t maxReply = size_t{64} * 1024 * 1024;  // a runaway answer is an error, not memory
};

// Reads a vty password file: one line, mode 0600 or stricter (as --redis-password-file),
// and only bytes FRR's vty can take at its Password: prompt (printable ASCII, no space:
// FRR's `password WORD`). Returns the error, which never holds the password.
std::optional<std::string> readVtyPasswordFile(const std::string& path, std::string& password);

// Why `options` cannot work (bad address, no password, zero timeouts), or nullopt.
std::optional<std::string> checkVtyTcpOptions(const VtyTcpOptions& options);

// Throws std::invalid_argument with checkVtyTcpOptions' text. Connects on first use (or on
// watchRestarts). setZebraSocket is ignored: zebra is reached at its port.
std::unique_ptr<Channel> makeVtyTcpFrr(boost::asio::io_context& io, const VtyTcpOptions& options);

}  // namespace twinrail::frr
