// FRR in another container, reached as SONiC reaches it: vtysh run inside the container
// through the Docker Engine API (SONiC's host `vtysh` is `docker exec -i bgp vtysh`). It
// works on every SONiC release twinrail supports: from 202505 on bgpd starts with `-P 0`
// (no vty TCP port), and the split-unified frr.conf sets no vty password, so FRR's own TCP
// way in is closed there; the unix sockets vtysh uses are inside the container.
//
// What it costs: the Docker socket is root on the host, which the package's container
// already is (it runs privileged: the manifest has no capability list); each command is
// one exec (a vtysh process in the container, tens of ms), so it is for configuration and
// state read every few seconds, never per-event work. A restart of FRR is a restart of the
// container on SONiC (zebra and bgpd are critical processes: supervisor-proc-exit-listener
// stops the container), which Docker's event stream reports.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "twinrail/frr/channel.h"

namespace twinrail::frr {

struct DockerFrrOptions {
    std::string container = "bgp";  // docker-fpm-frr's container (rules/docker-fpm-frr.mk)
    std::string socket = "/var/run/docker.sock";
    std::chrono::milliseconds timeout{20000};  // each command, as vtysh's own 20 s
};

// Why `options` cannot work (a container name Docker refuses, a relative socket path), or
// nothing.
std::optional<std::string> checkDockerFrrOptions(const DockerFrrOptions& options);

// Throws std::invalid_argument with checkDockerFrrOptions' text. setZebraSocket is ignored:
// zebra is reached through vtysh -d zebra in the container.
std::unique_ptr<Channel> makeDockerFrr(boost::asio::io_context& io,
                                       const DockerFrrOptions& options);

}  // namespace twinrail::frr
