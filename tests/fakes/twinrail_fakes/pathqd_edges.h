// Fakes of pathqd's own edges (daemons/pathqd/edges.h): a counter source whose ports a
// test sets (rates become byte counters that grow with the time between reads), the link
// probes and the INT collector with what each port has heard, a route writer that lands
// in a FakeRouteTable the test keeps, and the weights in force as a test sets them (the
// weight audit's source). Answers are posted on the io_context, as the real edges' are.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "counter_source.h"
#include "forwarding_weights.h"
#include "int_collector.h"
#include "link_probe.h"
#include "twinrail/netlink/route_table.h"

namespace twinrail::fakes {

class FakeCounterSource final : public pathqd::CounterSource {
  public:
    struct Port {
        int ifindex = 0;
        bool up = true;
        double capacityBps = 100e6;
        double txBps = 0;  // the egress rate from now on
        double queueBytes = 0;
        std::optional<double> ecnShare =
            std::nullopt;       // of the packets sent from now on, marked CE
        double pauseRxPps = 0;  // pause frames received per second from now on
        bool pfcStorm = false;
    };
    explicit FakeCounterSource(boost::asio::io_context& io) : io_(io) {}

    void poll(const std::vector<std::string>& names,
              std::function<void(pathqd::CounterMap, std::string)> done) override {
        ++polls;
        pathqd::CounterMap out;
        auto now = quality::Clock::now();
        for (const auto& name : names) {
            auto it = ports.find(name);
            if (!error.empty() || it == ports.end()) continue;
            const Port& p = it->second;
            Sent& s = sent_[name];
            double dt = s.at ? std::chrono::duration<double>(now - *s.at).count() : 0.0;
            s.bytes += p.txBps / 8 * dt;
            s.marked += p.ecnShare.value_or(0) * p.txBps / 8 / 1000 * dt;
            s.pauses += p.pauseRxPps * dt;
            s.at = now;
            pathqd::PortCounters pc;
            pc.ifindex = p.ifindex;
            pc.up = p.up;
            pc.counters.txBytes = static_cast<uint64_t>(s.bytes);
            pc.counters.txPackets = static_cast<uint64_t>(s.bytes / 1000);
            pc.sampledAt = now;
            pc.queueBytes = p.queueBytes;
            pc.queueSource = "qdisc";
            pc.capacityBps = p.capacityBps;
            pc.counters.pauseRx = static_cast<uint64_t>(s.pauses);
            if (p.ecnShare) {
                pc.ecn =
                    quality::MarkCounters{static_cast<uint64_t>(s.marked), pc.counters.txPackets};
                pc.ecnSource = "qdisc";
            }
            pc.pfcStorm = p.pfcStorm;
            out.emplace(name, pc);
        }
        boost::asio::post(
            io_, [done = std::move(done), out = std::move(out), e = error] { done(out, e); });
    }

    std::map<std::string, Port> ports;  // absent: the source cannot see the port
    std::string error;                  // set: every read fails whole
    size_t polls = 0;

  private:
    struct Sent {
        double bytes = 0;
        double marked = 0;
        double pauses = 0;
        std::optional<quality::Clock::time_point> at;
    };
    boost::asio::io_context& io_;
    std::map<std::string, Sent> sent_;
};

// What each port's neighbour has told us; the probes pathqd sends, with the level each
// carried.
class FakeLinkProbes final : public pathqd::LinkProbes {
  public:
    explicit FakeLinkProbes(uint16_t udpPort) : port(udpPort) {}
    void start() override {
        if (failStart) throw std::runtime_error("probe socket: cannot bind (fake)");
        started = true;
    }
    void probe(int ifindex, uint8_t ourLevel) override {
        sent[ifindex] = ourLevel;
        ++stats_.sent;
    }
    const PortView* view(int ifindex) const override {
        auto it = views.find(ifindex);
        return it == views.end() ? nullptr : &it->second;
    }
    const pathqd::ProbeStats& stats() const override { return stats_; }

    uint16_t port;
    bool failStart = false;
    bool started = false;
    std::map<int, PortView> views;
    std::map<int, uint8_t> sent;  // ifindex -> the level the last probe carried

  private:
    pathqd::ProbeStats stats_;
};

// The latest INT observation per port, as a test sets it. keepFresh: each observation
// reads as just received.
class FakeIntReports final : public pathqd::IntReports {
  public:
    FakeIntReports(uint16_t udpPort, pathqd::IntMapping m, pathqd::IntTrust t)
        : port(udpPort), mapping(std::move(m)), trust(std::move(t)) {}
    void start() override { started = true; }
    void setMapping(pathqd::IntMapping m) override { mapping = std::move(m); }
    void setTrust(pathqd::IntTrust t) override { trust = std::move(t); }
    const pathqd::IntObservation* latest(const std::string& name) const override {
        auto it = observations.find(name);
        if (it == observations.end()) return nullptr;
        if (keepFresh) it->second.at = std::chrono::steady_clock::now();
        return &it->second;
    }
    const pathqd::IntStats& stats() const override { return stats_; }

    uint16_t port;
    pathqd::IntMapping mapping;
    pathqd::IntTrust trust;
    bool started = false;
    bool keepFresh = true;
    mutable std::map<std::string, pathqd::IntObservation> observations;

  private:
    pathqd::IntStats stats_;
};

// A route writer over a table the test owns (the daemon makes one per use).
class RouteWriterInto final : public netlink::RouteProgrammer {
  public:
    explicit RouteWriterInto(netlink::RouteProgrammer& table) : table_(table) {}
    void submit(netlink::RouteOp op, const netlink::HostRoute& route) override {
        table_.submit(op, route);
    }
    std::vector<netlink::RouteResult> flush() override { return table_.flush(); }
    std::vector<netlink::HostRoute> dump(int family, uint32_t table, uint8_t protocol) override {
        return table_.dump(family, table, protocol);
    }

  private:
    netlink::RouteProgrammer& table_;
};

// The weight audit's source: the routes (or the error) a test sets, answered on the loop;
// repairable says whether the auditor may delete diverged routes from the kernel.
class FakeForwardingWeights final : public pathqd::ForwardingWeights {
  public:
    explicit FakeForwardingWeights(boost::asio::io_context& io) : io_(io) {}
    void read(Done done) override {
        ++reads;
        boost::asio::post(io_, [done = std::move(done), r = result, e = error] { done(r, e); });
    }
    pathqd::PortWeights frrWeightsOf(const std::vector<pathqd::BgpPath>& paths) const override {
        return pathqd::impliedWeights(paths);
    }
    bool kernelRepairable() const override { return repairable; }
    const char* name() const override { return "fake"; }

    pathqd::ForwardedRead result;
    std::string error;  // set: every read fails
    bool repairable = false;
    size_t reads = 0;

  private:
    boost::asio::io_context& io_;
};

}  // namespace twinrail::fakes
