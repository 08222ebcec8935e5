// Everything planesteer reads from or writes to outside its own memory, as interfaces
// that main.cpp passes in: the real ones (realEdges) on a server, fakes (tests/fakes) in
// unit tests of the daemon's orchestration. Nothing in Daemon opens a socket, runs a
// program or reads the time except through these.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>

#include "arp_prober.h"
#include "packet_port.h"
#include "tc_pins.h"
#include "twinrail/common/command_runner.h"
#include "twinrail/fnn/udp_socket.h"
#include "twinrail/netlink/monitor.h"

namespace twinrail::planesteer {

struct Edges {
    // Links (carrier), addresses and neighbors (on-link peers, the gateway), with snapshots.
    netlink::KernelEventsFactory kernel;
    // Each bond port's packet socket: ARP and echo probes out, answers and samples in.
    PacketPortFactory packetPort;
    // tc, for the pins: one command at a time per bond, never waited for.
    std::unique_ptr<CommandRunner> tc;
    // tc's listing at start (`tc -j filter show`): CommandRunner hands back no output.
    OutputReader tcShow;
    // The time the policy, the peer budgets and the answer windows see. Probe rounds are
    // paced by the loop's own timer.
    Now now;
    // Fast notices from the planes' switches (twinrail/fnn/udp_socket.h), on every local
    // address at the config's notice_port; and the wall clock (ns since the epoch) that
    // their freshness is judged by. Neither is needed while notices are off.
    fnn::NoticeSocketFactory notices;
    std::function<uint64_t()> wallNs;
};

// The kernel, packet sockets, tc and steady_clock of the machine planesteer runs on.
Edges realEdges(boost::asio::io_context& io);

}  // namespace twinrail::planesteer
