#include "edges.h"

#include "twinrail/common/subprocess.h"

namespace twinrail::planesteer {
namespace {
// tc answers within milliseconds; 5 s means it is stuck.
constexpr auto kTcTimeout = std::chrono::seconds(5);
}  // namespace

Edges realEdges(boost::asio::io_context& io) {
    Edges e;
    e.kernel = [&io](netlink::NetlinkObserver& observer) {
        return std::make_unique<netlink::NetlinkMonitor>(io, observer);
    };
    e.packetPort = [&io](const std::string& port, PacketPort::Handler onFrame) {
        return std::make_unique<SocketPacketPort>(io, port, std::move(onFrame));
    };
    e.tc = std::make_unique<ProcessRunner>(io, ProcessOptions{{Capability::NetAdmin}}, kTcTimeout);
    // Reading filters needs no capability.
    e.tcShow = [&io](std::vector<std::string> argv,
                     std::function<void(int exitCode, std::string out)> done) {
        runProcess(io, std::move(argv), kTcTimeout,
                   [done = std::move(done)](const ProcessResult& r) {
                       if (r.exitCode == 0 && !r.timedOut) return done(0, r.out);
                       done(r.timedOut ? -1 : r.exitCode, r.timedOut ? "timed out" : r.err);
                   });
    };
    e.now = [] { return Clock::now(); };
    e.notices = [&io](std::optional<IpAddr> bind, uint16_t port, fnn::DatagramHandler handler) {
        return std::make_unique<fnn::UdpNoticeSocket>(io, bind, port, std::move(handler));
    };
    e.wallNs = fnn::wallClockNs;
    return e;
}

}  // namespace twinrail::planesteer
