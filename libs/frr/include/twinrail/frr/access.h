// How a daemon reaches FRR, as its command line says: vtysh and FRR's unix sockets on this
// host (Linux, or FRR in the same container), or vtysh in FRR's own container through the
// Docker Engine API (SONiC, where FRR runs in the bgp container; docker_channel.h says why
// that way in).
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "twinrail/frr/channel.h"
#include "twinrail/frr/docker_channel.h"
#include "twinrail/frr/vtysh.h"

namespace twinrail::frr {

struct Access {
    enum class Kind { Vtysh, Docker };
    Kind kind = Kind::Vtysh;
    VtyshOptions vtysh;
    DockerFrrOptions docker;
};

// "vtysh" or "docker".
std::optional<Access::Kind> parseAccessKind(const std::string& name);

// Why `access` cannot work (a container name Docker refuses, a relative socket), or nullopt.
std::optional<std::string> checkAccess(const Access& access);

// The channel `access` names. `zebraTimeout` bounds each zebra vty command of the vtysh
// channel (the Docker channel has its own, in DockerFrrOptions). Throws std::invalid_argument
// with checkAccess's text.
std::unique_ptr<Channel> makeFrrChannel(boost::asio::io_context& io, const Access& access,
                                        std::chrono::milliseconds zebraTimeout);

}  // namespace twinrail::frr
