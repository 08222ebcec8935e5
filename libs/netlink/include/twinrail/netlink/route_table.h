// Programs host routes into one kernel table. Operations are queued and sent in large
// multi-message datagrams; the kernel acks each one, and failures come back per route.
// RouteDumper reads host routes without blocking the loop.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "twinrail/netlink/types.h"

struct nl_sock;

namespace twinrail::netlink {
namespace detail {
class DumpQueue;
}  // namespace detail

enum class RouteOp { Replace, Remove };

struct RouteResult {
    RouteOp op;
    HostRoute route;
    int error = 0;  // errno from the kernel, 0 on success
};

// The narrow interface the daemon uses; tests put an in-memory fake behind it.
class RouteProgrammer {
  public:
    virtual ~RouteProgrammer() = default;
    virtual void submit(RouteOp op, const HostRoute& route) = 0;
    virtual std::vector<RouteResult> flush() = 0;
    // Host routes (/32, /128) of one family in `table` written with `protocol`. It waits
    // for the kernel: for start-up, before the loop runs (RouteDumper once it does).
    virtual std::vector<HostRoute> dump(int family, uint32_t table, uint8_t protocol) = 0;
};

class KernelRouteTable final : public RouteProgrammer {
  public:
    KernelRouteTable();
    ~KernelRouteTable() override;
    KernelRouteTable(const KernelRouteTable&) = delete;
    KernelRouteTable& operator=(const KernelRouteTable&) = delete;

    void submit(RouteOp op, const HostRoute& route) override;
    std::vector<RouteResult> flush() override;
    std::vector<HostRoute> dump(int family, uint32_t table, uint8_t protocol) override;

  private:
    // Messages are encoded back to back into one buffer; a chunk is a slice of it.
    struct Pending {
        RouteOp op;
        HostRoute route;
        uint32_t seq;
        size_t offset;
        size_t length;
    };
    void sendChunk(size_t first, size_t last, std::vector<RouteResult>& results);
    void encode(RouteOp op, const HostRoute& route, uint32_t seq);

    nl_sock* sock_ = nullptr;
    std::vector<Pending> pending_;
    std::vector<uint8_t> buffer_;
    std::vector<uint8_t> ackBuffer_;
    uint32_t nextSeq_ = 1;
};

// Host routes read on the io_context: the dump is sent at once, its reply read as it comes,
// and the answer given later from the loop, never inside dump(). A dump the kernel flags
// as interrupted (NLM_F_DUMP_INTR: the table changed under it) is read again, a few times.
class RouteDumper {
  public:
    // error: 0, or an errno (EINTR: every try was interrupted; routes holds the last one's).
    using Done = std::function<void(int error, std::vector<HostRoute> routes)>;
    virtual ~RouteDumper() = default;
    // The host routes (/32, /128) of one family in `table` written with `protocol`, as
    // RouteProgrammer::dump finds them. Dumps run one at a time, in the order asked.
    virtual void dump(int family, uint32_t table, uint8_t protocol, Done done) = 0;
};
using RouteDumperFactory = std::function<std::unique_ptr<RouteDumper>()>;

class KernelRouteDumper final : public RouteDumper {
  public:
    explicit KernelRouteDumper(boost::asio::io_context& io);
    ~KernelRouteDumper() override;
    KernelRouteDumper(const KernelRouteDumper&) = delete;
    KernelRouteDumper& operator=(const KernelRouteDumper&) = delete;

    void dump(int family, uint32_t table, uint8_t protocol, Done done) override;

  private:
    std::unique_ptr<detail::DumpQueue> dumps_;
};

}  // namespace twinrail::netlink
