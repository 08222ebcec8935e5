// How a daemon reaches FRR, as its command line says: vtysh and FRR's unix sockets on this
// host (Linux, or FRR in the same container), or the daemons' vty TCP ports (SONiC, where
// FRR runs in the bgp container; vty_tcp_channel.h says why that way in).
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "twinrail/frr/channel.h"
#include "twinrail/frr/vty_tcp_channel.h"
#include "twinrail/frr/vtysh.h"

namespace twinrail::frr {

struct Access {
    enum class Kind { Vtysh, VtyTcp };
    Kind kind = Kind::Vtysh;
    VtyshOptions vtysh;
    VtyTcpOptions tcp;
};

// "vtysh" or "vty-tcp".
std::optional<Access::Kind> parseAccessKind(const std::string& name);

// Why `access` cannot work (vty-tcp without a password, a bad address), or nullopt.
std::optional<std::string> checkAccess(const Access& access);

// The channel `access` names. `zebraTimeout` bounds each zebra vty command of the vtysh
// channel (the TCP channel has its own, in VtyTcpOptions). Throws std::invalid_argument
// with checkAccess's text.
std::unique_ptr<Channel> makeFrrChannel(boost::asio::io_context& io, const Access& access,
                                        std::chrono::milliseconds zebraTimeout);

}  // namespace twinrail::frr
