#include "edges.h"

#include <net/if.h>

#include <stdexcept>

#include "sonic_counter_source.h"

namespace twinrail::pathqd {
namespace {
// pathqd reads zebra's vty only through show commands; 5 s means it is stuck.
constexpr auto kZebraTimeout = std::chrono::seconds(5);
}  // namespace

std::string kernelIfName(int ifindex) {
    char buf[IF_NAMESIZE] = {};
    return if_indextoname(static_cast<unsigned>(ifindex), buf) != nullptr
               ? std::string(buf)
               : "if" + std::to_string(ifindex);
}

Edges realEdges(boost::asio::io_context& io, const RealEdgeOptions& options) {
    Edges e;
    if (options.source == CounterKind::Linux) {
        e.counters = std::make_unique<LinuxCounterSource>(io);
    } else {
        if (!options.countersDb || !options.applDb || !options.portStateDb)
            throw std::invalid_argument("source sonic needs COUNTERS_DB, APPL_DB and STATE_DB");
        e.counters = std::make_unique<SonicCounterSource>(io, *options.countersDb, *options.applDb,
                                                          *options.portStateDb);
    }
    e.frr = frr::makeFrrChannel(io, options.frr, kZebraTimeout);
    if (options.stateDb) {
        e.stateDb =
            std::make_unique<redis::Client>(io, *options.stateDb, options.stateDbId, "STATE_DB");
    }
    e.routeFeed = [&io](std::set<uint32_t> tables, netlink::RouteFeed::OnChange onChange) {
        return std::make_unique<netlink::RouteWatch>(io, std::move(tables), std::move(onChange));
    };
    e.probes = [&io](uint16_t port) { return std::make_unique<LinkProber>(io, port); };
    e.intReports = [&io](uint16_t port, IntMapping mapping, IntTrust trust) {
        return std::make_unique<IntCollector>(io, port, std::move(mapping), std::move(trust));
    };
    auto client = [&io](const std::optional<redis::DbLocation>& at, const char* name) {
        return at ? std::make_unique<redis::Client>(io, at->endpoint, at->id, name) : nullptr;
    };
    e.applDb = client(options.weightsApplDb, "APPL_DB");
    e.asicDb = client(options.asicDb, "ASIC_DB");
    e.countersDb = client(options.weightsCountersDb, "COUNTERS_DB");
    e.configDb = client(options.configDb, "CONFIG_DB");
    e.ifName = kernelIfName;
    e.routeWriter = [] { return std::make_unique<netlink::KernelRouteTable>(); };
    return e;
}

}  // namespace twinrail::pathqd
