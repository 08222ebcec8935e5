#include "int_collector.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "twinrail/common/log.h"
#include "twinrail/telemetry/int_report.h"

namespace twinrail::pathqd {

IntCollector::IntCollector(boost::asio::io_context& io, uint16_t port, IntMapping mapping)
    : port_(port), mapping_(std::move(mapping)) {
    fd_ = ::socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error(std::string("INT socket: ") + std::strerror(errno));
    descriptor_ = std::make_unique<boost::asio::posix::stream_descriptor>(io, fd_);
}

IntCollector::~IntCollector() {
    boost::system::error_code ignored;
    if (descriptor_) descriptor_->close(ignored);
}

void IntCollector::start() {
    int zero = 0;
    setsockopt(fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // IPv4 reports too
    sockaddr_in6 addr{};
    addr.sin6_family = AF_INET6;
    addr.sin6_port = htons(port_);
    addr.sin6_addr = in6addr_any;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0) {
        throw std::runtime_error("INT collector: cannot bind UDP port " + std::to_string(port_) +
                                 ": " + std::strerror(errno));
    }
    armRead();
}

const IntObservation* IntCollector::latest(const std::string& port) const {
    auto it = latest_.find(port);
    return it == latest_.end() ? nullptr : &it->second;
}

void IntCollector::armRead() {
    descriptor_->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                            [this](const boost::system::error_code& ec) {
                                if (ec) return;
                                receive();
                                armRead();
                            });
}

void IntCollector::receive() {
    // One byte more than the largest report we accept, so MSG_TRUNC shows oversize.
    std::array<uint8_t, telemetry::kMaxReportBytes + 1> buf{};
    for (int i = 0; i < 256; ++i) {
        ssize_t n = ::recv(fd_, buf.data(), buf.size(), MSG_TRUNC);
        if (n < 0) return;
        size_t len = static_cast<size_t>(n);
        if (len > buf.size()) {  // truncated by the kernel: the parser sees the full size
            ++stats_.packets;
            ++stats_.bad;
            continue;
        }
        handle(std::span<const uint8_t>(buf.data(), len));
    }
}

void IntCollector::handle(std::span<const uint8_t> datagram) {
    ++stats_.packets;
    auto parsed = telemetry::parseTelemetryReport(datagram);
    auto now = std::chrono::steady_clock::now();
    if (const auto* err = std::get_if<telemetry::ParseError>(&parsed)) {
        ++stats_.bad;
        if (now - lastWarning_ > std::chrono::seconds(1)) {
            lastWarning_ = now;
            log::warning("INT: dropped a bad report (", stats_.bad, " so far): ", err->str());
        }
        return;
    }
    for (const auto& report : std::get<telemetry::IntPacket>(parsed).reports) {
        if (report.repType != telemetry::kRepTypeInt) continue;  // no metadata to map
        const telemetry::IntHop& hop = report.metadata;          // nodeId: the group header's
        ++stats_.hops;
        if (mapping_.nodeId && hop.nodeId != mapping_.nodeId) {
            ++stats_.unmapped;
            continue;
        }
        auto port = hop.egressPort ? mapping_.ports.find(*hop.egressPort) : mapping_.ports.end();
        if (port == mapping_.ports.end()) {
            ++stats_.unmapped;
            continue;
        }
        IntObservation& o = latest_[port->second];
        o.at = now;
        if (hop.hopLatency) o.latencySeconds = *hop.hopLatency * mapping_.latencyUnitNs / 1e9;
        if (hop.queueOccupancy) o.queueBytes = *hop.queueOccupancy * mapping_.queueUnitBytes;
        if (hop.egressTxUtil) o.utilFraction = *hop.egressTxUtil / mapping_.utilScale;
    }
}

}  // namespace twinrail::pathqd
