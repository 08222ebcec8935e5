#include "counter_source.h"

#include <algorithm>

#include "twinrail/netlink/link_stats.h"

namespace twinrail::pathqd {
namespace {
constexpr auto kSpeedRefresh = std::chrono::seconds(5);
constexpr int kQueuesPerPort = 8;

uint64_t toU64(const redis::Value& v) {
    if (v.type == redis::Value::Type::Integer) return static_cast<uint64_t>(v.integer);
    if (v.type != redis::Value::Type::String) return 0;
    return std::strtoull(v.str.c_str(), nullptr, 10);
}
}  // namespace

void LinuxCounterSource::poll(const std::vector<std::string>& ports,
                              std::function<void(CounterMap, std::string)> done) {
    CounterMap out;
    try {
        std::map<int, netlink::QdiscStats> qdiscs;
        for (auto& q : netlink::dumpRootQdiscs()) qdiscs[q.ifindex] = q;
        auto now = std::chrono::steady_clock::now();
        for (const auto& link : netlink::dumpLinkCounters()) {
            if (std::find(ports.begin(), ports.end(), link.name) == ports.end()) continue;
            PortCounters& p = out[link.name];
            p.ifindex = link.ifindex;
            p.up = link.operUp;
            p.counters = {link.txBytes, link.txPackets, link.txDropped};
            auto& speed = speeds_[link.name];
            if (speed.second + kSpeedRefresh < now ||
                speed.second.time_since_epoch().count() == 0) {
                auto bps = netlink::linkSpeedBps(link.name);
                speed = {bps ? std::optional<double>(static_cast<double>(*bps)) : std::nullopt,
                         now};
            }
            p.capacityBps = speed.first;
            if (auto q = qdiscs.find(link.ifindex); q != qdiscs.end()) {
                p.queueBytes = static_cast<double>(q->second.backlogBytes);
                p.counters.drops += q->second.drops;
                if (q->second.rateBps) {
                    double shaped = static_cast<double>(*q->second.rateBps);
                    p.capacityBps = p.capacityBps ? std::min(*p.capacityBps, shaped) : shaped;
                }
            }
        }
    } catch (const std::exception& e) {
        return done({}, e.what());
    }
    done(std::move(out), "");
}

SonicCounterSource::SonicCounterSource(boost::asio::io_context& io, const redis::Endpoint& counters,
                                       int countersDb, const redis::Endpoint& appl, int applDb)
    : counters_(io, counters, countersDb, "COUNTERS_DB"), appl_(io, appl, applDb, "APPL_DB") {
    counters_.start();
    appl_.start();
}

void SonicCounterSource::resolve(const std::string& port) {
    counters_.command({"HGET", "COUNTERS_PORT_NAME_MAP", port},
                      [this, port](const redis::Value& v) {
                          if (v.type == redis::Value::Type::String) oids_[port].port = v.str;
                      });
    std::vector<std::string> args{"HMGET", "COUNTERS_QUEUE_NAME_MAP"};
    for (int q = 0; q < kQueuesPerPort; ++q) args.push_back(port + ":" + std::to_string(q));
    counters_.command(args, [this, port](const redis::Value& v) {
        auto& queues = oids_[port].queues;
        queues.clear();
        for (const auto& e : v.elements)
            if (e.type == redis::Value::Type::String) queues.push_back(e.str);
    });
}

void SonicCounterSource::poll(const std::vector<std::string>& ports,
                              std::function<void(CounterMap, std::string)> done) {
    if (!counters_.connected() || !appl_.connected())
        return done({}, "COUNTERS_DB or APPL_DB not connected");
    if (busy_) return done({}, "previous COUNTERS_DB read still running");
    struct Read {
        CounterMap out;
        int outstanding = 0;
        std::function<void(CounterMap, std::string)> done;
    };
    auto read = std::make_shared<Read>();
    read->done = std::move(done);
    busy_ = true;
    auto finish = [this, read] {
        if (--read->outstanding > 0) return;
        busy_ = false;
        read->done(std::move(read->out), "");
    };
    for (const auto& port : ports) {
        auto it = oids_.find(port);
        if (it == oids_.end() || it->second.port.empty()) {
            resolve(port);  // ready from the next period on
            continue;
        }
        read->outstanding += 2 + static_cast<int>(it->second.queues.size());
        counters_.command(
            {"HMGET", "COUNTERS:" + it->second.port, "SAI_PORT_STAT_IF_OUT_OCTETS",
             "SAI_PORT_STAT_IF_OUT_UCAST_PKTS", "SAI_PORT_STAT_IF_OUT_DISCARDS"},
            [read, port, finish](const redis::Value& v) {
                if (v.elements.size() == 3 && v.elements[0].type == redis::Value::Type::String) {
                    auto& c = read->out[port].counters;
                    c.txBytes = toU64(v.elements[0]);
                    c.txPackets = toU64(v.elements[1]);
                    c.drops = toU64(v.elements[2]);
                }
                finish();
            });
        for (const auto& q : it->second.queues) {
            counters_.command({"HGET", "COUNTERS:" + q, "SAI_QUEUE_STAT_CURR_OCCUPANCY_BYTES"},
                              [read, port, finish](const redis::Value& v) {
                                  read->out[port].queueBytes += static_cast<double>(toU64(v));
                                  finish();
                              });
        }
        appl_.command({"HMGET", "PORT_TABLE:" + port, "oper_status", "speed"},
                      [read, port, finish](const redis::Value& v) {
                          auto& p = read->out[port];
                          if (v.elements.size() == 2) {
                              p.up = v.elements[0].str == "up";
                              if (uint64_t mbps = toU64(v.elements[1]); mbps > 0)
                                  p.capacityBps = static_cast<double>(mbps) * 1e6;
                          }
                          finish();
                      });
    }
    if (read->outstanding == 0) {
        busy_ = false;
        read->done({}, "");
    }
}

}  // namespace twinrail::pathqd
