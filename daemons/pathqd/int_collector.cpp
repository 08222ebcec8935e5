#include "int_collector.h"

#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "twinrail/common/log.h"
#include "twinrail/telemetry/int_report.h"
#include "udp_receive.h"

namespace twinrail::pathqd {
namespace {

constexpr auto kRefusalLogPeriod = std::chrono::seconds(10);
// An interface that is deleted and created again gets a new ifindex: look the name up
// again when a datagram comes from another one, but not for every datagram of a flood.
constexpr auto kResolvePeriod = std::chrono::seconds(1);

const char* refusalReason(IntVerdict v) {
    return v == IntVerdict::RefusedInterface ? "received on another interface"
                                             : "source not in int_sources";
}

}  // namespace

IpAddr unmapV4(const IpAddr& source) {
    static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (source.isV6() && std::memcmp(source.data(), kMapped, sizeof kMapped) == 0)
        return IpAddr::v4(source.data() + sizeof kMapped);
    return source;
}

bool intSourceAllowed(const std::vector<IpPrefix>& sources, const IpAddr& source) {
    IpAddr sender = unmapV4(source);
    if (sender.family() == 0) return false;  // no address: nothing to trust
    for (const auto& p : sources)
        if (p.contains(sender)) return true;  // contains() compares families first
    return false;
}

IntCollector::IntCollector(boost::asio::io_context& io, uint16_t port, IntMapping mapping,
                           IntTrust trust)
    : port_(port), mapping_(std::move(mapping)), trust_(std::move(trust)) {
    fd_ = ::socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error(std::string("INT socket: ") + std::strerror(errno));
    descriptor_ = std::make_unique<boost::asio::posix::stream_descriptor>(io, fd_);
}

IntCollector::~IntCollector() {
    boost::system::error_code ignored;
    if (descriptor_) descriptor_->close(ignored);
}

void IntCollector::start() {
    int zero = 0, one = 1;
    setsockopt(fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // IPv4 reports too
    // The arrival interface of each datagram, IPv4 ones included (the kernel fills
    // IPV6_PKTINFO for them on a dual-stack socket), for int_interface.
    if (setsockopt(fd_, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one) < 0 &&
        !trust_.interface.empty()) {
        throw std::runtime_error(std::string("INT collector: IPV6_RECVPKTINFO: ") +
                                 std::strerror(errno));
    }
    sockaddr_in6 addr{};
    addr.sin6_family = AF_INET6;
    addr.sin6_port = htons(port_);
    addr.sin6_addr = in6addr_any;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0) {
        throw std::runtime_error("INT collector: cannot bind UDP port " + std::to_string(port_) +
                                 ": " + std::strerror(errno));
    }
    std::string from;
    for (const auto& p : trust_.sources) from += (from.empty() ? "" : ",") + p.str();
    log::notice("INT collector on UDP port ", boundPort(), ": reports from ",
                from.empty() ? "nobody" : from,
                trust_.interface.empty() ? "" : " received on " + trust_.interface, " only");
    armRead();
}

uint16_t IntCollector::boundPort() const {
    sockaddr_in6 addr{};
    socklen_t len = sizeof addr;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) < 0) return 0;
    return ntohs(addr.sin6_port);
}

void IntCollector::setTrust(IntTrust trust) {
    trust_ = std::move(trust);
    trustIfindex_ = 0;
    trustResolvedAt_ = {};
}

IntVerdict IntCollector::admit(const IpAddr& source, int ifindex) {
    IntVerdict verdict = IntVerdict::Accept;
    auto now = std::chrono::steady_clock::now();
    if (!intSourceAllowed(trust_.sources, source)) {
        verdict = IntVerdict::RefusedSource;
    } else if (!trust_.interface.empty()) {
        if (ifindex != trustIfindex_ && now - trustResolvedAt_ >= kResolvePeriod) {
            trustResolvedAt_ = now;
            trustIfindex_ = static_cast<int>(::if_nametoindex(trust_.interface.c_str()));
        }
        // 0 on either side (no ancillary data, no such interface) never matches.
        if (ifindex == 0 || ifindex != trustIfindex_) verdict = IntVerdict::RefusedInterface;
    }
    if (verdict == IntVerdict::Accept) return verdict;
    ++stats_.refused;
    if (verdict == IntVerdict::RefusedInterface) ++stats_.refusedInterface;
    if (now - lastRefusalLog_ >= kRefusalLogPeriod) {
        lastRefusalLog_ = now;
        log::warning("INT: refused a datagram from ", unmapV4(source).str(), " (ifindex ", ifindex,
                     ", ", refusalReason(verdict), "; ", stats_.refused, " refused so far)");
    }
    return verdict;
}

void IntCollector::handleFrom(const IpAddr& source, int ifindex,
                              std::span<const uint8_t> datagram) {
    if (admit(source, ifindex) == IntVerdict::Accept) handle(datagram);
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
        auto d = receiveDatagram(fd_, buf);
        if (!d) return;
        // The sender as the kernel received it; anything else (no address) is refused by
        // admit().
        IpAddr source = d->hasSource ? IpAddr::v6(d->from.sin6_addr.s6_addr) : IpAddr{};
        const int ifindex = d->ifindex;
        if (admit(source, ifindex) != IntVerdict::Accept) continue;  // before any parsing
        const size_t len = d->length;
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
